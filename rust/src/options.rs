//! The builder: the options the other languages have (spec/names.yaml `settings`), in the Rust
//! OpenTelemetry ecosystem's builder style. Rust reads no environment variables, as Go: an
//! application passes what it wants.

use std::sync::Arc;

use opentelemetry::InstrumentationScope;
use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::metrics::{Meter, MeterProvider};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{Span, Tracer, TracerProvider};

use crate::config::Config;
use crate::semconv::INSTRUMENTATION_SCOPE;

/// The crate's instrumentation scope (its name and version on every span and point).
pub(crate) fn scope() -> InstrumentationScope {
    InstrumentationScope::builder(INSTRUMENTATION_SCOPE).with_version(env!("CARGO_PKG_VERSION")).build()
}

/// Builds an [`McpOtel`](crate::McpOtel): `McpOtel::builder().tracer_provider(&provider).build()`.
///
/// Unset providers are the global ones, read when `build` runs; the unset propagator is the
/// global one, read at each request, or W3C trace context and baggage while the application has
/// set none (so that a client and a server instrumented with no other setup are one trace).
#[must_use]
#[derive(Default)]
pub struct Builder {
    tracer: Option<BoxedTracer>,
    meter: Option<Meter>,
    propagator: Option<Arc<dyn TextMapPropagator + Send + Sync>>,
    config: Config,
}

impl Builder {
    /// Spans from this provider (default: the global one).
    pub fn tracer_provider<P, T, S>(mut self, provider: &P) -> Self
    where
        P: TracerProvider<Tracer = T>,
        T: Tracer<Span = S> + Send + Sync + 'static,
        S: Span + Send + Sync + 'static,
    {
        self.tracer = Some(BoxedTracer::new(Box::new(provider.tracer_with_scope(scope()))));
        self
    }

    /// Points from this provider (default: the global one).
    pub fn meter_provider<P: MeterProvider + ?Sized>(mut self, provider: &P) -> Self {
        self.meter = Some(provider.meter_with_scope(scope()));
        self
    }

    /// Inject and extract trace context in `params._meta` with this propagator.
    pub fn propagator(mut self, propagator: impl TextMapPropagator + Send + Sync + 'static) -> Self {
        self.propagator = Some(Arc::new(propagator));
        self
    }

    /// Inject the propagator's fields into each request's `params._meta` (default: on).
    pub fn propagate(mut self, on: bool) -> Self {
        self.config.propagate = on;
        self
    }

    /// Record tool arguments and results on spans (default: off; they may hold anything).
    pub fn capture_content(mut self, on: bool) -> Self {
        self.config.capture_content = on;
        self
    }

    /// Captured content is cut to this many characters (default 4096).
    pub fn max_content_length(mut self, characters: usize) -> Self {
        self.config.max_content_length = characters;
        self
    }

    /// Tool, prompt, method and server names longer than this are cut (default 256).
    pub fn max_name_length(mut self, characters: usize) -> Self {
        self.config.max_name_length = characters;
        self
    }

    /// Distinct tool, prompt and server names the metrics keep; later ones read `_OTHER` (default 100).
    pub fn max_metric_names(mut self, names: usize) -> Self {
        self.config.max_metric_names = names;
        self
    }

    /// The server's identity on its own spans and points, instead of the one it reports.
    pub fn server_identity(mut self, name: impl Into<String>, version: Option<String>) -> Self {
        self.config.server_name = Some(name.into());
        self.config.server_version = version;
        self
    }

    /// Servers: parent each span to the context the client put in `params._meta` (default: on);
    /// off: a link to it only.
    pub fn trust_remote_context(mut self, on: bool) -> Self {
        self.config.trust_remote_context = on;
        self
    }

    /// Spans for `notifications/progress` and `notifications/message` too (default: off; a long
    /// call can send hundreds).
    pub fn trace_progress_and_logs(mut self, on: bool) -> Self {
        self.config.trace_progress_and_logs = on;
        self
    }

    /// `mcp.resource.uri` on the duration points too (default: off; the conventions make it opt-in:
    /// URIs are unbounded), the first `max_metric_names` distinct ones, later ones `_OTHER`.
    pub fn metrics_resource_uri(mut self, on: bool) -> Self {
        self.config.metrics_resource_uri = on;
        self
    }

    /// The providers, the propagator and the settings: unset providers are the global ones, now.
    pub(crate) fn parts(self) -> (BoxedTracer, Meter, Option<Arc<dyn TextMapPropagator + Send + Sync>>, Config) {
        let tracer = self.tracer.unwrap_or_else(|| global::tracer_provider().tracer_with_scope(scope()));
        let meter = self.meter.unwrap_or_else(|| global::meter_provider().meter_with_scope(scope()));
        (tracer, meter, self.propagator, self.config)
    }
}
