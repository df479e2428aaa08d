//! The front end of the requests rmcp's streamable HTTP server serves without a session: every
//! request in its stateless mode, and every request of a 2026-07-28 client (`server/discover` and
//! what follows), which has no session. rmcp serves those straight from its factory's
//! `ServerHandler`, where no `Service` wrapper reaches, so [`Sessionless`] reads them off HTTP: a
//! tower service around rmcp's `StreamableHttpService` that reads each such POST's JSON-RPC
//! message, and the answer in its response (one JSON body, or an event stream), and relays both
//! unchanged. Only this module knows HTTP's shapes; what the messages say is `facts.rs`'s (`wire`).
//!
//! A request's span starts when it arrived, once its response shows rmcp served it: a request
//! rmcp's HTTP layer refuses before JSON-RPC (a wrong `Accept` or `Content-Type`, a `Host` not
//! allowed) reaches no handler and gets no span, as in process. A response stream the client
//! closes before the answer is `cancelled` / `disconnect` (on 2026-07-28, the client's cancel).

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::header::CONTENT_TYPE;
use http::{HeaderMap, Method, Request, Response};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use opentelemetry::KeyValue;
use opentelemetry::trace::TraceContextExt;
use rmcp::ServerHandler;
use rmcp::model::{JsonObject, RequestId};
// rmcp's headers: a request in a session names it; a 2025 client names its protocol version.
use rmcp::transport::common::http_header::{HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

use crate::attributes::{self, Request as Described, Session, SessionFacts};
use crate::facts::wire::{self, Answered, Reply, Sent};
use crate::facts::{requested_protocol, rpc_error};
use crate::lifecycle::{Arrived, Call, Shared, Side};
use crate::model::{self, ServerEnd};
use crate::semconv::{MCP_PROTOCOL_VERSION, METHOD_INITIALIZE, METHOD_TOOLS_CALL, TRANSPORT_TCP};

/// The longest answer read; a longer one is relayed unread, its span ended with no outcome.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// rmcp's `StreamableHttpService` (`inner`) with a SERVER span for each request it serves without
/// a session ([`McpOtel::sessionless`](crate::McpOtel::sessionless)). Cloned per connection.
#[derive(Clone)]
pub struct Sessionless<S> {
    inner: S,
    front: Arc<Front>,
}

/// What every request's span of one server shares.
struct Front {
    shared: Arc<Shared>,
    server: SessionFacts,
    /// rmcp's stateful mode: a client's `initialize` starts a session, whose service traces it.
    stateful: bool,
    /// rmcp's bound on a request's body: a longer one, which rmcp refuses, is relayed unread.
    max_request_bytes: usize,
}

impl<S> Sessionless<S> {
    pub(crate) fn new<H: ServerHandler>(
        inner: S,
        shared: Arc<Shared>,
        server: &H,
        config: &StreamableHttpServerConfig,
    ) -> Self {
        let info = server.get_info().server_info;
        let server = SessionFacts {
            server_name: Some(info.name),
            server_version: Some(info.version),
            protocol_version: None,
            network_transport: Some(TRANSPORT_TCP),
        };
        let (stateful, max_request_bytes) = (config.legacy_session_mode, config.max_request_body_bytes);
        Self { inner, front: Arc::new(Front { shared, server, stateful, max_request_bytes }) }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B, R> tower_service::Service<Request<B>> for Sessionless<S>
where
    S: tower_service::Service<Request<Replayed<B>>, Response = Response<R>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Send,
    R: Body<Data = Bytes> + Unpin,
{
    type Response = Response<Observed<R>>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The service made ready serves this request; its clone, the next (tower's rule).
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let front = Arc::clone(&self.front);
        Box::pin(async move {
            if request.method() != Method::POST || request.headers().contains_key(HEADER_SESSION_ID) {
                let response = inner.call(request.map(Replayed::whole)).await?;
                return Ok(response.map(Observed::unread));
            }
            let arrived = Arrived::now();
            let (parts, body) = request.into_parts();
            let (body, read) = Replayed::read(body, front.max_request_bytes).await;
            let message = read.and_then(|bytes| front.message(&bytes, &parts.headers));
            // rmcp answers once the handler's first message is there: until then, the client
            // going away drops this future (and rmcp cancels the handler).
            let mut pending = Pending { front: &front, message, arrived };
            let response = inner.call(Request::from_parts(parts, body)).await?;
            Ok(match pending.message.take() {
                Some(message) => front.answered(response, message, arrived),
                None => response.map(Observed::unread),
            })
        })
    }
}

/// A message read off a request: the method and what this side says of it.
enum Received {
    Request { id: RequestId, method: Cow<'static, str>, facts: Facts },
    Notification { facts: Facts },
}

/// A message whose response has not begun: dropped so, the client went away first.
struct Pending<'a> {
    front: &'a Front,
    message: Option<Received>,
    arrived: Arrived,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let Some(message) = self.message.take() else { return };
        let shared = &self.front.shared;
        match message {
            Received::Notification { facts } => facts.notified(shared, self.arrived),
            Received::Request { method, facts, .. } => {
                facts.open(shared, self.arrived).finish(&disconnected(&method), Vec::new());
            }
        }
    }
}

/// A request whose client closed its response before the answer: it went away (on 2026-07-28,
/// that is its cancel).
fn disconnected(method: &str) -> model::Verdict {
    model::classify_server_call(&ServerEnd {
        is_cancellation: true,
        transport_closed: true,
        method,
        ..ServerEnd::default()
    })
}

/// A received message's parent and attributes, before its span starts.
struct Facts {
    parent: opentelemetry::Context,
    links: Vec<opentelemetry::trace::Link>,
    described: attributes::Described,
}

impl Facts {
    /// A request's span, started when it arrived.
    fn open(self, shared: &Arc<Shared>, arrived: Arrived) -> Call {
        shared.open_arrived(Side::Server, &self.parent, self.described, self.links, Some(arrived))
    }

    /// A notification's span, from its arrival to now (no outcome, no point).
    fn notified(self, shared: &Shared, arrived: Arrived) {
        let cx = shared.lifecycle.notification(Side::Server, &self.parent, self.described, self.links, Some(arrived));
        cx.span().end();
    }
}

impl Front {
    /// The message a sessionless POST carries, when it is one this front end traces.
    fn message(&self, body: &[u8], headers: &HeaderMap) -> Option<Received> {
        let header = headers.get(HEADER_MCP_PROTOCOL_VERSION).and_then(|value| value.to_str().ok());
        let sent = Sent::read(body)?;
        let meta = sent.meta();
        let described = sent.request();
        let Some(id) = sent.id.clone() else {
            let facts = self.facts(&meta, described, None, requested_protocol(&meta).or(header));
            return Some(Received::Notification { facts });
        };
        let method = described.owned_method();
        let handshake = method == METHOD_INITIALIZE;
        // In rmcp's stateful mode, `initialize` starts a session: the session's service traces it.
        if handshake && self.stateful {
            return None;
        }
        // The handshake's version is the one its answer agrees: none before it.
        let protocol = requested_protocol(&meta).or(header).filter(|_| !handshake);
        let mut facts = self.facts(&meta, described, Some(id.to_string()), protocol);
        if self.shared.config.capture_content && method == METHOD_TOOLS_CALL {
            let arguments = wire::tool_arguments(body);
            facts.described.attributes.extend(attributes::arguments(arguments.as_ref(), &self.shared.config));
        }
        Some(Received::Request { id, method, facts })
    }

    /// A message's parent and attributes (`id`: a request's; `protocol`: the version it names).
    fn facts(&self, meta: &JsonObject, request: Described<'_>, id: Option<String>, protocol: Option<&str>) -> Facts {
        let shared = &self.shared;
        let facts = SessionFacts { protocol_version: protocol.map(str::to_owned), ..self.server.clone() };
        let session = Session::new(&facts, &shared.config, &shared.lifecycle.metrics);
        let described = attributes::describe(request, &session, id, &shared.config, &shared.lifecycle.metrics);
        let (parent, links) = shared.remote_parent(meta);
        Facts { parent, links, described }
    }

    /// `response` to `message`, its span started at `arrived` when rmcp served it; a request's
    /// answer read as it is relayed.
    fn answered<R>(&self, response: Response<R>, message: Received, arrived: Arrived) -> Response<Observed<R>> {
        let shape = Shape::of(response.headers());
        // Refused before JSON-RPC: no handler saw it.
        if shape.is_none() && !response.status().is_success() {
            return response.map(Observed::unread);
        }
        let shared = &self.shared;
        match message {
            Received::Notification { facts } => {
                facts.notified(shared, arrived);
                response.map(Observed::unread)
            }
            Received::Request { id, method, facts } => {
                let call = facts.open(shared, arrived);
                let Some(shape) = shape else {
                    // A success with no JSON-RPC body (202): no answer to read.
                    call.abandon();
                    return response.map(Observed::unread);
                };
                let watch = Watch { call, id, method, shape, event: Vec::new(), data: Vec::new(), unread: false };
                response.map(|body| Observed { body, watch: Some(watch) })
            }
        }
    }
}

/// How a response carries its messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One JSON-RPC message, the whole body.
    Json,
    /// Server-sent events, a message in each event's data.
    Events,
}

impl Shape {
    fn of(headers: &HeaderMap) -> Option<Self> {
        let kind = headers.get(CONTENT_TYPE)?.to_str().ok()?;
        let kind = kind.split(';').next()?.trim();
        if kind.eq_ignore_ascii_case("application/json") {
            Some(Self::Json)
        } else if kind.eq_ignore_ascii_case("text/event-stream") {
            Some(Self::Events)
        } else {
            None
        }
    }
}

/// A request's answer awaited in its response.
struct Watch {
    call: Call,
    id: RequestId,
    method: Cow<'static, str>,
    shape: Shape,
    /// The event stream's line being read.
    event: Vec<u8>,
    /// The message read so far: the whole body, or the current event's data.
    data: Vec<u8>,
    /// A message went by that could not be read (too long, or not JSON-RPC).
    unread: bool,
}

impl Watch {
    /// Reads `chunk`: the verdict, when the answer was in it (then the request is finished).
    fn read(&mut self, chunk: &[u8]) -> Option<Finish> {
        if self.shape == Shape::Json {
            self.keep(chunk);
            return None;
        }
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&byte| byte == b'\n') {
            let (part, after) = rest.split_at(end);
            rest = &after[1..];
            let line = if self.event.is_empty() { Cow::Borrowed(part) } else { Cow::Owned(self.line(part)) };
            if let Some(verdict) = self.event_line(line.strip_suffix(b"\r").unwrap_or(&line)) {
                return Some(verdict);
            }
        }
        self.event = self.line(rest);
        None
    }

    /// The event stream's line so far with `part`: kept whole up to the bound.
    fn line(&mut self, part: &[u8]) -> Vec<u8> {
        let mut line = std::mem::take(&mut self.event);
        self.unread |= !within_bound(&mut line, part);
        line
    }

    /// One line of the event stream: a `data` field is kept; a blank line ends the event, whose
    /// data is one message.
    fn event_line(&mut self, line: &[u8]) -> Option<Finish> {
        if line.is_empty() {
            let data = std::mem::take(&mut self.data);
            return self.message(&data);
        }
        if let Some(data) = line.strip_prefix(b"data:") {
            let data = data.strip_prefix(b" ").unwrap_or(data);
            if !self.data.is_empty() {
                self.keep(b"\n");
            }
            self.keep(data);
        }
        None
    }

    fn keep(&mut self, bytes: &[u8]) {
        self.unread |= !within_bound(&mut self.data, bytes);
    }

    /// A whole message: the verdict when it answers this request.
    fn message(&mut self, data: &[u8]) -> Option<Finish> {
        if data.is_empty() {
            return None;
        }
        let Ok(answered) = Reply::to(&self.id, data) else {
            self.unread = true;
            return None;
        };
        let (answer, rpc, negotiated) = match answered? {
            Answered::Result(answer, version) => (Some(answer), None, version),
            Answered::Error(error) => (None, Some(rpc_error(&error)), None),
        };
        let capture = self.call.config().capture_content;
        let verdict = model::classify_server_call(&ServerEnd {
            answer,
            rpc,
            keep_message: capture,
            method: &self.method,
            ..ServerEnd::default()
        });
        let negotiated = negotiated.filter(|_| self.method == METHOD_INITIALIZE);
        let mut late: Vec<KeyValue> =
            negotiated.map(|version| KeyValue::new(MCP_PROTOCOL_VERSION, version)).into_iter().collect();
        if capture && self.method == METHOD_TOOLS_CALL {
            late.extend(attributes::result(wire::tool_result(data).as_ref(), self.call.config()));
        }
        Some(Finish { verdict, late })
    }

    /// The body ended: a JSON body is read now, and with no answer in it has no outcome. An event
    /// stream that ended with no answer is the handler's end with none (rmcp shutting down), or,
    /// when a message went by unread, no outcome.
    fn ended(mut self) {
        if self.shape == Shape::Json {
            let data = std::mem::take(&mut self.data);
            match self.message(&data) {
                Some(Finish { verdict, late }) => self.call.finish(&verdict, late),
                None => self.call.abandon(),
            }
        } else if self.unread {
            self.call.abandon();
        }
    }
}

/// Appends `bytes` to `read` if the whole stays within the answer's bound; whether it did.
fn within_bound(read: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let fits = read.len() + bytes.len() <= MAX_ANSWER_BYTES;
    if fits {
        read.extend_from_slice(bytes);
    }
    fits
}

/// What a request's answer decided: its verdict, and what it tells late.
struct Finish {
    verdict: model::Verdict,
    late: Vec<KeyValue>,
}

/// A response body relayed unchanged, its request's answer read on the way.
pub struct Observed<B> {
    body: B,
    watch: Option<Watch>,
}

impl<B> Observed<B> {
    const fn unread(body: B) -> Self {
        Self { body, watch: None }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Observed<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(data), Some(watch)) = (frame.data_ref(), this.watch.as_mut())
                    && let Some(Finish { verdict, late }) = watch.read(data)
                    && let Some(watch) = this.watch.take()
                {
                    watch.call.finish(&verdict, late);
                }
                // A server polls no further once the body says it is at its end.
                if this.body.is_end_stream()
                    && let Some(watch) = this.watch.take()
                {
                    watch.ended();
                }
            }
            Poll::Ready(None) => {
                if let Some(watch) = this.watch.take() {
                    watch.ended();
                }
            }
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl<B> Drop for Observed<B> {
    /// The client closed the response before the answer.
    fn drop(&mut self) {
        if let Some(watch) = self.watch.take() {
            watch.call.finish(&disconnected(&watch.method), Vec::new());
        }
    }
}

/// A request body handed on as it came: the bytes read ahead (once), what came after them (the
/// trailers, or the body's error), then the rest unread.
pub struct Replayed<B: Body> {
    head: Option<Bytes>,
    after: Option<Result<Frame<Bytes>, B::Error>>,
    rest: Option<B>,
}

impl<B: Body + Unpin> Replayed<B> {
    fn whole(body: B) -> Self {
        Self { head: None, after: None, rest: Some(body) }
    }

    /// Reads `body` ahead, up to `max` bytes: the body to hand on, and its bytes when whole.
    async fn read(mut body: B, max: usize) -> (Self, Option<Bytes>) {
        let mut read = BytesMut::new();
        loop {
            match body.frame().await {
                None => {
                    let bytes = read.freeze();
                    return (Self { head: Some(bytes.clone()), after: None, rest: None }, Some(bytes));
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        read.put(data);
                        if read.len() > max {
                            return (Self { head: Some(read.freeze()), after: None, rest: Some(body) }, None);
                        }
                    }
                    // Trailers: the data is whole.
                    Err(frame) => {
                        let (bytes, after) = (read.freeze(), frame.into_trailers().ok().map(Frame::trailers));
                        return (
                            Self { head: Some(bytes.clone()), after: after.map(Ok), rest: Some(body) },
                            Some(bytes),
                        );
                    }
                },
                Some(Err(error)) => {
                    return (Self { head: Some(read.freeze()), after: Some(Err(error)), rest: None }, None);
                }
            }
        }
    }
}

// Never pinned through: its fields are moved out whole (the error included).
impl<B: Body + Unpin> Unpin for Replayed<B> {}

impl<B: Body + Unpin> Body for Replayed<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        if let Some(head) = this.head.take().filter(|head| !head.is_empty()) {
            return Poll::Ready(Some(Ok(Frame::data(head))));
        }
        if let Some(after) = this.after.take() {
            return Poll::Ready(Some(after));
        }
        let Some(rest) = this.rest.as_mut() else { return Poll::Ready(None) };
        let polled = Pin::new(rest).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.rest = None;
        }
        polled.map(|frame| frame.map(|frame| frame.map(|frame| frame.map_data(copy))))
    }

    fn is_end_stream(&self) -> bool {
        self.head.as_ref().is_none_or(Bytes::is_empty) && self.after.is_none() && self.rest.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let head = self.head.as_ref().map_or(0, Bytes::len) as u64;
        match &self.rest {
            None => SizeHint::with_exact(head),
            Some(rest) => {
                let rest = rest.size_hint();
                let mut hint = SizeHint::new();
                hint.set_lower(head + rest.lower());
                if let Some(upper) = rest.upper() {
                    hint.set_upper(head + upper);
                }
                hint
            }
        }
    }
}

/// A body's chunk as bytes (copied only when it is not already one).
fn copy<D: Buf>(mut data: D) -> Bytes {
    data.copy_to_bytes(data.remaining())
}
