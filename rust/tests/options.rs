//! Each option of `McpOtel::builder()` docs/rust.md lists, doing what the page says.

use crate::common::{Telemetry, Weather, attribute, connect, outcome};
use mcp_otel::McpOtel;
use opentelemetry::trace::SpanKind;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rmcp::model::CallToolRequestParams;

fn call(tool: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned())
}

fn builder(telemetry: &Telemetry) -> mcp_otel::Builder {
    McpOtel::builder().tracer_provider(&telemetry.tracer_provider).meter_provider(&telemetry.meter_provider)
}

#[tokio::test]
async fn server_identity_names_the_server_on_its_own_spans() {
    let telemetry = Telemetry::new();
    let server = builder(&telemetry).server_identity("forecasts", Some("9.9".to_owned())).build();
    let (client, _server) = connect(&server, &telemetry.otel(), Weather::default()).await;
    client.call_tool(call("ok")).await.expect("answered");
    let handled = telemetry.wait_for("tools/call ok", SpanKind::Server).await;
    assert_eq!(attribute(&handled, "mcp.server.name").as_deref(), Some("forecasts"));
    assert_eq!(attribute(&handled, "mcp.server.version").as_deref(), Some("9.9"));
    // The client names the server as the server reported itself.
    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    assert_eq!(attribute(&sent, "mcp.server.name").as_deref(), Some("weather"));
}

#[tokio::test]
async fn without_propagation_the_server_span_starts_its_own_trace() {
    let telemetry = Telemetry::new();
    let weather = Weather::default();
    let client_otel = builder(&telemetry).propagate(false).build();
    let (client, _server) = connect(&telemetry.otel(), &client_otel, weather.clone()).await;
    client.call_tool(call("ok")).await.expect("answered");
    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    let handled = telemetry.wait_for("tools/call ok", SpanKind::Server).await;
    assert_ne!(handled.span_context.trace_id(), sent.span_context.trace_id());
    assert!(!weather.metas.lock().await[0].contains_key("traceparent"));
}

#[tokio::test]
async fn an_untrusted_remote_context_is_a_link_not_a_parent() {
    let telemetry = Telemetry::new();
    let server = builder(&telemetry).trust_remote_context(false).build();
    let (client, _server) = connect(&server, &telemetry.otel(), Weather::default()).await;
    client.call_tool(call("ok")).await.expect("answered");
    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    let handled = telemetry.wait_for("tools/call ok", SpanKind::Server).await;
    assert_ne!(handled.span_context.trace_id(), sent.span_context.trace_id());
    let links: Vec<_> = handled.links.iter().map(|link| link.span_context.span_id()).collect();
    assert_eq!(links, [sent.span_context.span_id()]);
}

#[tokio::test]
async fn a_configured_propagator_carries_the_context() {
    let telemetry = Telemetry::new();
    let otel = builder(&telemetry).propagator(TraceContextPropagator::new()).build();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    client.call_tool(call("ok")).await.expect("answered");
    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    let handled = telemetry.wait_for("tools/call ok", SpanKind::Server).await;
    assert_eq!(handled.parent_span_id, sent.span_context.span_id());
}

#[tokio::test]
async fn names_are_bounded_and_metrics_keep_the_first_ones() {
    let telemetry = Telemetry::new();
    let otel = builder(&telemetry).max_name_length(4).max_metric_names(1).build();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    client.call_tool(call("ok")).await.expect("answered");
    client.call_tool(call("progress")).await.expect("answered");
    // Cut to 4 characters, the cut marked; the span's name too.
    let sent = telemetry.span("tools/call pro…", SpanKind::Client);
    assert_eq!(attribute(&sent, "gen_ai.tool.name").as_deref(), Some("pro…"));
    assert_eq!(attribute(&sent, "mcp.server.name").as_deref(), Some("wea…"));
    // The second tool's point reads _OTHER: one name kept.
    let tools = telemetry.point_values("mcp.client.operation.duration", "gen_ai.tool.name");
    assert_eq!(tools, ["_OTHER", "ok"]);
}

#[tokio::test]
async fn progress_notifications_have_spans_only_when_asked() {
    let telemetry = Telemetry::new();
    let quiet = telemetry.otel();
    let (client, _server) = connect(&quiet, &quiet, Weather::default()).await;
    client.call_tool(call("progress")).await.expect("answered");
    telemetry.wait_for("tools/call progress", SpanKind::Server).await;
    assert!(!telemetry.spans().iter().any(|span| span.name == "notifications/progress"));

    let asked = Telemetry::new();
    let otel = builder(&asked).trace_progress_and_logs(true).build();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    client.call_tool(call("progress")).await.expect("answered");
    // The client's service received it: a SERVER span of the notification, no outcome.
    let progress = asked.wait_for("notifications/progress", SpanKind::Server).await;
    assert_eq!(outcome(&progress), (None, None, None, false));
}

/// A tool call's arguments with a secret at each depth the redaction reaches.
fn with_secrets(tool: &str) -> CallToolRequestParams {
    let arguments = serde_json::json!({
        "city": "Paris",
        "api_key": "planted-1",
        "nested": {"Authorization": "Bearer planted-2", "list": [{"token": "planted-3", "days": 3}]},
    });
    call(tool).with_arguments(arguments.as_object().expect("an object").clone())
}

const ARGUMENTS: &str = r#"{"api_key":"[REDACTED]","city":"Paris","nested":{"Authorization":"[REDACTED]","list":[{"days":3,"token":"[REDACTED]"}]}}"#;

#[tokio::test]
async fn with_content_capture_both_spans_carry_a_tool_calls_arguments_and_result_redacted() {
    let telemetry = Telemetry::new();
    let otel = builder(&telemetry).capture_content(true).build();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    client.call_tool(with_secrets("ok")).await.expect("answered");
    client.call_tool(with_secrets("iserr")).await.expect("answered");
    client.call_tool(with_secrets("fail")).await.expect_err("-32603");
    for kind in [SpanKind::Client, SpanKind::Server] {
        let ok = telemetry.wait_for("tools/call ok", kind.clone()).await;
        assert_eq!(attribute(&ok, "gen_ai.tool.call.arguments").as_deref(), Some(ARGUMENTS));
        assert_eq!(
            attribute(&ok, "gen_ai.tool.call.result").as_deref(),
            Some(r#"{"content":[{"text":"sunny","type":"text"}],"isError":false}"#)
        );
        // A tool's error result is its result; a JSON-RPC error is none.
        let iserr = telemetry.wait_for("tools/call iserr", kind.clone()).await;
        assert_eq!(
            attribute(&iserr, "gen_ai.tool.call.result").as_deref(),
            Some(r#"{"content":[{"text":"which city?","type":"text"}],"isError":true}"#)
        );
        let fail = telemetry.wait_for("tools/call fail", kind).await;
        assert_eq!(attribute(&fail, "gen_ai.tool.call.arguments").as_deref(), Some(ARGUMENTS));
        assert_eq!(attribute(&fail, "gen_ai.tool.call.result"), None);
        // The peer's error message is the status description.
        assert_eq!(fail.status, opentelemetry::trace::Status::error("backend down"));
    }
    // Content is never on a point (a series per call), nor is a planted secret anywhere.
    for name in ["mcp.client.operation.duration", "mcp.server.operation.duration"] {
        let keys: Vec<String> =
            telemetry.points(name).into_iter().flat_map(|(point, _)| point).map(|(k, _)| k).collect();
        assert!(!keys.is_empty() && !keys.iter().any(|key| key.starts_with("gen_ai.tool.call.")), "{keys:?}");
    }
    assert!(!format!("{:?}", telemetry.spans()).contains("planted"));
}

#[tokio::test]
async fn captured_content_is_bounded_and_nothing_is_captured_by_default() {
    let telemetry = Telemetry::new();
    let otel = builder(&telemetry).capture_content(true).max_content_length(12).build();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let arguments = serde_json::json!({"city": "Zürich, Switzerland"});
    client.call_tool(call("ok").with_arguments(arguments.as_object().expect("an object").clone())).await.expect("ok");
    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    assert_eq!(attribute(&sent, "gen_ai.tool.call.arguments").as_deref(), Some(r#"{"city":"Zü…"#));

    // Off by default: neither the arguments nor the result, nor a peer's error message.
    let quiet = Telemetry::new();
    let otel = quiet.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    client.call_tool(with_secrets("ok")).await.expect("answered");
    client.call_tool(call("fail")).await.expect_err("-32603");
    for kind in [SpanKind::Client, SpanKind::Server] {
        let span = quiet.wait_for("tools/call ok", kind.clone()).await;
        let keys: Vec<&str> = span.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert!(!keys.iter().any(|key| key.starts_with("gen_ai.tool.call.")), "{keys:?}");
        assert_eq!(quiet.wait_for("tools/call fail", kind).await.status, opentelemetry::trace::Status::error(""));
    }
}

#[tokio::test]
async fn resource_uris_are_on_points_only_when_asked_and_bounded_like_names() {
    let read = |uri: &str| rmcp::model::ReadResourceRequestParams::new(uri.to_owned());
    let telemetry = Telemetry::new();
    let otel = builder(&telemetry).metrics_resource_uri(true).max_metric_names(1).build();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    // Weather serves no resources: each read fails (-32601), a point all the same.
    client.read_resource(read("file:///a.txt")).await.expect_err("no resources");
    client.read_resource(read("file:///b.txt")).await.expect_err("no resources");
    for name in ["mcp.client.operation.duration", "mcp.server.operation.duration"] {
        assert_eq!(telemetry.point_values(name, "mcp.resource.uri"), ["_OTHER", "file:///a.txt"], "{name}");
    }
    // Off by default: on the span, not on the point.
    let quiet = Telemetry::new();
    let otel = quiet.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    client.read_resource(read("file:///a.txt")).await.expect_err("no resources");
    assert_eq!(
        attribute(&quiet.span("resources/read", SpanKind::Client), "mcp.resource.uri").as_deref(),
        Some("file:///a.txt")
    );
    assert!(quiet.point_values("mcp.client.operation.duration", "mcp.resource.uri").is_empty());
}

#[tokio::test]
async fn every_outcome_is_a_point_whatever_the_sampler() {
    let telemetry = Telemetry::new();
    let unsampled = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_sampler(opentelemetry_sdk::trace::Sampler::AlwaysOff)
        .with_simple_exporter(telemetry.spans.clone())
        .build();
    let otel = McpOtel::builder().tracer_provider(&unsampled).meter_provider(&telemetry.meter_provider).build();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    client.call_tool(call("ok")).await.expect("answered");
    client.call_tool(call("iserr")).await.expect("answered");
    assert!(telemetry.spans().is_empty(), "no span sampled");
    let outcomes = telemetry.point_values("mcp.client.operation.duration", "mcp.request.outcome");
    assert_eq!(outcomes, ["failed", "ok"]);
}
