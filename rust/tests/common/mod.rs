//! What the tests share: the OpenTelemetry SDK with in-memory exporters, a real rmcp server
//! (`Weather`), and a client and server connected over an in-memory pipe.
#![allow(dead_code)] // rust/frameworks' test uses its own part
#![allow(clippy::needless_pass_by_value)] // SpanKind, as the SDK passes it

use std::sync::Arc;
use std::time::Duration;

use mcp_otel::McpOtel;
use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, NumberOrString, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::Mutex;

/// The SDK, exporting to memory: what the tests read back.
pub struct Telemetry {
    pub spans: InMemorySpanExporter,
    pub tracer_provider: SdkTracerProvider,
    pub metrics: InMemoryMetricExporter,
    pub meter_provider: SdkMeterProvider,
}

impl Telemetry {
    pub fn new() -> Self {
        let spans = InMemorySpanExporter::default();
        let tracer_provider = SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
        let metrics = InMemoryMetricExporter::default();
        let meter_provider =
            SdkMeterProvider::builder().with_reader(PeriodicReader::builder(metrics.clone()).build()).build();
        Self { spans, tracer_provider, metrics, meter_provider }
    }

    /// An instrumentation on these providers.
    pub fn otel(&self) -> McpOtel {
        McpOtel::builder().tracer_provider(&self.tracer_provider).meter_provider(&self.meter_provider).build()
    }

    pub fn spans(&self) -> Vec<SpanData> {
        self.spans.get_finished_spans().expect("spans")
    }

    /// The one finished span named `name` of `kind`.
    pub fn span(&self, name: &str, kind: SpanKind) -> SpanData {
        let found: Vec<SpanData> =
            self.spans().into_iter().filter(|span| span.name == name && span.span_kind == kind).collect();
        assert_eq!(found.len(), 1, "spans named {name} of kind {kind:?}: {:?}", names(&self.spans()));
        found.into_iter().next().expect("one")
    }

    /// Waits (up to 10 s) for the span named `name` of `kind` to end.
    pub async fn wait_for(&self, name: &str, kind: SpanKind) -> SpanData {
        for _ in 0..1000 {
            if self.spans().iter().any(|span| span.name == name && span.span_kind == kind) {
                return self.span(name, kind);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no span {name} of kind {kind:?}: {:?}", names(&self.spans()));
    }

    /// The points of histogram `name`: their attributes (sorted) and counts. Each flush exports
    /// every point again (cumulative), so the last export is read, alone.
    pub fn points(&self, name: &str) -> Vec<(Vec<(String, String)>, u64)> {
        self.meter_provider.force_flush().expect("flush");
        let mut out = Vec::new();
        if let Some(resource) = self.metrics.get_finished_metrics().expect("metrics").last() {
            for scope in resource.scope_metrics() {
                for metric in scope.metrics().filter(|metric| metric.name() == name) {
                    if let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() {
                        out.extend(histogram.data_points().map(|point: &HistogramDataPoint<f64>| {
                            (sorted(point.attributes().cloned().collect()), point.count())
                        }));
                    }
                }
            }
        }
        out
    }
}

impl Telemetry {
    /// Each point of histogram `name`'s value of attribute `key`, sorted.
    pub fn point_values(&self, name: &str, key: &str) -> Vec<String> {
        let mut values: Vec<String> = self
            .points(name)
            .into_iter()
            .filter_map(|(attributes, _)| attributes.into_iter().find(|(found, _)| found == key))
            .map(|(_, value)| value)
            .collect();
        values.sort();
        values
    }
}

fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|span| format!("{} ({:?})", span.name, span.span_kind)).collect()
}

/// Attributes as sorted (key, value) texts: what an assertion compares.
pub fn sorted(attributes: Vec<KeyValue>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        attributes.into_iter().map(|kv| (kv.key.as_str().to_owned(), kv.value.as_str().into_owned())).collect();
    out.sort();
    out
}

/// A span's attribute `key`, as text.
pub fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.as_str().into_owned())
}

/// A span's outcome attributes and status, the way the tests state them.
pub fn outcome(span: &SpanData) -> (Option<String>, Option<String>, Option<String>, bool) {
    (
        attribute(span, "mcp.request.outcome"),
        attribute(span, "error.type"),
        attribute(span, "mcp.request.cancel.reason"),
        matches!(span.status, Status::Error { .. }),
    )
}

pub fn text(value: &str) -> Value {
    Value::from(value.to_owned())
}

/// The rmcp version this test binary was built against (its package's Cargo.lock says).
pub fn rmcp_version() -> (u32, u32) {
    let lock = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"));
    let version = lock
        .split("[[package]]")
        .find(|package| package.contains("name = \"rmcp\"\n"))
        .and_then(|package| package.lines().find_map(|line| line.strip_prefix("version = \"")))
        .expect("rmcp in Cargo.lock");
    let mut parts = version.trim_end_matches('"').split('.').map(|part| part.parse::<u32>().expect("a number"));
    (parts.next().expect("major"), parts.next().expect("minor"))
}

/// Whether rmcp's typed client methods send `notifications/cancelled` when their future is dropped
/// (rmcp 3.6 and later: "request abandoned by the caller").
pub fn rmcp_cancels_dropped_calls() -> bool {
    rmcp_version() >= (3, 6)
}

/// A real rmcp server: tools `ok`, `iserr` (a tool error), `fail` (-32603), `invalid` (-32602),
/// `progress` (a progress notification, then ok), `slow` (3 s, or until its request is cancelled).
#[derive(Clone, Default)]
pub struct Weather {
    /// What each handled request's handler saw of its `_meta` (the keys we add are there).
    pub metas: Arc<Mutex<Vec<serde_json::Map<String, serde_json::Value>>>>,
}

impl ServerHandler for Weather {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("weather", "2.1.0"))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::default())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.metas.lock().await.push(context.meta.0.0.clone());
        let done = |text: &str| Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(text)])));
        match &*request.name {
            "ok" => done("sunny"),
            "iserr" => Ok(CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text("which city?")]))),
            "fail" => Err(ErrorData::internal_error("backend down", None)),
            "invalid" => Err(ErrorData::invalid_params("no such city", None)),
            "progress" => {
                let token = ProgressToken(NumberOrString::Number(0));
                context.peer.notify_progress(ProgressNotificationParam::new(token, 0.5)).await.expect("sent");
                done("halfway")
            }
            "slow" => tokio::select! {
                () = context.ct.cancelled() => Err(ErrorData::internal_error("cancelled", None)),
                () = tokio::time::sleep(Duration::from_secs(3)) => done("rain"),
            },
            _ => Err(ErrorData::invalid_params("unknown tool", None)),
        }
    }
}

/// A client and a `Weather` server over an in-memory pipe, each instrumented by its own `otel`.
pub async fn connect(
    server_otel: &McpOtel,
    client_otel: &McpOtel,
    weather: Weather,
) -> (mcp_otel::Client<mcp_otel::Instrumented<()>>, tokio::task::JoinHandle<()>) {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let service = server_otel.service(weather);
    let server = tokio::spawn(async move {
        if let Ok(running) = service.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let running: RunningService<RoleClient, _> = client_otel.service(()).serve(client_io).await.expect("handshake");
    (client_otel.client(running), server)
}
