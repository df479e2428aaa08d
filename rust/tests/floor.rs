//! The benchmark's floor (`benches/floor`) records what mcp-otel records for a `tools/call`: the
//! same spans (names, kinds, attributes, status, parents) and the same points, so that
//! `make rust-bench` sets like beside like (docs/rust.md, Cost).

#[path = "../benches/floor/mod.rs"]
mod by_hand;

use crate::common::{Telemetry, Weather, sorted};
use by_hand::{Floor, FloorServer};
use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;

const OPERATIONS: [&str; 2] = ["mcp.client.operation.duration", "mcp.server.operation.duration"];

/// A span as the comparison reads it: its name, kind, attributes and status, and whether its
/// parent is the other side's span (`None`: a root).
type Seen = (String, String, Vec<(String, String)>, Status, Option<String>);

/// A point as the comparison reads it: its histogram's name and its attributes.
type Point = (String, Vec<(String, String)>);

/// The two spans of the call to `tool` (CLIENT, then SERVER) and its two points.
fn recorded(telemetry: &Telemetry, tool: &str) -> (Vec<Seen>, Vec<Point>) {
    let name = format!("tools/call {tool}");
    let client = telemetry.span(&name, SpanKind::Client);
    let server = telemetry.span(&name, SpanKind::Server);
    let seen = |span: &SpanData, parent: Option<&SpanData>| -> Seen {
        let parent = (span.parent_span_id != SpanId::INVALID).then(|| {
            assert_eq!(Some(span.parent_span_id), parent.map(|parent| parent.span_context.span_id()), "{}", span.name);
            "the client's".to_owned()
        });
        (
            span.name.to_string(),
            format!("{:?}", span.span_kind),
            sorted(span.attributes.clone()),
            span.status.clone(),
            parent,
        )
    };
    let spans = vec![seen(&client, None), seen(&server, Some(&client))];
    (spans, operation_points(telemetry))
}

/// The points of the two operation histograms for `tools/call`, client first.
fn operation_points(telemetry: &Telemetry) -> Vec<Point> {
    let tool_call = ("mcp.method.name".to_owned(), "tools/call".to_owned());
    OPERATIONS
        .iter()
        .flat_map(|histogram| {
            telemetry.points(histogram).into_iter().map(|(attributes, count)| {
                assert_eq!(count, 1);
                ((*histogram).to_owned(), attributes)
            })
        })
        .filter(|(_, attributes)| attributes.contains(&tool_call))
        .collect()
}

/// One call of `tool` through the floor, in memory.
async fn floor_calls(tool: &str) -> Telemetry {
    let telemetry = Telemetry::new();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let floor = Floor::new(&telemetry.tracer_provider, &telemetry.meter_provider);
    let server = FloorServer::new(floor.clone(), Weather::default(), None);
    let serving = tokio::spawn(async move { server.serve(server_io).await.expect("served").waiting().await });
    let client = ().serve(client_io).await.expect("handshake");
    // rmcp's ids count from 0, the handshake's: the call is request 1.
    floor.call(&client, tool, None, 1).await;
    client.cancel().await.expect("closed");
    serving.await.expect("server ended").expect("server waited");
    telemetry
}

/// One call of `tool` through mcp-otel as docs/rust.md shows it (`ours` in the benchmark).
async fn ours_calls(tool: &str) -> Telemetry {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let server = otel.service(Weather::default());
    let server_io = otel.transport(server_io);
    let serving = tokio::spawn(async move { server.serve(server_io).await.expect("served").waiting().await });
    let client = otel.client(().serve(otel.transport(client_io)).await.expect("handshake"));
    client.call_tool(CallToolRequestParams::new(tool.to_owned())).await.expect("answered");
    client.into_inner().cancel().await.expect("closed");
    serving.await.expect("server ended").expect("server waited");
    telemetry
}

#[tokio::test]
async fn the_floor_records_the_spans_and_points_mcp_otel_records() {
    let (floor, ours) = (floor_calls("ok").await, ours_calls("ok").await);
    let (floor_spans, floor_points) = recorded(&floor, "ok");
    let (ours_spans, ours_points) = recorded(&ours, "ok");
    assert_eq!(floor_spans, ours_spans);
    assert_eq!(floor_points, ours_points);
    assert_eq!(floor_points.len(), 2);
    // What is compared: the outcome, the request's id, the server's identity among them.
    for attribute in [("tool.outcome", "ok"), ("jsonrpc.request.id", "1"), ("mcp.server.name", "weather")] {
        let attribute = (attribute.0.to_owned(), attribute.1.to_owned());
        assert!(ours_spans.iter().all(|(_, _, attributes, _, _)| attributes.contains(&attribute)), "{attribute:?}");
    }
}
