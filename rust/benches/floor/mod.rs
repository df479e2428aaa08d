//! The floor of `cost.rs`: the spans and points mcp-otel makes for a `tools/call`, made by hand
//! around rmcp's own calls (a CLIENT span with the request's id and transport, the trace context
//! injected into `_meta`, one histogram point; on the server a SERVER span parented to it, one
//! point). `rust/tests/floor.rs` holds it to what mcp-otel records, so that the benchmark compares
//! like with like.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use opentelemetry::global::BoxedTracer;
use opentelemetry::metrics::{Histogram, MeterProvider};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanBuilder, SpanKind, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, ErrorData, InitializeResult, MetaObject, RequestId, RequestMetaObject,
    ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{RoleClient, RoleServer, ServerHandler, Service};

/// The same span and point mcp-otel makes, by hand.
#[derive(Clone)]
pub struct Floor {
    tracer: Arc<BoxedTracer>,
    client: Histogram<f64>,
    server: Histogram<f64>,
}

impl Floor {
    pub fn new(tracer_provider: &SdkTracerProvider, meter_provider: &SdkMeterProvider) -> Self {
        let tracer = BoxedTracer::new(Box::new(tracer_provider.tracer("floor")));
        let meter = meter_provider.meter("floor");
        let histogram = |name: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_boundaries(mcp_otel::semconv::DURATION_BUCKETS.to_vec())
                .build()
        };
        Self {
            tracer: Arc::new(tracer),
            client: histogram("mcp.client.operation.duration"),
            server: histogram("mcp.server.operation.duration"),
        }
    }

    /// The point's attributes of a call of `tool` over `network` (the span has them too, and the
    /// server's version and the request's id).
    fn point(tool: &str, server: &str, protocol: String, network: Option<&'static str>) -> Vec<KeyValue> {
        let mut point = vec![
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", tool.to_owned()),
            KeyValue::new("mcp.server.name", server.to_owned()),
            KeyValue::new("mcp.protocol.version", protocol),
        ];
        if let Some(network) = network {
            point.push(KeyValue::new("network.transport", network));
        }
        point
    }

    fn start(&self, kind: SpanKind, tool: &str, parent: &Context, point: &[KeyValue], version: &str) -> Context {
        let mut attributes = point.to_vec();
        attributes.push(KeyValue::new("mcp.server.version", version.to_owned()));
        let builder = SpanBuilder::from_name(format!("tools/call {tool}")).with_kind(kind).with_attributes(attributes);
        parent.with_span(self.tracer.build_with_context(builder, parent))
    }

    fn request_id(cx: &Context, id: &RequestId) {
        cx.span().set_attribute(KeyValue::new("jsonrpc.request.id", id.to_string()));
    }

    /// Writes the result's outcome on the span, ends it, records the point.
    fn end(cx: &Context, histogram: &Histogram<f64>, started: Instant, mut point: Vec<KeyValue>, is_error: bool) {
        let known = point.len();
        let outcome = if is_error { "failed" } else { "ok" };
        point.push(KeyValue::new("mcp.request.outcome", outcome));
        point.push(KeyValue::new("tool.outcome", outcome));
        if is_error {
            point.push(KeyValue::new("error.type", "tool_error"));
        }
        let span = cx.span();
        span.set_attributes(point[known..].iter().cloned());
        if is_error {
            span.set_status(opentelemetry::trace::Status::error(""));
        }
        span.end();
        histogram.record(started.elapsed().as_secs_f64(), &point);
    }

    /// rmcp's `call_tool`, as `Client` calls it. The request's id is rmcp's next (its ids count from
    /// 0, the handshake's): only a transport wrapper sees it, so the floor counts them.
    pub async fn call(
        &self,
        client: &RunningService<RoleClient, ()>,
        tool: &str,
        network: Option<&'static str>,
        id: i64,
    ) {
        let started = Instant::now();
        let peer = client.peer().peer_info().expect("the handshake");
        let server = peer.server_info.as_ref().expect("a server");
        let point = Self::point(tool, &server.name, peer.protocol_version.to_string(), network);
        let cx = self.start(SpanKind::Client, tool, &Context::current(), &point, &server.version);
        let mut meta = serde_json::Map::new();
        TraceContextPropagator::new().inject_context(&cx, &mut Meta(&mut meta));
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.meta = Some(RequestMetaObject(MetaObject(meta)));
        Self::request_id(&cx, &RequestId::Number(id));
        let result = client.call_tool(params).await.expect("answered");
        Self::end(&cx, &self.client, started, point, result.is_error == Some(true));
    }
}

struct Meta<'a>(&'a mut serde_json::Map<String, serde_json::Value>);

impl opentelemetry::propagation::Injector for Meta<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value.into());
    }
}

struct Read<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl opentelemetry::propagation::Extractor for Read<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(serde_json::Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// The floor's server: a SERVER span and a point around the handler, by hand.
pub struct FloorServer<S> {
    floor: Floor,
    inner: S,
    network: Option<&'static str>,
    /// The server's name and version, read once from its handler.
    server: (String, String),
}

impl<S: ServerHandler> FloorServer<S> {
    pub fn new(floor: Floor, inner: S, network: Option<&'static str>) -> Self {
        let info = inner.get_info().server_info;
        Self { floor, inner, network, server: (info.name, info.version) }
    }
}

impl<S: ServerHandler> Service<RoleServer> for FloorServer<S> {
    async fn handle_request(
        &self,
        request: rmcp::model::ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let ClientRequest::CallToolRequest(call) = &request else {
            return self.inner.handle_request(request, context).await;
        };
        let started = Instant::now();
        let tool = call.params.name.to_string();
        let protocol = context.peer.peer_info().map(|client| client.protocol_version.to_string()).unwrap_or_default();
        let point = Floor::point(&tool, &self.server.0, protocol, self.network);
        let parent = TraceContextPropagator::new().extract(&Read(&context.meta.0.0));
        let cx = self.floor.start(SpanKind::Server, &tool, &parent, &point, &self.server.1);
        Floor::request_id(&cx, &context.id);
        let result =
            opentelemetry::context::FutureExt::with_context(self.inner.handle_request(request, context), cx.clone())
                .await;
        let is_error = matches!(&result, Ok(ServerResult::CallToolResult(answer)) if answer.is_error == Some(true));
        Floor::end(&cx, &self.floor.server, started, point, is_error || result.is_err());
        result
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.handle_notification(notification, context).await
    }

    fn get_info(&self) -> InitializeResult {
        ServerHandler::get_info(&self.inner)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [rmcp::model::ProtocolVersion]> {
        Service::<RoleServer>::supported_protocol_versions(&self.inner)
    }
}
