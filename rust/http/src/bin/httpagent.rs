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

use rmcp::transport::StreamableHttpClientTransport;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: httpagent http://127.0.0.1:PORT/mcp")?;
    crossplan::agent(StreamableHttpClientTransport::from_uri(url)).await
}
