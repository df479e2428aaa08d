//! The front end of the wire: [`Wire`], an rmcp `Transport` around the application's, for what only
//! the connection shows. It changes nothing that passes but the trace context in the `_meta` of a
//! request it traces (as `Client` does). What it reads:
//! - the requests the peer cancelled (its `notifications/cancelled`, in the order read) and when
//!   its input ends; it hands each received request a handle to that connection (in the request's
//!   extensions, which rmcp moves into the handler's `RequestContext`);
//! - the requests this side sends that `Client` did not trace: rmcp's own `initialize`, a
//!   framework's calls through rmcp's `Peer`, a server's sampling, elicitation and roots requests.
//!   Each gets its CLIENT span here, from the message sent to its answer, its own cancel, or the
//!   end of the connection. Its parent: the request being handled that sent it (rmcp marks it
//!   `OriginatingRequestId`), else the context already in its `_meta`, else none (rmcp sends from
//!   its own task, where the caller's context is gone). A request `Client` traced carries its
//!   span's context: the wire gives that span the request's id and makes no second one;
//! - the notifications this side sends: a CLIENT span each, its context in their `_meta` (a
//!   cancel's parent: the span of the request it cancels);
//! - when a session that had a handshake ends: its one duration point;
//! - what the transport is (`network.transport`), from its type's name: rmcp's transports show
//!   nothing else of it. A child process's or this process's stdio is `pipe`; streamable HTTP,
//!   SSE and TCP are `tcp`; any other (in memory, the application's own) states none.
//!
//! Why: rmcp cancels a handler's token only when its serve loop ends, after a drain of up to 5 s,
//! so a service alone cannot tell a client that hung up mid-call from one that got its answer.
//! With the wire, a handler that returns after the peer's input ended is `cancelled` /
//! `disconnect` (rmcp writes its answer into a closed connection). And rmcp has no hook on what
//! it sends but the transport.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use opentelemetry::trace::{SpanContext, TraceContextExt};
use opentelemetry::{Context, KeyValue};
use rmcp::model::{ErrorData, GetExtensions, JsonRpcMessage, JsonRpcRequest, RequestId};
use rmcp::service::{OriginatingRequestId, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::attributes::{self, Request, Session, SessionFacts};
use crate::facts::{Handles, rpc_error, timed_out};
use crate::lifecycle::{Call, Learnt, Shared, Side};
use crate::model::{self, Answer, ClientFailure, Outcome, Verdict};
use crate::propagation::traceparent_span;
use crate::semconv::{
    CancelReason, ERROR_TYPE, FREQUENT_NOTIFICATIONS, JSONRPC_REQUEST_ID, NETWORK_TRANSPORT, TRANSPORT_PIPE,
    TRANSPORT_TCP, error_type,
};

/// The cancels kept for requests still running (and the requests `Client` traced, kept for their
/// cancels): a side cancels the few it has in flight.
const MAX_CANCELLED: usize = 64;

/// The parts of a transport's type name that say what it is (`network.transport`): rmcp's child
/// process and stdio, tokio's child pipes; rmcp's streamable HTTP and SSE transports, tokio's TCP.
const PIPES: [&str; 3] = ["::TokioChildProcess", "tokio::io::std", "tokio::process::Child"];
const TCP: [&str; 3] = ["::streamable_http_", "::sse_", "tokio::net::tcp::"];

/// The `network.transport` of a transport whose type is named `type_name`, when it is one of
/// rmcp's or tokio's that says (see [`PIPES`] and [`TCP`]).
pub(crate) fn network_transport(type_name: &str) -> Option<&'static str> {
    if PIPES.iter().any(|part| type_name.contains(part)) {
        Some(TRANSPORT_PIPE)
    } else if TCP.iter().any(|part| type_name.contains(part)) {
        Some(TRANSPORT_TCP)
    } else {
        None
    }
}

/// One connection as the wire saw it: shared by the transport and the messages it received (one
/// `Arc`: a clone travels with every request received).
#[derive(Clone, Debug, Default)]
pub(crate) struct Connection(Arc<Seeing>);

#[derive(Debug, Default)]
struct Seeing {
    network: Option<&'static str>,
    closed: AtomicBool,
    requests: Mutex<Requests>,
}

/// The requests of a connection that the wire keeps, under one lock.
#[derive(Debug, Default)]
struct Requests {
    // The requests the peer cancelled, latest last.
    cancelled: VecDeque<RequestId>,
    // The requests being handled: the parents of the requests their handlers send. A handful are
    // in flight: a scan costs less than hashing (a thousand, about a microsecond).
    handling: Vec<(RequestId, Context)>,
}

impl Requests {
    /// Where request `id` is among those being handled.
    fn handled(&self, id: &RequestId) -> Option<usize> {
        self.handling.iter().position(|(found, _)| found == id)
    }

    fn unhandle(&mut self, id: &RequestId) {
        if let Some(index) = self.handled(id) {
            self.handling.swap_remove(index);
        }
    }
}

/// A request being handled, known to the connection until it ends (or is dropped).
pub(crate) struct Handling {
    connection: Connection,
    id: RequestId,
    ended: bool,
}

impl Handling {
    /// The request's handling ended: what the wire saw of it by now (its cancel forgotten).
    pub(crate) fn end(mut self) -> Seen {
        self.ended = true;
        let seeing = &self.connection.0;
        let mut requests = seeing.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.unhandle(&self.id);
        if let Some(index) = requests.cancelled.iter().position(|found| *found == self.id) {
            requests.cancelled.remove(index);
            return Seen::Cancelled;
        }
        if seeing.closed.load(Ordering::Acquire) { Seen::Closed } else { Seen::Nothing }
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        if !self.ended {
            self.connection.0.requests.lock().unwrap_or_else(PoisonError::into_inner).unhandle(&self.id);
        }
    }
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
    fn new(network: Option<&'static str>) -> Self {
        Self(Arc::new(Seeing { network, ..Seeing::default() }))
    }

    /// The connection's `network.transport`, when its transport's type says.
    pub(crate) fn network_transport(&self) -> Option<&'static str> {
        self.0.network
    }

    /// Request `id` is being handled in `cx` until the returned guard ends or is dropped.
    pub(crate) fn handling(self, id: RequestId, cx: &Context) -> Handling {
        self.0.requests.lock().unwrap_or_else(PoisonError::into_inner).handling.push((id.clone(), cx.clone()));
        Handling { connection: self, id, ended: false }
    }

    fn handler_of(&self, id: &RequestId) -> Option<Context> {
        let requests = self.0.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.handled(id).map(|index| requests.handling[index].1.clone())
    }

    fn cancel(&self, id: RequestId) {
        let mut requests = self.0.requests.lock().unwrap_or_else(PoisonError::into_inner);
        if requests.cancelled.len() == MAX_CANCELLED {
            requests.cancelled.pop_front();
        }
        requests.cancelled.push_back(id);
    }

    fn close(&self) {
        self.0.closed.store(true, Ordering::Release);
    }
}

/// A transport whose connection the instrumentation sees (`mcp_otel::transport(stdio())`).
pub struct Wire<T> {
    inner: T,
    connection: Connection,
    shared: Arc<Shared>,
    // The requests this side sent that the wire traces, until answered.
    sent: HashMap<RequestId, Sent>,
    // The latest requests `Client` traced, by id: the parents of their cancels (the span's context
    // only: the span itself is freed when it ends).
    traced: VecDeque<(RequestId, SpanContext)>,
    // The session's attributes, once the handshake's answer passed.
    session: Session,
    // When the connection was made, which side it serves, and how its session ended.
    started: Instant,
    side: Side,
    handshake: bool,
    peer_gone: bool,
    ended: bool,
}

/// A request sent, traced by the wire.
struct Sent {
    call: Call,
    method: Cow<'static, str>,
}

impl<T> Wire<T> {
    /// The wire of `inner`, a transport of the `side` given (rmcp's role, known where it is made),
    /// over `network` ([`network_transport`] of the type the application gave).
    pub(crate) fn new(inner: T, shared: Arc<Shared>, side: Side, network: Option<&'static str>) -> Self {
        shared.sending.wire();
        let facts = SessionFacts { network_transport: network, ..SessionFacts::default() };
        let session = Session::new(&facts, &shared.config, &shared.lifecycle.metrics);
        Self {
            inner,
            connection: Connection::new(network),
            shared,
            sent: HashMap::new(),
            traced: VecDeque::new(),
            session,
            started: Instant::now(),
            side,
            handshake: false,
            peer_gone: false,
            ended: false,
        }
    }

    /// The handshake's answer passed: the session is named, and has a duration. The session it
    /// replaces is returned.
    fn handshake(&mut self, facts: SessionFacts) -> Session {
        let facts = SessionFacts { network_transport: self.connection.network_transport(), ..facts };
        self.handshake = true;
        std::mem::replace(&mut self.session, Session::new(&facts, &self.shared.config, &self.shared.lifecycle.metrics))
    }

    /// The connection ended: its session's one point, when it had a handshake (a 2026-07-28
    /// connection has none: each request stands alone). A client whose server went away ended
    /// with `connection_closed`; a client closing the connection is how a server's session ends.
    fn ended(&mut self) {
        if std::mem::replace(&mut self.ended, true) || !self.handshake {
            return;
        }
        // The conventions define no `network.transport` on a session's duration (docs/metrics.md).
        let mut point: Vec<KeyValue> =
            self.session.point().iter().filter(|kv| kv.key.as_str() != NETWORK_TRANSPORT).cloned().collect();
        if self.side == Side::Client && self.peer_gone {
            point.push(KeyValue::new(ERROR_TYPE, error_type::CONNECTION_CLOSED));
        }
        self.shared.lifecycle.metrics.record_session(self.side, self.started.elapsed(), &point);
    }

    /// A request this side sends: traced here unless `Client` traced it.
    fn sending<R: Handles>(&mut self, request: &mut JsonRpcRequest<R::Req>)
    where
        R::Req: GetExtensions,
    {
        let shared = &self.shared;
        // `Client`'s requests carry its span's context in their parameters: known by its W3C
        // span id at once, else (another propagator) by the context extracted below.
        let client = R::Other::params_meta(&request.request).and_then(traceparent_span);
        if let Some(found) = client.and_then(|span| shared.sending.take(span)) {
            self.traced_by_client(&request.id, found);
            return;
        }
        let meta = R::Other::meta(&request.request);
        let carried = shared.propagation.extract(&meta);
        drop(meta);
        if let Some(found) = carried.as_ref().and_then(|cx| shared.sending.take(cx.span().span_context().span_id())) {
            self.traced_by_client(&request.id, found);
            return;
        }
        let origin = request.request.extensions().get::<OriginatingRequestId>();
        let handler = origin.and_then(|origin| self.connection.handler_of(&origin.0));
        // Without propagation, `Client`'s requests carry no context to know them by: the wire traces
        // only what a handler sends.
        if handler.is_none() && !shared.config.propagate {
            return;
        }
        let parent = handler.or(carried).unwrap_or_default();
        let described = R::Other::request(&request.request);
        let method = described.owned_method();
        let id = Some(request.id.to_string());
        let mut described =
            attributes::describe(described, &self.session, id, &shared.config, &shared.lifecycle.metrics);
        described.attributes.extend(attributes::arguments(R::Other::tool_arguments(&request.request), &shared.config));
        let call = shared.open(Side::Client, &parent, described, Vec::new());
        if shared.config.propagate {
            shared.propagation.inject(call.context(), R::Other::meta_mut(&mut request.request));
        }
        self.sent.insert(request.id.clone(), Sent { call, method });
    }

    /// Request `id`, sent by `Client` with the span `client`: its id on the span, what the wire
    /// knows of the connection `learnt` by the span's end, and the span kept for its cancel.
    fn traced_by_client(&mut self, id: &RequestId, (client, learnt): (Context, Learnt)) {
        client.span().set_attribute(KeyValue::new(JSONRPC_REQUEST_ID, id.to_string()));
        if let Some(network) = self.connection.network_transport() {
            let _ = learnt.set(network);
        }
        if self.traced.len() == MAX_CANCELLED {
            self.traced.pop_front();
        }
        self.traced.push_back((id.clone(), client.span().span_context().clone()));
    }

    /// The answer to a request: a result or an error (a client's handshake answered names the
    /// session); the end of its span when the wire traced it.
    fn answered<R: Handles>(&mut self, id: &RequestId, answer: Result<&R::PeerResp, &ErrorData>) {
        // Only the handshake's answer names the session: once it passed, no other is looked at.
        let served = answer.ok().filter(|_| !self.handshake).and_then(R::Other::served);
        let before = served.map(|facts| self.handshake(facts));
        if self.sent.is_empty() {
            return; // `Client`'s answers: no lookup
        }
        let Some(Sent { mut call, method }) = self.sent.remove(id) else { return };
        let shared = &self.shared;
        let captured = attributes::result(answer.ok().and_then(R::Other::tool_result), &shared.config);
        let verdict = match answer {
            Ok(result) => {
                if let Some(before) = &before {
                    call.name_session(&self.session, before);
                }
                let answer = R::Other::answer(result);
                let declined = model::is_declined_answer(&method, &answer, None);
                model::classify_client_result(&answer, declined, false)
            }
            Err(error) => {
                let rpc = rpc_error(error);
                let declined = model::is_declined_answer(&method, &Answer::default(), Some(&rpc));
                model::classify_client_failure(&ClientFailure {
                    rpc: Some(rpc),
                    answer_declined: declined,
                    keep_message: shared.config.capture_content,
                    method: &method,
                    ..ClientFailure::default()
                })
            }
        };
        call.finish(&verdict, captured.into_iter().collect());
    }

    /// A notification this side sends: its CLIENT span (progress and log messages only when asked:
    /// they come by the hundred), its context in the notification's `_meta`. A cancel's parent is
    /// the span of the request it cancels; another's none (the sender's context is not seen here).
    fn notifying<R: Handles>(&mut self, notification: &mut R::Not, cancels: Option<&RequestId>) {
        let shared = &self.shared;
        let method = R::Other::notification(notification);
        if FREQUENT_NOTIFICATIONS.contains(&method) && !shared.config.trace_progress_and_logs {
            return;
        }
        let parent = cancels.and_then(|id| {
            self.sent.get(id).map(|sent| sent.call.context().clone()).or_else(|| {
                let (_, span) = self.traced.iter().rev().find(|(traced, _)| traced == id)?;
                Some(Context::new().with_remote_span_context(span.clone()))
            })
        });
        let request = Request::new(method, None, None);
        let described = attributes::describe(request, &self.session, None, &shared.config, &shared.lifecycle.metrics);
        let cx = shared.lifecycle.notification(Side::Client, &parent.unwrap_or_default(), described, Vec::new(), None);
        if shared.config.propagate {
            shared.propagation.inject(&cx, R::Other::notification_meta_mut(notification));
        }
        cx.span().end();
    }

    /// This side cancelled request `id`: for its timeout, rmcp's reason says, else its caller's.
    fn cancelling(&mut self, id: &RequestId, reason: Option<&str>) {
        let Some(Sent { call, method }) = self.sent.remove(id) else { return };
        let verdict = if timed_out(reason) {
            model::classify_client_failure(&ClientFailure {
                timed_out: true,
                method: &method,
                ..ClientFailure::default()
            })
        } else {
            Verdict::Finished(Outcome::cancelled(CancelReason::Caller))
        };
        call.finish(&verdict, Vec::new());
    }

    /// The connection ended with requests unanswered.
    fn unanswered(&mut self) {
        for (_, Sent { call, method }) in self.sent.drain() {
            let failure = ClientFailure { connection_closed: true, method: &method, ..ClientFailure::default() };
            call.finish(&model::classify_client_failure(&failure), Vec::new());
        }
    }
}

impl<T> Drop for Wire<T> {
    fn drop(&mut self) {
        self.unanswered();
        self.ended();
    }
}

impl<R, T> Transport<R> for Wire<T>
where
    R: Handles,
    R::PeerReq: GetExtensions,
    R::PeerNot: GetExtensions,
    R::Req: GetExtensions,
    T: Transport<R>,
{
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &mut item {
            JsonRpcMessage::Request(request) => self.sending::<R>(request),
            JsonRpcMessage::Notification(notification) => {
                let cancel = R::Other::cancelled_request(&notification.notification)
                    .map(|(id, reason)| (id.clone(), reason.map(str::to_owned)));
                self.notifying::<R>(&mut notification.notification, cancel.as_ref().map(|(id, _)| id));
                if let Some((id, reason)) = cancel {
                    self.cancelling(&id, reason.as_deref());
                }
            }
            // A server's own answer to `initialize` names it on the requests it sends.
            JsonRpcMessage::Response(response) if !self.handshake => {
                if let Some(facts) = R::served(&response.result) {
                    let _ = self.handshake(facts);
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        let mut message = self.inner.receive().await;
        match &mut message {
            Some(JsonRpcMessage::Request(request)) => {
                request.request.extensions_mut().insert(self.connection.clone());
            }
            Some(JsonRpcMessage::Notification(notification)) => {
                if let Some((id, _)) = R::cancelled_request(&notification.notification) {
                    self.connection.cancel(id.clone());
                }
                notification.notification.extensions_mut().insert(self.connection.clone());
            }
            Some(JsonRpcMessage::Response(response)) => self.answered::<R>(&response.id, Ok(&response.result)),
            Some(JsonRpcMessage::Error(error)) => {
                if let Some(id) = &error.id {
                    self.answered::<R>(id, Err(&error.error));
                }
            }
            None => {
                self.connection.close();
                self.peer_gone = true;
                self.unanswered();
                self.ended();
            }
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.unanswered();
        self.ended();
        self.inner.close()
    }
}
