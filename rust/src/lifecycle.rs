//! A request's life on one side, as in the other languages: opened once (its span started with
//! all its attributes, its clock running), finished exactly once (classified, its outcome written
//! on its span, the same outcome recorded as its one point). A request answered with no result yet
//! has no point.
//!
//! In Rust a request's future can be dropped before it is answered (`tokio::select!`, a timeout
//! around the call, an aborted task): a [`Call`] dropped unfinished finishes itself then, at the
//! drop, not when an answer arrives later.
//!
//! Every front end of one instrumentation holds its lifecycle in [`Shared`], with its settings and
//! its propagator.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Instant, SystemTime};

use opentelemetry::baggage::BaggageExt;
use opentelemetry::global::BoxedTracer;
use opentelemetry::trace::{Link, SpanBuilder, SpanId, SpanKind, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};

use crate::attributes::{Described, Session};
use crate::config::Config;
use crate::metrics::CallMetrics;
pub(crate) use crate::metrics::Side;
use crate::model::{Outcome, Verdict, bounded};
use crate::propagation::Propagation;
use crate::semconv::{CancelReason, GEN_AI_CONVERSATION_ID, MCP_PROTOCOL_VERSION, NETWORK_TRANSPORT, error_type};
use crate::writer::finish_span;

/// The attributes learnt at a request's end that its point carries too.
const LEARNT_LATE: [&str; 2] = [MCP_PROTOCOL_VERSION, NETWORK_TRANSPORT];

/// A conversation id from baggage (the application's, or a peer's) is bounded.
const MAX_CONVERSATION_ID: usize = 256;

/// What the front ends of one [`McpOtel`](crate::McpOtel) share: its settings, its lifecycle, its
/// propagator, and the requests its clients sent.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) lifecycle: Lifecycle,
    pub(crate) propagation: Propagation,
    pub(crate) sending: Sending,
}

/// The spans `Client` started lately, by span id: a wrapped transport finds a request that carries
/// one of them in its `_meta` already traced (it gives that span the request's id, and makes no
/// second one), and takes it out. Kept only once a transport is wrapped; bounded: a request is sent
/// within moments of its span's start, and what a wire never takes (a `Client` on a transport not
/// wrapped, a call dropped before rmcp sent it) leaves as newer spans come.
#[derive(Default)]
pub(crate) struct Sending {
    wired: AtomicBool,
    recent: Mutex<VecDeque<(SpanId, Context, Learnt)>>,
}

/// What the wire that sends a `Client`'s requests learnt of its connection, once it sent the first:
/// the transport (`network.transport`). One per `Client`.
pub(crate) type Learnt = Arc<OnceLock<&'static str>>;

/// How many of a client's latest spans are kept for the wire: far more than it has in flight.
const MAX_SENDING: usize = 256;

impl Sending {
    /// A transport of this instrumentation is wrapped: keep clients' spans from now on.
    pub(crate) fn wire(&self) {
        self.wired.store(true, Ordering::Relaxed);
    }

    /// `cx`'s span was started for a request about to be sent by a `Client` whose wire says what it
    /// learns in `learnt`: whether a wire will know it (and give the span the request's id).
    fn started(&self, cx: &Context, learnt: &Learnt) -> bool {
        if !self.wired.load(Ordering::Relaxed) {
            return false;
        }
        let id = cx.span().span_context().span_id();
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == MAX_SENDING {
            recent.pop_front();
        }
        recent.push_back((id, cx.clone(), Arc::clone(learnt)));
        true
    }

    /// The span a client started for the request whose `_meta` carries span `id`, if it did, and
    /// where the wire puts what it learns of it: taken out (a request is sent once).
    pub(crate) fn take(&self, id: SpanId) -> Option<(Context, Learnt)> {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        let index = recent.iter().rposition(|(found, ..)| *found == id)?;
        recent.remove(index).map(|(_, cx, learnt)| (cx, learnt))
    }
}

pub(crate) struct Lifecycle {
    tracer: BoxedTracer,
    pub(crate) metrics: CallMetrics,
}

/// When a request arrived, for a span started once its answer shows the request was served.
#[derive(Clone, Copy)]
pub(crate) struct Arrived {
    instant: Instant,
    time: SystemTime,
}

impl Arrived {
    #[cfg(feature = "streamable-http-server")]
    pub(crate) fn now() -> Self {
        Self { instant: Instant::now(), time: SystemTime::now() }
    }
}

impl Shared {
    /// Starts the span of a request on `side`, a child of `parent` (linked to `links`).
    pub(crate) fn open(self: &Arc<Self>, side: Side, parent: &Context, request: Described, links: Vec<Link>) -> Call {
        self.open_arrived(side, parent, request, links, None)
    }

    /// [`open`](Self::open), the span and the clock started at `arrived` when given.
    pub(crate) fn open_arrived(
        self: &Arc<Self>,
        side: Side,
        parent: &Context,
        request: Described,
        links: Vec<Link>,
        arrived: Option<Arrived>,
    ) -> Call {
        let Described { name, tool_call, attributes, point } = request;
        let cx = self.lifecycle.start(side, parent, name, attributes, links, arrived.map(|arrived| arrived.time));
        Call {
            shared: Arc::clone(self),
            side,
            tool_call,
            cx,
            point,
            started: arrived.map_or_else(Instant::now, |arrived| arrived.instant),
            learnt: None,
            done: false,
        }
    }

    /// A received message's parent: the sender's context in `_meta`, or, not trusted, a link to it.
    pub(crate) fn remote_parent(&self, meta: &serde_json::Map<String, serde_json::Value>) -> (Context, Vec<Link>) {
        match self.propagation.extract(meta) {
            Some(remote) if self.config.trust_remote_context => (remote, Vec::new()),
            Some(remote) => {
                let link = Link::with_context(remote.span().span_context().clone());
                (Context::new(), vec![link])
            }
            None => (Context::new(), Vec::new()),
        }
    }
}

impl Lifecycle {
    pub(crate) const fn new(tracer: BoxedTracer, metrics: CallMetrics) -> Self {
        Self { tracer, metrics }
    }

    /// Starts the span of a notification sent or received (no outcome, no point): the caller ends
    /// it (`cx.span().end()`).
    pub(crate) fn notification(
        &self,
        side: Side,
        parent: &Context,
        request: Described,
        links: Vec<Link>,
        arrived: Option<Arrived>,
    ) -> Context {
        self.start(side, parent, request.name, request.attributes, links, arrived.map(|arrived| arrived.time))
    }

    fn start(
        &self,
        side: Side,
        parent: &Context,
        name: String,
        mut attributes: Vec<KeyValue>,
        links: Vec<Link>,
        at: Option<SystemTime>,
    ) -> Context {
        if let Some(conversation) = parent.baggage().get(GEN_AI_CONVERSATION_ID) {
            let conversation = bounded(conversation.as_str(), MAX_CONVERSATION_ID).into_owned();
            attributes.push(KeyValue::new(GEN_AI_CONVERSATION_ID, conversation));
        }
        let kind = if side == Side::Client { SpanKind::Client } else { SpanKind::Server };
        let mut builder = SpanBuilder::from_name(name).with_kind(kind).with_attributes(attributes);
        if !links.is_empty() {
            builder = builder.with_links(links);
        }
        if let Some(at) = at {
            builder = builder.with_start_time(at);
        }
        let span = self.tracer.build_with_context(builder, parent);
        parent.with_span(span)
    }
}

/// One request in flight on one side. It owns a share of its instrumentation, so that the wire can
/// keep it between the message sent and its answer.
#[allow(clippy::struct_field_names)] // `tool_call`: a tools/call, the house word in every language
pub(crate) struct Call {
    shared: Arc<Shared>,
    side: Side,
    tool_call: bool,
    cx: Context,
    point: Vec<KeyValue>,
    started: Instant,
    learnt: Option<Learnt>,
    done: bool,
}

impl Call {
    /// The settings of the instrumentation it is one of.
    pub(crate) fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The span's context: the parent of what the request causes, and what is injected.
    pub(crate) const fn context(&self) -> &Context {
        &self.cx
    }

    /// The request is about to be sent by `Client`: whether a wrapped transport will know it by the
    /// context it carries (wire.rs) and give its span the request's id. Its transport, once the
    /// wire says it in `learnt`, is on the span already when `Client` knew it (`on_span`), else
    /// written at the end.
    pub(crate) fn sent_by_client(&mut self, learnt: &Learnt, on_span: bool) -> bool {
        let wired = self.shared.sending.started(&self.cx, learnt);
        if wired && !on_span {
            self.learnt = Some(Arc::clone(learnt));
        }
        wired
    }

    /// The session's attributes learnt after the request was sent (the handshake's answer names
    /// the server), on its span and its point: those of `session` that `before` (the session it was
    /// sent in) had not.
    pub(crate) fn name_session(&mut self, session: &Session, before: &Session) {
        let new = |attributes: &[KeyValue], known: &[KeyValue]| -> Vec<KeyValue> {
            let known = |attribute: &&KeyValue| known.iter().any(|kv| kv.key == attribute.key);
            attributes.iter().filter(|attribute| !known(attribute)).cloned().collect()
        };
        let span = self.cx.span();
        for attribute in new(session.span(), before.span()) {
            span.set_attribute(attribute);
        }
        self.point.extend(new(session.point(), before.point()));
    }

    /// Writes `verdict` (and `late` attributes) on the span and ends it, then records the same
    /// outcome as its point.
    pub(crate) fn finish(mut self, verdict: &Verdict, late: Vec<KeyValue>) {
        self.end(verdict, late);
    }

    /// Ends the span with no outcome, and records no point: an answer went by that could not be
    /// read (a missing answer is no outcome).
    #[cfg(feature = "streamable-http-server")]
    pub(crate) fn abandon(mut self) {
        self.done = true;
        self.cx.span().end();
    }

    fn end(&mut self, verdict: &Verdict, mut late: Vec<KeyValue>) {
        self.done = true;
        if let Some(network) = self.learnt.as_ref().and_then(|learnt| learnt.get()) {
            late.push(KeyValue::new(NETWORK_TRANSPORT, *network));
        }
        let mut point = std::mem::take(&mut self.point);
        // A protocol version and a transport learnt by the end are on the point too.
        point.extend(late.iter().filter(|kv| LEARNT_LATE.contains(&kv.key.as_str())).cloned());
        finish_span(&self.cx.span(), verdict, self.tool_call, late, &mut point);
        if matches!(verdict, Verdict::Finished(_)) {
            self.shared.lifecycle.metrics.record(self.side, self.started.elapsed(), &point);
        }
    }
}

impl Drop for Call {
    /// A request dropped before it was answered: on its sender, the caller dropped the call's
    /// future (cancelled/caller, the same as the other languages' abort); on its receiver, the
    /// handler's task ended with no answer (the server shutting down, or a panic).
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let outcome = match self.side {
            Side::Client => Outcome::cancelled(CancelReason::Caller),
            Side::Server => Outcome::failed(error_type::SHUTDOWN, "the handler ended with no answer", None),
        };
        self.end(&Verdict::Finished(outcome), Vec::new());
    }
}
