//! A Rust MCP agent over streamable HTTP for the cross-language tests (tests/rust, `test_http.py`):
//! rmcp's own streamable HTTP client, instrumented with mcp-otel as docs/rust.md shows (no
//! propagator set), calls tools of the server at the URL given; otherwise the stdio agent's twin
//! (rust/examples/crossagent.rs: the same plan, the same lines printed).
//!
//! ```text
//! httpagent http://127.0.0.1:PORT/mcp
//! ```
//!
//! `MCP_PLAN` (JSON) lists the calls, run and printed as rust/examples/crossplan says.
//!
//! Each finished span is appended to the file `MCP_OTEL_RUST_SPAN_FILE` as one JSON line (the
//! fields tests/node/telemetry.cjs writes), as it ends.

#[path = "../../../examples/crossplan/mod.rs"]
mod crossplan;
#[path = "../../../examples/spanlines/mod.rs"]
mod spanlines;

use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, JsonObject};
use rmcp::transport::StreamableHttpClientTransport;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: httpagent http://127.0.0.1:PORT/mcp")?;
    let plan: Vec<JsonObject> = serde_json::from_str(&spanlines::env_or("MCP_PLAN", "[]"))?;

    let provider = spanlines::tracer_provider("mcp-otel-rust-agent")?;
    let otel = mcp_otel::McpOtel::builder().tracer_provider(&provider).build();

    let transport = StreamableHttpClientTransport::from_uri(url);
    let info = ClientConfig::new(ClientCapabilities::default(), Implementation::new("rust-agent", "1.0.0"));
    let client = otel.client(otel.service(info).serve(otel.transport(transport)).await?);

    crossplan::run(&client, plan).await?;
    // Ends the session (rmcp's client sends DELETE).
    client.into_inner().cancel().await?;
    provider.shutdown()?;
    Ok(())
}
