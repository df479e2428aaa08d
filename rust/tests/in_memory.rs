//! A real rmcp client and server over an in-memory pipe, both instrumented: each outcome as both
//! sides record it, one trace, the points beside the spans (docs/outcomes.md's rows for Rust).

use std::time::Duration;

use crate::common::{Telemetry, Weather, attribute, connect, outcome, rmcp_cancels_dropped_calls};
use opentelemetry::trace::{SpanKind, TraceContextExt, Tracer, TracerProvider};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use rmcp::{ServiceError, ServiceExt};

fn call(tool: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned())
}

#[allow(clippy::unnecessary_wraps)] // an attribute that is there, as `attribute` reads it
fn yes(value: &str) -> Option<String> {
    Some(value.to_owned())
}

#[tokio::test]
async fn an_answered_call_is_one_trace_of_two_spans_each_ok() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let result = client.call_tool(call("ok")).await.expect("answered");
    assert_eq!(result.content[0].as_text().map(|text| text.text.as_str()), Some("sunny"));

    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    let handled = telemetry.wait_for("tools/call ok", SpanKind::Server).await;
    assert_eq!(handled.span_context.trace_id(), sent.span_context.trace_id());
    assert_eq!(handled.parent_span_id, sent.span_context.span_id());
    for span in [&sent, &handled] {
        assert_eq!(outcome(span), (yes("ok"), None, None, false));
        assert_eq!(attribute(span, "tool.outcome"), yes("ok"));
        assert_eq!(attribute(span, "mcp.method.name"), yes("tools/call"));
        assert_eq!(attribute(span, "gen_ai.tool.name"), yes("ok"));
        assert_eq!(attribute(span, "gen_ai.operation.name"), yes("execute_tool"));
        assert_eq!(attribute(span, "mcp.server.name"), yes("weather"));
        assert_eq!(attribute(span, "mcp.server.version"), yes("2.1.0"));
    }
    // The server side knows the request's id; the client's typed call does not (docs/rust.md).
    assert_eq!(attribute(&handled, "jsonrpc.request.id"), yes("1"));
    assert_eq!(attribute(&sent, "jsonrpc.request.id"), None);
}

#[tokio::test]
async fn the_server_sees_the_trace_context_beside_rmcps_own_meta() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let weather = Weather::default();
    let (client, _server) = connect(&otel, &otel, weather.clone()).await;
    client.call_tool(call("ok")).await.expect("answered");
    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    let metas = weather.metas.lock().await.clone();
    let traceparent = format!("00-{}-{}-01", sent.span_context.trace_id(), sent.span_context.span_id());
    assert_eq!(metas[0].get("traceparent").and_then(|value| value.as_str()), Some(traceparent.as_str()));
    assert!(metas[0].contains_key("progressToken"), "rmcp's own key is kept: {:?}", metas[0]);
    assert!(!metas[0].contains_key("tracestate"), "no empty tracestate: {:?}", metas[0]);
}

#[tokio::test]
async fn a_tool_error_fails_on_both_sides() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let result = client.call_tool(call("iserr")).await.expect("an answer");
    assert_eq!(result.is_error, Some(true));
    let sent = telemetry.span("tools/call iserr", SpanKind::Client);
    let handled = telemetry.wait_for("tools/call iserr", SpanKind::Server).await;
    for span in [&sent, &handled] {
        assert_eq!(outcome(span), (yes("failed"), yes("tool_error"), None, true));
    }
}

#[tokio::test]
async fn a_server_error_fails_with_its_code_and_a_callers_fault_is_not_the_servers() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;

    let error = client.call_tool(call("fail")).await.expect_err("-32603");
    assert_eq!(error.to_string(), "Mcp error: -32603: backend down");
    let sent = telemetry.span("tools/call fail", SpanKind::Client);
    let handled = telemetry.wait_for("tools/call fail", SpanKind::Server).await;
    for span in [&sent, &handled] {
        assert_eq!(outcome(span), (yes("failed"), yes("-32603"), None, true));
        assert_eq!(attribute(span, "rpc.response.status_code"), yes("-32603"));
    }

    client.call_tool(call("invalid")).await.expect_err("-32602");
    let sent = telemetry.span("tools/call invalid", SpanKind::Client);
    let handled = telemetry.wait_for("tools/call invalid", SpanKind::Server).await;
    assert_eq!(outcome(&sent), (yes("failed"), yes("-32602"), None, true));
    // The server answered the caller's fault: failed, its code, but no error.type and status UNSET.
    assert_eq!(outcome(&handled), (yes("failed"), None, None, false));
    assert_eq!(attribute(&handled, "rpc.response.status_code"), yes("-32602"));
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_by_its_caller_at_the_drop() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let dropped = tokio::time::timeout(Duration::from_millis(200), client.call_tool(call("slow"))).await;
    assert!(dropped.is_err(), "the timeout dropped the call");
    // Ended at the drop, before any answer could come.
    let sent = telemetry.span("tools/call slow", SpanKind::Client);
    assert_eq!(outcome(&sent), (yes("cancelled"), None, yes("caller"), false));
    assert_eq!(attribute(&sent, "tool.cancel.reason"), yes("caller"));

    let handled = telemetry.wait_for("tools/call slow", SpanKind::Server).await;
    if rmcp_cancels_dropped_calls() {
        // rmcp >= 3.6 sends notifications/cancelled "request abandoned by the caller".
        assert_eq!(outcome(&handled), (yes("cancelled"), None, yes("client"), false));
    } else {
        // rmcp < 3.6 sends nothing: the server ran the call to its end and answered.
        assert_eq!(outcome(&handled), (yes("ok"), None, None, false));
    }
}

#[tokio::test]
async fn rmcps_timeout_fails_the_call_and_the_server_records_the_cancel() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(call("slow")));
    let sent = client
        .send_request_with_option(request, PeerRequestOptions::with_timeout(Duration::from_millis(200)))
        .await
        .expect("sent");
    let id = sent.id().to_string();
    let error = sent.await_response().await.expect_err("timed out");
    assert!(matches!(error, ServiceError::Timeout { .. }), "{error:?}");

    let sent = telemetry.span("tools/call slow", SpanKind::Client);
    assert_eq!(outcome(&sent), (yes("failed"), yes("timeout"), None, true));
    assert_eq!(attribute(&sent, "jsonrpc.request.id"), Some(id));
    // rmcp sent notifications/cancelled "request timeout": the server's call was cancelled by it.
    let handled = telemetry.wait_for("tools/call slow", SpanKind::Server).await;
    assert_eq!(outcome(&handled), (yes("cancelled"), None, yes("client"), false));
}

#[tokio::test]
async fn a_cancel_through_the_handle_is_the_callers_and_the_servers_is_clients() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(call("slow")));
    let sent = client.send_request_with_option(request, PeerRequestOptions::no_options()).await.expect("sent");
    tokio::time::sleep(Duration::from_millis(100)).await;
    sent.cancel(Some("the user gave up".to_owned())).await.expect("cancel sent");

    let sent = telemetry.span("tools/call slow", SpanKind::Client);
    assert_eq!(outcome(&sent), (yes("cancelled"), None, yes("caller"), false));
    let handled = telemetry.wait_for("tools/call slow", SpanKind::Server).await;
    assert_eq!(outcome(&handled), (yes("cancelled"), None, yes("client"), false));
}

#[tokio::test]
async fn every_outcome_is_a_point_with_the_spans_attributes() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    client.call_tool(call("ok")).await.expect("answered");
    client.call_tool(call("ok")).await.expect("answered");
    client.call_tool(call("iserr")).await.expect("answered");
    let _ = tokio::time::timeout(Duration::from_millis(100), client.call_tool(call("slow"))).await;
    telemetry.wait_for("tools/call slow", SpanKind::Server).await;

    let client_points = telemetry.points("mcp.client.operation.duration");
    let point = |points: &[(Vec<(String, String)>, u64)], tool: &str, outcome: &[(&str, &str)]| {
        points
            .iter()
            .find(|(attributes, _)| {
                attributes.iter().any(|(key, value)| key == "gen_ai.tool.name" && value == tool)
                    && outcome.iter().all(|(k, v)| attributes.iter().any(|(key, value)| key == k && value == v))
            })
            .map(|(attributes, count)| {
                let keys: Vec<&str> = attributes.iter().map(|(key, _)| key.as_str()).collect();
                (keys.join(","), *count)
            })
    };
    assert_eq!(
        point(&client_points, "ok", &[("mcp.request.outcome", "ok"), ("tool.outcome", "ok")]).map(|(_, count)| count),
        Some(2)
    );
    assert_eq!(
        point(&client_points, "iserr", &[("mcp.request.outcome", "failed"), ("error.type", "tool_error")])
            .map(|(_, count)| count),
        Some(1)
    );
    assert_eq!(
        point(&client_points, "slow", &[("mcp.request.outcome", "cancelled"), ("mcp.request.cancel.reason", "caller")])
            .map(|(_, count)| count),
        Some(1)
    );
    let server_points = telemetry.points("mcp.server.operation.duration");
    assert_eq!(point(&server_points, "ok", &[("mcp.request.outcome", "ok")]).map(|(_, count)| count), Some(2));
    // The point carries exactly the span's names, never the request id or the conversation.
    let (ok_point, _) = client_points
        .iter()
        .find(|(attributes, _)| attributes.iter().any(|(k, v)| k == "gen_ai.tool.name" && v == "ok"))
        .expect("a point");
    let keys: Vec<&str> = ok_point.iter().map(|(key, _)| key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "gen_ai.operation.name",
            "gen_ai.tool.name",
            "mcp.method.name",
            "mcp.protocol.version",
            "mcp.request.outcome",
            "mcp.server.name",
            "tool.outcome"
        ]
    );
}

#[tokio::test]
async fn the_callers_context_is_the_client_spans_parent() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let tracer = telemetry.tracer_provider.tracer("agent");
    let step = tracer.start("agent.step");
    let cx = opentelemetry::Context::current_with_span(step);
    let step_id = cx.span().span_context().span_id();
    {
        let _guard = cx.clone().attach();
        client.call_tool(call("ok")).await.expect("answered");
    }
    cx.span().end();
    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    assert_eq!(sent.parent_span_id, step_id);
}

#[tokio::test]
async fn a_tracing_span_is_the_client_spans_parent() {
    use tracing::Instrument;
    use tracing_subscriber::layer::SubscriberExt;

    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let layer = tracing_opentelemetry::layer().with_tracer(telemetry.tracer_provider.tracer("agent"));
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    client.call_tool(call("ok")).instrument(tracing::info_span!("agent.step")).await.expect("answered");

    let step = telemetry.span("agent.step", SpanKind::Internal);
    let sent = telemetry.span("tools/call ok", SpanKind::Client);
    assert_eq!(sent.parent_span_id, step.span_context.span_id());
    assert_eq!(sent.span_context.trace_id(), step.span_context.trace_id());
}

#[tokio::test]
async fn a_notification_received_is_a_server_span_with_no_outcome() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (_client, _server) = connect(&otel, &otel, Weather::default()).await;
    let initialized = telemetry.wait_for("notifications/initialized", SpanKind::Server).await;
    assert_eq!(attribute(&initialized, "mcp.method.name"), yes("notifications/initialized"));
    assert_eq!(attribute(&initialized, "mcp.server.name"), yes("weather"));
    assert_eq!(outcome(&initialized), (None, None, None, false));
    // The handshake's span states the version it agreed, as every later span does.
    let handshake = telemetry.span("initialize", SpanKind::Server);
    assert_eq!(outcome(&handshake), (yes("ok"), None, None, false));
    assert_eq!(attribute(&handshake, "mcp.protocol.version"), attribute(&initialized, "mcp.protocol.version"));
    let methods = telemetry.point_values("mcp.server.operation.duration", "mcp.method.name");
    assert_eq!(methods, ["initialize"], "the handshake's request has a point, its notification none");
}

#[tokio::test]
async fn a_client_that_hangs_up_mid_call_is_a_disconnect_with_the_wire_and_not_without() {
    for wired in [true, false] {
        let telemetry = Telemetry::new();
        let otel = telemetry.otel();
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let service = otel.service(Weather::default());
        let server = tokio::spawn(async move {
            let running = if wired {
                service.serve(mcp_otel::transport(server_io)).await
            } else {
                service.serve(server_io).await
            };
            if let Ok(running) = running {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.expect("handshake");
        let peer = client.peer().clone();
        let call = tokio::spawn(async move { peer.call_tool(call("slow")).await });
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The client goes away mid-call: its transport closes, the server's input ends.
        let _ = client.cancel().await;
        assert!(matches!(call.await.expect("joined"), Err(ServiceError::TransportClosed)));

        // The handler runs to its end (rmcp's drain), then its span ends.
        let handled = telemetry.wait_for("tools/call slow", SpanKind::Server).await;
        if wired {
            assert_eq!(outcome(&handled), (yes("cancelled"), None, yes("disconnect"), false));
        } else {
            // A service alone sees no hang-up: the answer rmcp writes to nobody looks answered.
            assert_eq!(outcome(&handled), (yes("ok"), None, None, false));
        }
        server.abort();
    }
}

#[tokio::test]
async fn a_cancel_then_a_hang_up_is_the_clients_cancel_with_the_wire() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let service = otel.service(Weather::default());
    tokio::spawn(async move {
        if let Ok(running) = service.serve(mcp_otel::transport(server_io)).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.expect("handshake");
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(call("slow")));
    let sent = client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.expect("sent");
    tokio::time::sleep(Duration::from_millis(100)).await;
    sent.cancel(Some("enough".to_owned())).await.expect("cancel sent");
    // And the client leaves at once: the cancel came first, and says why.
    let _ = client.cancel().await;
    let handled = telemetry.wait_for("tools/call slow", SpanKind::Server).await;
    assert_eq!(outcome(&handled), (yes("cancelled"), None, yes("client"), false));
}
