//! SERVER spans on rmcp's streamable HTTP server, with mcp-otel's public API only.
//!
//! `StreamableHttpService::new` takes a `ServerHandler` (rmcp 3.1 to 3.11), not any `Service`, so
//! it cannot serve [`mcp_otel::Instrumented`]. It hands each session's transport to its
//! `SessionManager`'s `create_session`, though: [`Sessions`] wraps the application's session
//! manager, serves every session's transport itself with the instrumented handler (and
//! `mcp_otel::transport` around the transport: a client's cancel read off the wire), and gives
//! rmcp's own session worker a transport with no message ([`Idle`]), which ends when the session
//! does. Every other call (routing each POST, GET and DELETE to its session, resuming streams)
//! goes to the application's manager unchanged.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
//! # use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
//! # #[derive(Clone)] struct Weather;
//! # impl rmcp::ServerHandler for Weather {}
//! let otel = mcp_otel::McpOtel::global().clone();
//! let sessions = mcp_otel_http::Sessions::new(otel, LocalSessionManager::default(), || Weather);
//! let config = StreamableHttpServerConfig::default();
//! let service = StreamableHttpService::new(|| Ok(Weather), Arc::new(sessions), config);
//! ```
//!
//! What it does not cover: requests rmcp serves without a session (its stateless mode, and every
//! request of a 2026-07-28 client: `server/discover` and what follows) go to the service rmcp's
//! factory makes; `mcp_otel::McpOtel::sessionless` (feature `streamable-http-server`) traces those.
//! rmcp still makes one handler per session with its factory (it sits idle: the session is served
//! by the one `Sessions` makes), and logs "Failed to serve session" at error level when a session
//! ends, as its worker never received an `initialize`.
//! rmcp's session store cannot restore a session through it: a restore waits for the handshake of
//! rmcp's own worker, which stays idle (read in rmcp 3.11's source, not run).

use std::sync::Arc;

use futures::Stream;
use mcp_otel::McpOtel;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage, serve_server_with_ct};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};
use rmcp::{RoleServer, ServerHandler};
use tokio_util::sync::{CancellationToken, DropGuard};

/// A session manager whose sessions are served by the instrumented handler: `inner` (the
/// application's manager) does everything else.
pub struct Sessions<M, F> {
    otel: McpOtel,
    inner: M,
    handler: F,
}

impl<M, F, H> Sessions<M, F>
where
    M: SessionManager,
    F: Fn() -> H + Send + Sync + 'static,
    H: ServerHandler + Send + Sync + 'static,
{
    /// Sessions of `inner`, each served by a new `handler()` wrapped by `otel`.
    pub fn new(otel: McpOtel, inner: M, handler: F) -> Self {
        Self { otel, inner, handler }
    }

    /// Serves the session's `transport` with the instrumented handler, in a task of its own: the
    /// transport rmcp's worker is given instead, which ends when that task does.
    fn serve(&self, transport: M::Transport) -> Idle {
        let (ended, stop) = (CancellationToken::new(), CancellationToken::new());
        let guard = ended.clone().drop_guard();
        let service = self.otel.service((self.handler)());
        let session = stop.clone();
        tokio::spawn(async move {
            let _ended = guard;
            if let Ok(running) = serve_server_with_ct(service, mcp_otel::transport(transport), session).await {
                let _ = running.waiting().await;
            }
        });
        Idle { ended, _stop: stop.drop_guard() }
    }
}

impl<M, F, H> SessionManager for Sessions<M, F>
where
    M: SessionManager,
    F: Fn() -> H + Send + Sync + 'static,
    H: ServerHandler + Send + Sync + 'static,
{
    type Error = M::Error;
    type Transport = Idle;

    async fn create_session(&self) -> Result<(SessionId, Idle), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        Ok((id, self.serve(transport)))
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Idle>, Self::Error> {
        Ok(match self.inner.restore_session(id).await? {
            RestoreOutcome::Restored(transport) => RestoreOutcome::Restored(self.serve(transport)),
            RestoreOutcome::AlreadyPresent => RestoreOutcome::AlreadyPresent,
            _ => RestoreOutcome::NotSupported,
        })
    }

    fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<ServerJsonRpcMessage, Self::Error>> + Send {
        self.inner.initialize_session(id, message)
    }

    fn has_session(&self, id: &SessionId) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        self.inner.has_session(id)
    }

    fn close_session(&self, id: &SessionId) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close_session(id)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.accept_message(id, message)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

/// The transport rmcp's own session worker gets: it never receives a message, and ends (`None`)
/// once the session [`Sessions`] serves has ended; rmcp's worker then closes the session. rmcp
/// drops it when it cancels its worker (the server's `cancellation_token`, at shutdown): that
/// cancels the session [`Sessions`] serves too, at once, as rmcp cancels the sessions it serves.
pub struct Idle {
    ended: CancellationToken,
    _stop: DropGuard,
}

impl Transport<RoleServer> for Idle {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.ended.cancelled().await;
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
