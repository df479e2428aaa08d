//! The front end of the wire: [`Wire`], an rmcp `Transport` around the application's, for what only
//! the connection shows. It reads, never changes, what passes: the requests the peer cancelled
//! (its `notifications/cancelled`, in the order read) and when its input ends; it hands each
//! received request a handle to that connection (in the request's extensions, which rmcp moves
//! into the handler's `RequestContext`).
//!
//! Why: rmcp cancels a handler's token only when its serve loop ends, after a drain of up to 5 s,
//! so a service alone cannot tell a client that hung up mid-call from one that got its answer.
//! With the wire, a handler that returns after the peer's input ended is `cancelled` /
//! `disconnect` (rmcp writes its answer into a closed connection).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{GetExtensions, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::{IntoTransport, Transport};

use crate::facts::Handles;

/// The cancels kept for requests still running: a peer cancels the few it has in flight.
const MAX_CANCELLED: usize = 64;

/// One connection as the wire saw it: shared by the transport and the requests it received.
#[derive(Clone, Debug, Default)]
pub(crate) struct Connection {
    closed: Arc<AtomicBool>,
    cancelled: Arc<Mutex<VecDeque<RequestId>>>,
}

/// How a request's handling ended, as the wire saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Nothing: the peer is still there, and did not cancel it.
    Nothing,
    /// The peer's `notifications/cancelled` for it came first.
    Cancelled,
    /// The peer's input ended, with no cancel of it before.
    Closed,
}

impl Connection {
    /// What the wire saw of request `id` by now (its cancel forgotten: the request is done).
    pub(crate) fn seen(&self, id: &RequestId) -> Seen {
        let mut cancelled = self.cancelled.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(index) = cancelled.iter().position(|found| found == id) {
            cancelled.remove(index);
            return Seen::Cancelled;
        }
        if self.closed.load(Ordering::Acquire) { Seen::Closed } else { Seen::Nothing }
    }

    fn cancel(&self, id: RequestId) {
        let mut cancelled = self.cancelled.lock().unwrap_or_else(PoisonError::into_inner);
        if cancelled.len() == MAX_CANCELLED {
            cancelled.pop_front();
        }
        cancelled.push_back(id);
    }
}

/// A transport whose connection the instrumentation sees (`mcp_otel::transport(stdio())`).
pub struct Wire<T> {
    inner: T,
    connection: Connection,
}

/// `transport` (anything rmcp's `serve` takes) with the wire front end around it.
pub fn transport<R, T, E, A>(transport: T) -> Wire<impl Transport<R, Error = E>>
where
    R: ServiceRole,
    T: IntoTransport<R, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    Wire { inner: transport.into_transport(), connection: Connection::default() }
}

impl<R, T> Transport<R> for Wire<T>
where
    R: Handles,
    R::PeerReq: GetExtensions,
    T: Transport<R>,
{
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(&mut self, item: TxJsonRpcMessage<R>) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        match self.inner.receive().await {
            Some(JsonRpcMessage::Request(mut request)) => {
                request.request.extensions_mut().insert(self.connection.clone());
                Some(JsonRpcMessage::Request(request))
            }
            Some(JsonRpcMessage::Notification(notification)) => {
                if let Some(id) = R::cancelled_request(&notification.notification) {
                    self.connection.cancel(id.clone());
                }
                Some(JsonRpcMessage::Notification(notification))
            }
            None => {
                self.connection.closed.store(true, Ordering::Release);
                None
            }
            other => other,
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
