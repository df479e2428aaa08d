//! Trace context in a request's `params._meta`: injected when sending, extracted when handling.
//! A peer's `_meta` is hostile input: only string values of the propagator's own fields are read,
//! each bounded.
//!
//! The default propagator is the global one, read at each request; while the application has set
//! none (OpenTelemetry's unset global has no fields), W3C trace context and baggage, written here:
//! the API crate has no W3C propagator and the crate depends on the API only.

use std::sync::Arc;

use opentelemetry::Context;
use opentelemetry::baggage::{BaggageExt, KeyValueMetadata};
use opentelemetry::global;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator, text_map_propagator::FieldIter};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use serde_json::{Map, Value};

/// W3C caps baggage at 8192 bytes; a longer value is not a header to parse.
const MAX_FIELD_LENGTH: usize = 8192;
const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";
const BAGGAGE: &str = "baggage";

/// A `_meta` object as a propagator's carrier.
pub(crate) struct MetaCarrier<'a>(pub(crate) &'a mut Map<String, Value>);

impl Injector for MetaCarrier<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// A peer's `_meta`, read only where it holds a bounded string.
pub(crate) struct MetaReader<'a>(pub(crate) &'a Map<String, Value>);

impl Extractor for MetaReader<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.as_str().filter(|value| value.len() <= MAX_FIELD_LENGTH)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Which propagator a request uses.
#[derive(Clone)]
pub(crate) enum Propagation {
    /// The application's, given to the builder.
    Configured(Arc<dyn TextMapPropagator + Send + Sync>),
    /// The global one, or [`W3c`] while that is unset.
    Global,
}

impl Propagation {
    fn with<T>(&self, mut f: impl FnMut(&dyn TextMapPropagator) -> T) -> T {
        match self {
            Self::Configured(propagator) => f(propagator.as_ref()),
            Self::Global => {
                global::get_text_map_propagator(
                    |global| {
                        if global.fields().next().is_none() { f(&W3c) } else { f(global) }
                    },
                )
            }
        }
    }

    /// The fields for the span in `cx` added to `meta` (the SDK's own keys kept).
    pub(crate) fn inject(&self, cx: &Context, meta: &mut Map<String, Value>) {
        self.with(|propagator| propagator.inject_context(cx, &mut MetaCarrier(meta)));
    }

    /// The sender's context in `meta` (with its baggage), when a valid span context came.
    pub(crate) fn extract(&self, meta: &Map<String, Value>) -> Option<Context> {
        if meta.is_empty() {
            return None;
        }
        let remote = self.with(|propagator| propagator.extract_with_context(&Context::new(), &MetaReader(meta)));
        remote.span().span_context().is_valid().then_some(remote)
    }
}

/// The span id in `meta`'s W3C `traceparent` (version 00), read without a propagator: how the wire
/// knows a request `Client` traced, at the cost of a lookup (any other propagator's fields go
/// through [`Propagation::extract`]).
pub(crate) fn traceparent_span(meta: &Map<String, Value>) -> Option<SpanId> {
    let header = meta.get(TRACEPARENT)?.as_str()?.as_bytes();
    if header.len() != 55 || !header.starts_with(b"00-") {
        return None;
    }
    let id = header[36..52].iter().try_fold(0u64, |id, &digit| {
        let nibble = match digit {
            b'0'..=b'9' => digit - b'0',
            b'a'..=b'f' => digit - b'a' + 10,
            _ => return None,
        };
        Some(id << 4 | u64::from(nibble))
    })?;
    Some(SpanId::from_bytes(id.to_be_bytes()))
}

/// W3C trace context (`traceparent`, `tracestate`) and baggage.
#[derive(Debug)]
pub(crate) struct W3c;

impl TextMapPropagator for W3c {
    fn inject_context(&self, cx: &Context, injector: &mut dyn Injector) {
        let span = cx.span();
        let context = span.span_context();
        if context.is_valid() {
            injector.set(
                TRACEPARENT,
                format!("00-{}-{}-{:02x}", context.trace_id(), context.span_id(), context.trace_flags().to_u8()),
            );
            let state = context.trace_state().header();
            if !state.is_empty() {
                injector.set(TRACESTATE, state);
            }
        }
        let baggage = cx.baggage();
        if !baggage.is_empty() {
            injector.set(BAGGAGE, baggage.to_string());
        }
    }

    fn extract_with_context(&self, cx: &Context, extractor: &dyn Extractor) -> Context {
        let mut out = cx.clone();
        if let Some(context) = extractor.get(TRACEPARENT).and_then(|header| parse_traceparent(header, extractor)) {
            out = out.with_remote_span_context(context);
        }
        if let Some(header) = extractor.get(BAGGAGE) {
            let members: Vec<KeyValueMetadata> = parse_baggage(header).collect();
            if !members.is_empty() {
                out = out.with_baggage(members);
            }
        }
        out
    }

    fn fields(&self) -> FieldIter<'_> {
        static FIELDS: std::sync::OnceLock<[String; 3]> = std::sync::OnceLock::new();
        FieldIter::new(FIELDS.get_or_init(|| [TRACEPARENT.to_owned(), TRACESTATE.to_owned(), BAGGAGE.to_owned()]))
    }
}

/// `00-{trace id}-{span id}-{flags}`; a later version may append fields after its first four.
fn parse_traceparent(header: &str, extractor: &dyn Extractor) -> Option<SpanContext> {
    let mut parts = header.trim().split('-');
    let (version, trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let known = version == "00";
    if version.len() != 2 || version == "ff" || (known && parts.next().is_some()) {
        return None;
    }
    if trace.len() != 32 || span.len() != 16 || flags.len() != 2 || !is_lower_hex(trace) || !is_lower_hex(span) {
        return None;
    }
    let trace_id = TraceId::from_hex(trace).ok()?;
    let span_id = SpanId::from_hex(span).ok()?;
    let flags = u8::from_str_radix(flags, 16).ok()?;
    let state = extractor.get(TRACESTATE).and_then(|header| header.parse::<TraceState>().ok()).unwrap_or_default();
    let context = SpanContext::new(trace_id, span_id, TraceFlags::new(flags & 1), true, state);
    context.is_valid().then_some(context)
}

fn is_lower_hex(text: &str) -> bool {
    text.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// A baggage header's members (`key=value;properties`), values percent-decoded; a malformed
/// member is skipped.
fn parse_baggage(header: &str) -> impl Iterator<Item = KeyValueMetadata> + '_ {
    header.split(',').filter_map(|member| {
        let (pair, properties) = member.split_once(';').unwrap_or((member, ""));
        let (key, value) = pair.split_once('=')?;
        let (key, value) = (key.trim(), percent_decode(value.trim())?);
        if key.is_empty() {
            return None;
        }
        Some(KeyValueMetadata::new(key.to_owned(), value, properties.trim().to_owned()))
    })
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}
