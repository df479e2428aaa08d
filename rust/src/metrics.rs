//! The duration histograms: one point per finished request, for every outcome (cancelled
//! included) and whether or not its span was sampled, with the span's own outcome attributes; one
//! per session the wire saw end. Names from peers are bounded: the first `max_metric_names` distinct ones are kept,
//! later ones read `_OTHER`; the methods the specification defines always pass.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::{KeyValue, Value};

use crate::semconv::{
    DURATION_BUCKETS, DURATION_UNIT, MCP_CLIENT_OPERATION_DURATION, MCP_CLIENT_SESSION_DURATION,
    MCP_SERVER_OPERATION_DURATION, MCP_SERVER_SESSION_DURATION, OTHER_VALUE,
};

/// Which side of a request this is: its sender (a CLIENT span, the client's histogram) or its
/// receiver (a SERVER span, the server's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Client = 0,
    Server = 1,
}

/// Which bound admits a point attribute's value.
#[derive(Clone, Copy)]
pub(crate) enum Bound {
    Method,
    Tool,
    Prompt,
    Server,
    Resource,
}

pub(crate) struct CallMetrics {
    durations: [Histogram<f64>; 2],
    sessions: [Histogram<f64>; 2],
    methods: NameBound,
    tools: NameBound,
    prompts: NameBound,
    servers: NameBound,
    resources: NameBound,
}

fn duration_histogram(meter: &Meter, name: &'static str, description: &'static str) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit(DURATION_UNIT)
        .with_description(description)
        .with_boundaries(DURATION_BUCKETS.to_vec())
        .build()
}

impl CallMetrics {
    pub(crate) fn new(meter: &Meter, max_names: usize) -> Self {
        Self {
            durations: [
                duration_histogram(
                    meter,
                    MCP_CLIENT_OPERATION_DURATION,
                    "Duration of MCP requests as their sender saw them.",
                ),
                duration_histogram(
                    meter,
                    MCP_SERVER_OPERATION_DURATION,
                    "Duration of MCP requests as their receiver handled them.",
                ),
            ],
            sessions: [
                duration_histogram(meter, MCP_CLIENT_SESSION_DURATION, "Duration of MCP sessions as clients saw them."),
                duration_histogram(meter, MCP_SERVER_SESSION_DURATION, "Duration of MCP sessions as servers saw them."),
            ],
            methods: NameBound::new(max_names),
            tools: NameBound::new(max_names),
            prompts: NameBound::new(max_names),
            servers: NameBound::new(max_names),
            resources: NameBound::new(max_names),
        }
    }

    /// `value` of `key` on a point, admitted by its bound (or `_OTHER`).
    pub(crate) fn point_attribute(&self, key: &'static str, value: &Arc<str>, bound: Bound) -> KeyValue {
        let bound = match bound {
            Bound::Method => &self.methods,
            Bound::Tool => &self.tools,
            Bound::Prompt => &self.prompts,
            Bound::Server => &self.servers,
            Bound::Resource => &self.resources,
        };
        if bound.admit(value) {
            KeyValue::new(key, Value::from(Arc::clone(value)))
        } else {
            KeyValue::new(key, OTHER_VALUE)
        }
    }

    /// Records one request of `side` that took `elapsed`, with its point's attributes (its outcome's
    /// among them, as the writer put them on its span).
    pub(crate) fn record(&self, side: Side, elapsed: Duration, point: &[KeyValue]) {
        self.durations[side as usize].record(elapsed.as_secs_f64(), point);
    }
}

impl CallMetrics {
    /// Records one session of `side` that lasted `elapsed`, with its point's attributes.
    pub(crate) fn record_session(&self, side: Side, elapsed: Duration, point: &[KeyValue]) {
        self.sessions[side as usize].record(elapsed.as_secs_f64(), point);
    }
}

/// Admits the first `limit` distinct names. The methods the specification defines never come here
/// (`attributes::describe` writes them as they are).
struct NameBound {
    limit: usize,
    names: Mutex<Names>,
}

#[derive(Default)]
struct Names {
    admitted: HashSet<String>,
    // The name admitted last: most calls name the one before's tool, and skip the hashing.
    last: Option<Arc<str>>,
}

impl NameBound {
    fn new(limit: usize) -> Self {
        Self { limit, names: Mutex::default() }
    }

    fn admit(&self, name: &Arc<str>) -> bool {
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        if names.last.as_deref() == Some(&**name) {
            return true;
        }
        let admitted = names.admitted.contains(&**name)
            || (names.admitted.len() < self.limit && names.admitted.insert(name.to_string()));
        if admitted {
            names.last = Some(Arc::clone(name));
        }
        admitted
    }
}
