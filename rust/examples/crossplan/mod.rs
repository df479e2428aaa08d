//! What the Rust agents (crossagent over stdio, rust/http's httpagent over streamable HTTP) do with
//! their plan, `MCP_PLAN` (JSON): `[{"tool": "...", "arguments": {...}, "abortAfterMs": 300}]`, a
//! call with abortAfterMs being given up by its caller: its future dropped after that many ms
//! (`tokio::time::timeout`), Rust's way to stop waiting. One JSON line printed per call:
//! `{"tool", "isError"}` for a result, `{"tool", "error": "aborted"}` for a call its caller gave
//! up, `{"tool", "error": {"code": N|null}}` for any other error. [`agent`] is both agents' body:
//! how they are instrumented, in one place.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, Implementation, InitializeRequestParams, JsonObject};
use rmcp::transport::IntoTransport;
use rmcp::{RoleClient, Service, ServiceError, ServiceExt};
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

/// The Rust agent over `transport`: instrumented as docs/rust.md shows (no propagator set; its
/// spans to the span file, `crate::spanlines`), the plan `MCP_PLAN` run, its session ended.
///
/// # Errors
///
/// The plan or the span file cannot be read, the handshake or a step fails.
pub async fn agent<T, E, A: 'static>(transport: T) -> Result<(), Box<dyn std::error::Error>>
where
    T: IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let plan: Vec<JsonObject> = serde_json::from_str(&crate::spanlines::env_or("MCP_PLAN", "[]"))?;
    let provider = crate::spanlines::tracer_provider("mcp-otel-rust-agent")?;
    let otel = mcp_otel::McpOtel::builder().tracer_provider(&provider).build();
    let info = InitializeRequestParams::new(ClientCapabilities::default(), Implementation::new("rust-agent", "1.0.0"));
    let client = otel.client(otel.service(info).serve(otel.transport(transport)).await?);

    run(&client, plan).await?;
    // Ends the session: over stdio closing stdin ends the server (rmcp waits 3 s at most for it to
    // exit); over HTTP rmcp's client sends DELETE.
    client.into_inner().cancel().await?;
    provider.shutdown()?;
    Ok(())
}
