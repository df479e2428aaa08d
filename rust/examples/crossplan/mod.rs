//! What the Rust agents (crossagent over stdio, rust/http's httpagent over streamable HTTP) do with
//! their plan, `MCP_PLAN` (JSON): `[{"tool": "...", "arguments": {...}, "abortAfterMs": 300}]`, a
//! call with abortAfterMs being given up by its caller: its future dropped after that many ms
//! (`tokio::time::timeout`), Rust's way to stop waiting. One JSON line printed per call:
//! `{"tool", "isError"}` for a result, `{"tool", "error": "aborted"}` for a call its caller gave
//! up, `{"tool", "error": {"code": N|null}}` for any other error.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::{RoleClient, Service, ServiceError};
use serde_json::{Value, json};

/// Runs `plan`'s calls through `client`, one after another, printing what each gave.
///
/// # Errors
///
/// A step names no tool.
pub async fn run<S: Service<RoleClient>>(
    client: &mcp_otel::Client<S>,
    plan: Vec<JsonObject>,
) -> Result<(), Box<dyn std::error::Error>> {
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
    Ok(())
}
