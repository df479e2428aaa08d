//! A Rust MCP agent over streamable HTTP for the cross-language tests (tests/rust, `test_http.py`):
//! rmcp's own streamable HTTP client, instrumented with mcp-otel as docs/rust.md shows (no
//! propagator set), calls tools of the server at the URL given; otherwise the stdio agent's twin
//! (rust/examples/crossagent.rs: the same plan, the same lines printed).
//!
//! ```text
//! httpagent http://127.0.0.1:PORT/mcp
//! ```
//!
//! `MCP_PLAN` (JSON) lists the calls: `[{"tool": "...", "arguments": {...}, "abortAfterMs": 300}]`,
//! a call with abortAfterMs being given up by its caller: its future dropped after that many ms
//! (`tokio::time::timeout`). Prints one JSON line per call: `{"tool", "isError"}` for a result,
//! `{"tool", "error": "aborted"}` for a call its caller gave up, `{"tool", "error": {"code": N|null}}`
//! for any other error.
//!
//! Each finished span is appended to the file `MCP_OTEL_RUST_SPAN_FILE` as one JSON line (the
//! fields tests/node/telemetry.cjs writes), as it ends.

#[path = "../../../examples/spanlines/mod.rs"]
mod spanlines;

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, JsonObject};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: httpagent http://127.0.0.1:PORT/mcp")?;
    let plan: Vec<JsonObject> = serde_json::from_str(&spanlines::env_or("MCP_PLAN", "[]"))?;

    let provider = spanlines::tracer_provider("mcp-otel-rust-agent")?;
    let otel = mcp_otel::McpOtel::builder().tracer_provider(&provider).build();

    let transport = StreamableHttpClientTransport::from_uri(url);
    let info = ClientConfig::new(ClientCapabilities::default(), Implementation::new("rust-agent", "1.0.0"));
    let client = otel.client(otel.service(info).serve(transport).await?);

    for step in plan {
        let tool = step.get("tool").and_then(Value::as_str).ok_or("a step without a tool")?.to_owned();
        let arguments = step.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default();
        let call = client.call_tool(CallToolRequestParams::new(tool.clone()).with_arguments(arguments));
        let answered = match step.get("abortAfterMs").and_then(Value::as_u64) {
            Some(ms) => tokio::time::timeout(Duration::from_millis(ms), call).await.ok(),
            None => Some(call.await),
        };
        let line = match answered {
            Some(Ok(result)) => json!({"tool": tool, "isError": result.is_error == Some(true)}),
            None => json!({"tool": tool, "error": "aborted"}),
            Some(Err(ServiceError::McpError(error))) => json!({"tool": tool, "error": {"code": error.code.0}}),
            Some(Err(_)) => json!({"tool": tool, "error": {"code": null}}),
        };
        println!("{line}");
    }
    // Ends the session (rmcp's client sends DELETE).
    client.into_inner().cancel().await?;
    provider.shutdown()?;
    Ok(())
}
