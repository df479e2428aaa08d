//! The front end of requests handled: [`Instrumented`], an rmcp [`Service`] around the
//! application's (a `ServerHandler`'s requests from its clients; a `ClientHandler`'s sampling,
//! elicitation and roots requests from its server). What rmcp's types say is read in `facts.rs`.
//!
//! What rmcp tells a service: the request (its `_meta` moved into the `RequestContext`), its
//! JSON-RPC id, and the request's cancellation token, which rmcp cancels when the client's
//! `notifications/cancelled` arrives (rmcp then drops the handler's answer) and again after every
//! answer. So the token is read the moment the handler returns: cancelled then, the client
//! cancelled the request (docs/rust.md says what a closed connection looks like).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use opentelemetry::KeyValue;
use opentelemetry::context::FutureExt;
use opentelemetry::trace::TraceContextExt;
use rmcp::model::{ErrorData, ProtocolVersion};
use rmcp::service::{NotificationContext, Peer, RequestContext, ServiceRole};
use rmcp::{RoleClient, RoleServer, Service};

use crate::attributes::{self, Request, Session};
use crate::facts::{Handles, http_session_id, notification_meta, requested_protocol, rpc_error};
use crate::lifecycle::{Shared, Side};
use crate::model::{self, ServerEnd, bounded};
use crate::semconv::{
    FREQUENT_NOTIFICATIONS, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, METHOD_ELICITATION_CREATE, METHOD_INITIALIZE,
};
use crate::wire::{Connection, Handling, Seen};

/// A service whose every handled request gets a SERVER span and a point
/// (`mcp_otel::service(handler).serve(transport)`).
pub struct Instrumented<S> {
    inner: S,
    shared: Arc<Shared>,
    // The session's attributes, made once its handshake is over (one service, one session).
    session: OnceLock<Session>,
}

impl<S> Instrumented<S> {
    pub(crate) const fn new(inner: S, shared: Arc<Shared>) -> Self {
        Self { inner, shared, session: OnceLock::new() }
    }

    /// The application's service.
    pub const fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S> Instrumented<S> {
    /// A notification received: a SERVER span around its handling, no outcome and no point
    /// (progress and log messages only when asked: they come by the hundred). Its parent is the
    /// context in its `_meta`.
    async fn notified<R: Handles>(
        &self,
        notification: R::PeerNot,
        context: NotificationContext<R>,
    ) -> Result<(), ErrorData>
    where
        S: Service<R>,
    {
        let shared = &self.shared;
        let method = R::notification(&notification);
        if FREQUENT_NOTIFICATIONS.contains(&method) && !shared.config.trace_progress_and_logs {
            return self.inner.handle_notification(notification, context).await;
        }
        let request = Request::new(method, None, None);
        let network = context.extensions.get::<Connection>().and_then(Connection::network_transport);
        let meta = notification_meta(&context);
        let session = self.session(&context.peer, false, requested_protocol(meta), network);
        let mut described = attributes::describe(request, &session, None, &shared.config, &shared.lifecycle.metrics);
        described.attributes.extend(session_id(&context.extensions, shared.config.max_name_length));
        let (parent, links) = shared.remote_parent(meta);
        let cx = shared.lifecycle.notification(Side::Server, &parent, described, links, None);
        let result = self.inner.handle_notification(notification, context).with_context(cx.clone()).await;
        cx.span().end();
        result
    }

    /// The session's attributes: made once the handshake named the protocol and the server, kept
    /// from then on. Before its answer, the handshake's version is the one the client asked for:
    /// none on its own span. A request that names its version in `_meta` (2026-07-28) has it.
    /// `network`: the connection's transport, when the wire knows it.
    fn session<R: Handles>(
        &self,
        peer: &Peer<R>,
        handshake: bool,
        requested: Option<&str>,
        network: Option<&'static str>,
    ) -> Cow<'_, Session>
    where
        S: Service<R>,
    {
        if let (Some(session), None) = (self.session.get(), requested) {
            return Cow::Borrowed(session);
        }
        let shared = &self.shared;
        let mut facts = R::session(&self.inner, peer);
        facts.network_transport = network;
        if let Some(version) = requested {
            // A 2026-07-28 request names its version itself: no handshake settled one.
            facts.protocol_version = Some(version.to_owned());
        } else if handshake {
            facts.protocol_version = None;
        }
        let complete = requested.is_none() && facts.protocol_version.is_some() && facts.server_name.is_some();
        let session = Session::new(&facts, &shared.config, &shared.lifecycle.metrics);
        if complete {
            return Cow::Borrowed(self.session.get_or_init(|| session));
        }
        Cow::Owned(session)
    }

    async fn handle<R: Handles>(&self, request: R::PeerReq, context: RequestContext<R>) -> Result<R::Resp, ErrorData>
    where
        S: Service<R>,
    {
        let shared = &self.shared;
        let described = R::request(&request);
        // The method outlives the request, which the handler takes.
        let method = described.owned_method();
        let handshake = method == METHOD_INITIALIZE;
        // The wire's view of the connection, when the transport is wrapped (wire.rs).
        let connection = context.extensions.get::<Connection>().cloned();
        let network = connection.as_ref().and_then(Connection::network_transport);
        let session = self.session(&context.peer, handshake, requested_protocol(&context.meta.0.0), network);
        let mut request_attributes = attributes::describe(
            described,
            &session,
            Some(context.id.to_string()),
            &shared.config,
            &shared.lifecycle.metrics,
        );
        request_attributes.attributes.extend(session_id(&context.extensions, shared.config.max_name_length));
        request_attributes.attributes.extend(attributes::arguments(R::tool_arguments(&request), &shared.config));
        let (parent, links) = shared.remote_parent(&context.meta.0.0);
        let call = shared.open(Side::Server, &parent, request_attributes, links);
        let token = context.ct.clone();
        // What the handler sends is the request's: the wire finds its parent by the request's id.
        let handling = connection.map(|connection| connection.handling(context.id.clone(), call.context()));
        let result = self.inner.handle_request(request, context).with_context(call.context().clone()).await;
        // Now, before rmcp cancels the token after every answer.
        let cancelled = token.is_cancelled();
        // With the wire: the peer's cancel if it came first; else its input ended before the answer:
        // it hung up (rmcp writes the answer into the closed connection, and cancels the token only
        // when its serve loop ends). Without: the token says the peer cancelled.
        let seen = handling.map_or(Seen::Nothing, Handling::end);
        let disconnected = seen == Seen::Closed;
        let (answer, rpc) = match &result {
            Ok(response) => (Some(R::answer(response)), None),
            Err(error) => (None, Some(rpc_error(error))),
        };
        let answer_declined = method == METHOD_ELICITATION_CREATE
            && answer.as_ref().is_some_and(|answer| model::is_declined_answer(&method, answer, rpc.as_ref()));
        let verdict = model::classify_server_call(&ServerEnd {
            answer,
            rpc,
            peer_cancelled: seen == Seen::Cancelled || (cancelled && !disconnected),
            is_cancellation: disconnected,
            transport_closed: disconnected,
            keep_message: shared.config.capture_content,
            answer_declined,
            method: &method,
            ..ServerEnd::default()
        });
        let negotiated = result.as_ref().ok().filter(|_| handshake).and_then(R::negotiated);
        let captured = attributes::result(result.as_ref().ok().and_then(R::tool_result), &shared.config);
        let late = negotiated.map(|version| KeyValue::new(MCP_PROTOCOL_VERSION, version)).into_iter().chain(captured);
        call.finish(&verdict, late.collect());
        result
    }
}

/// `mcp.session.id` of a request or notification received in an HTTP session (a span attribute
/// only: on points it would make a series per session), bounded like a name.
fn session_id(extensions: &rmcp::model::Extensions, limit: usize) -> Option<KeyValue> {
    http_session_id(extensions).map(|id| KeyValue::new(MCP_SESSION_ID, bounded(id, limit).into_owned()))
}

/// The same wrapper for each role: rmcp's `Service` is implemented per role, and the private
/// `Handles` trait that reads each role's types must not appear in a public impl's bounds.
macro_rules! service_of_role {
    ($role:ty) => {
        impl<S: Service<$role>> Service<$role> for Instrumented<S> {
            fn handle_request(
                &self,
                request: <$role as ServiceRole>::PeerReq,
                context: RequestContext<$role>,
            ) -> impl Future<Output = Result<<$role as ServiceRole>::Resp, ErrorData>> + Send + '_ {
                self.handle(request, context)
            }

            fn handle_notification(
                &self,
                notification: <$role as ServiceRole>::PeerNot,
                context: NotificationContext<$role>,
            ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
                self.notified(notification, context)
            }

            fn get_info(&self) -> <$role as ServiceRole>::Info {
                self.inner.get_info()
            }

            fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
                self.inner.supported_protocol_versions()
            }
        }
    };
}

service_of_role!(RoleServer);
service_of_role!(RoleClient);
