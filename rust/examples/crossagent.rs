//! A Rust MCP agent for the cross-language tests (tests/rust): rmcp's own client, instrumented
//! with mcp-otel as docs/rust.md shows (no propagator set), calls tools of the stdio server whose
//! command follows (as go/test/internal/cmd/crossagent does).
//!
//! ```text
//! crossagent COMMAND [ARGS...]
//! ```
//!
//! `MCP_PLAN` (JSON) lists the calls: `[{"tool": "...", "arguments": {...}, "abortAfterMs": 300}]`,
//! a call with abortAfterMs being given up by its caller: its future dropped after that many ms
//! (`tokio::time::timeout`), Rust's way to stop waiting. `MCP_SERVER_ENV` (JSON object): the
//! server's environment besides this one's. Prints one JSON line per call: `{"tool", "isError"}`
//! for a result, `{"tool", "error": "aborted"}` for a call its caller gave up,
//! `{"tool", "error": {"code": N|null}}` for any other error.
//!
//! Each finished span is appended to the file `MCP_OTEL_RUST_SPAN_FILE` as one JSON line (the
//! fields tests/node/telemetry.cjs writes), as it ends.

mod spanlines;

use std::collections::HashMap;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, JsonObject};
use rmcp::transport::TokioChildProcess;
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let program = args.next().ok_or("usage: crossagent COMMAND [ARGS...]")?;
    let plan: Vec<JsonObject> = serde_json::from_str(&spanlines::env_or("MCP_PLAN", "[]"))?;
    let server_env: HashMap<String, String> = serde_json::from_str(&spanlines::env_or("MCP_SERVER_ENV", "{}"))?;

    let provider = spanlines::tracer_provider("mcp-otel-rust-agent")?;
    let otel = mcp_otel::McpOtel::builder().tracer_provider(&provider).build();

    let mut command = tokio::process::Command::new(program);
    command.args(args).envs(server_env);
    let transport = TokioChildProcess::new(command)?;
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
    // Over stdio, closing stdin ends the server; rmcp waits (3 s at most) for it to exit.
    client.into_inner().cancel().await?;
    provider.shutdown()?;
    Ok(())
}
