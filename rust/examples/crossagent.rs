//! A Rust MCP agent for the cross-language tests (tests/rust): rmcp's own client, instrumented
//! with mcp-otel as docs/rust.md shows (no propagator set), calls tools of the stdio server whose
//! command follows (as go/test/internal/cmd/crossagent does).
//!
//! ```text
//! crossagent COMMAND [ARGS...]
//! ```
//!
//! `MCP_PLAN` (JSON) lists the calls, run and printed as `crossplan` says. `MCP_SERVER_ENV` (JSON
//! object): the server's environment besides this one's.
//!
//! Each finished span is appended to the file `MCP_OTEL_RUST_SPAN_FILE` as one JSON line (the
//! fields tests/node/telemetry.cjs writes), as it ends.

mod crossplan;
mod spanlines;

use std::collections::HashMap;

use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, JsonObject};
use rmcp::transport::TokioChildProcess;

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
    let client = otel.client(otel.service(info).serve(otel.transport(transport)).await?);

    crossplan::run(&client, plan).await?;
    // Over stdio, closing stdin ends the server; rmcp waits (3 s at most) for it to exit.
    client.into_inner().cancel().await?;
    provider.shutdown()?;
    Ok(())
}
