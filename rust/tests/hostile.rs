//! What a peer sends is hostile input: a server instrumented with the crate, fed raw JSON-RPC lines
//! over a pipe (malformed messages, hostile `_meta`, huge names), answers as it would without the
//! crate, never panics, and records bounded names only.

use std::time::Duration;

use crate::common::{Telemetry, Weather, attribute, connect};
use opentelemetry::trace::SpanKind;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A server on one end of a pipe; the test writes lines to the other and reads the answers.
struct Wire {
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    reader: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Wire {
    async fn send(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.expect("written");
        self.writer.write_all(b"\n").await.expect("written");
    }

    /// The answer to request `id` (other messages skipped).
    async fn answer(&mut self, id: i64) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.reader.next_line())
                .await
                .expect("an answer in time")
                .expect("read")
                .expect("a line");
            let message: Value = serde_json::from_str(&line).expect("the server writes JSON");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }
}

async fn serve(telemetry: &Telemetry) -> (Wire, tokio::task::JoinHandle<()>) {
    let (ours, theirs) = tokio::io::duplex(1 << 22);
    let service = telemetry.otel().service(Weather::default());
    let server = tokio::spawn(async move {
        if let Ok(running) = service.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    let (reader, writer) = tokio::io::split(ours);
    let mut wire = Wire { writer, reader: BufReader::new(reader).lines() };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}});
    wire.send(&initialize.to_string()).await;
    assert_eq!(wire.answer(0).await["result"]["serverInfo"]["name"], "weather");
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    (wire, server)
}

#[tokio::test]
async fn malformed_messages_and_hostile_meta_change_nothing_and_panic_nothing() {
    let telemetry = Telemetry::new();
    let (mut wire, server) = serve(&telemetry).await;

    // Lines that are not JSON-RPC requests at all.
    for line in ["{not json", "[]", "null", r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"oops"}"#] {
        wire.send(line).await;
    }
    // Hostile _meta: a traceparent of the wrong shape, a huge tracestate, values of other types.
    let hostile = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "ok",
        "_meta": {"traceparent": "00-zz-zz-01", "tracestate": "x".repeat(100_000), "baggage": 5, "progressToken": []}}});
    wire.send(&hostile.to_string()).await;
    let answer = wire.answer(6).await;
    assert_eq!(answer["result"]["content"][0]["text"], "sunny");

    // A huge tool name: the server's own answer, a bounded span name and attribute.
    let huge = "n".repeat(1_000_000);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": huge}});
    wire.send(&call.to_string()).await;
    assert_eq!(wire.answer(7).await["error"]["code"], -32602);
    let bounded = format!("{}…", "n".repeat(255));
    let span = telemetry.wait_for(&format!("tools/call {bounded}"), SpanKind::Server).await;
    assert_eq!(attribute(&span, "gen_ai.tool.name"), Some(bounded));

    // Still serving, and no span took the hostile context for its parent.
    wire.send(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#).await;
    assert_eq!(wire.answer(8).await["result"], json!({}));
    let ok = telemetry.span("tools/call ok", SpanKind::Server);
    assert_eq!(ok.parent_span_id, opentelemetry::trace::SpanId::INVALID);
    assert!(!server.is_finished(), "the server is still running");
}

/// An exporter that is down: every export fails.
#[derive(Debug)]
struct Down;

impl opentelemetry_sdk::trace::SpanExporter for Down {
    async fn export(&self, _: Vec<opentelemetry_sdk::trace::SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
        Err(opentelemetry_sdk::error::OTelSdkError::InternalFailure("the collector is down".to_owned()))
    }
}

#[tokio::test]
async fn an_exporter_that_is_down_changes_no_answer() {
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().with_simple_exporter(Down).build();
    let otel = mcp_otel::McpOtel::builder().tracer_provider(&provider).build();
    let (client, _server) = connect(&otel, &otel, Weather::default()).await;
    let answer = client.call_tool(rmcp::model::CallToolRequestParams::new("ok")).await.expect("answered");
    assert_eq!(answer.content[0].as_text().map(|text| text.text.as_str()), Some("sunny"));
    let error = client.call_tool(rmcp::model::CallToolRequestParams::new("fail")).await.expect_err("-32603");
    assert_eq!(error.to_string(), "Mcp error: -32603: backend down");
}
