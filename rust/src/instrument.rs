//! One instrumentation ([`McpOtel`]): its settings, tracer, metrics and propagator, shared by the
//! services and clients it wraps; what the builder's options build; and the process-wide default
//! the crate's functions use.

use std::sync::{Arc, OnceLock};

use opentelemetry::global::BoxedTracer;
use opentelemetry::metrics::Meter;
use opentelemetry::propagation::TextMapPropagator;
use rmcp::service::{RunningService, ServiceRole};
use rmcp::transport::{IntoTransport, Transport};
use rmcp::{RoleClient, Service};

use crate::client::Client;
use crate::config::Config;
use crate::lifecycle::{Lifecycle, Sending, Shared, Side};
use crate::metrics::CallMetrics;
use crate::options::Builder;
use crate::propagation::Propagation;
use crate::service::Instrumented;
use crate::wire::{self, Wire};

/// mcp-otel for rmcp: wraps services (requests handled: SERVER spans) and clients (requests the
/// application sends: CLIENT spans). Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct McpOtel(pub(crate) Arc<Shared>);

impl McpOtel {
    /// A builder of the options.
    pub fn builder() -> Builder {
        Builder::default()
    }

    pub(crate) fn new(
        tracer: BoxedTracer,
        meter: &Meter,
        propagator: Option<Arc<dyn TextMapPropagator + Send + Sync>>,
        config: Config,
    ) -> Self {
        let metrics = CallMetrics::new(meter, config.max_metric_names);
        let propagation = propagator.map_or(Propagation::Global, Propagation::Configured);
        Self(Arc::new(Shared {
            config,
            lifecycle: Lifecycle::new(tracer, metrics),
            propagation,
            sending: Sending::default(),
        }))
    }

    /// The process-wide default, on the global providers as they are at its first use (set them
    /// before the first [`service`](crate::service) or [`client`](crate::client) call).
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<McpOtel> = OnceLock::new();
        GLOBAL.get_or_init(|| Builder::default().build())
    }

    /// `service` with a SERVER span for every request it handles.
    pub fn service<S>(&self, service: S) -> Instrumented<S> {
        Instrumented::new(service, Arc::clone(&self.0))
    }

    /// `transport` (anything rmcp's `serve` takes) with the wire front end around it: what only the
    /// connection shows (a peer that hung up), and the requests sent past [`Client`] traced.
    pub fn transport<R, T, E, A>(&self, transport: T) -> Wire<impl Transport<R, Error = E> + use<R, T, E, A>>
    where
        R: ServiceRole,
        T: IntoTransport<R, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let side = if R::IS_CLIENT { Side::Client } else { Side::Server };
        let network = wire::network_transport(std::any::type_name::<T>());
        Wire::new(transport.into_transport(), Arc::clone(&self.0), side, network)
    }

    /// `service` (rmcp's `StreamableHttpService`) with a SERVER span for every request it serves
    /// without a session: all of them in rmcp's stateless mode, and a 2026-07-28 client's (which
    /// have no session). `server`: the handler its factory makes (its name and version); `config`:
    /// the service's. The requests of a session are its service's ([`service`](Self::service)).
    #[cfg(feature = "streamable-http-server")]
    pub fn sessionless<S, H: rmcp::ServerHandler>(
        &self,
        service: S,
        server: &H,
        config: &rmcp::transport::streamable_http_server::StreamableHttpServerConfig,
    ) -> crate::http::Sessionless<S> {
        crate::http::Sessionless::new(service, Arc::clone(&self.0), server, config)
    }

    /// `running` with a CLIENT span for every request sent through the returned client.
    pub fn client<S: Service<RoleClient>>(&self, running: RunningService<RoleClient, S>) -> Client<S> {
        Client::new(running, Arc::clone(&self.0))
    }
}

impl Builder {
    /// The instrumentation.
    pub fn build(self) -> McpOtel {
        let (tracer, meter, propagator, config) = self.parts();
        McpOtel::new(tracer, &meter, propagator, config)
    }
}
