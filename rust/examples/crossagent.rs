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

use rmcp::transport::TokioChildProcess;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let program = args.next().ok_or("usage: crossagent COMMAND [ARGS...]")?;
    let server_env: HashMap<String, String> = serde_json::from_str(&spanlines::env_or("MCP_SERVER_ENV", "{}"))?;
    let mut command = tokio::process::Command::new(program);
    command.args(args).envs(server_env);
    crossplan::agent(TokioChildProcess::new(command)?).await
}
