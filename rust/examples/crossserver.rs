//! A Rust MCP server over stdio for the cross-language tests (tests/rust): rmcp's own server,
//! instrumented with mcp-otel as docs/rust.md shows (no propagator set), with the tools of
//! `crosstools` (go/test/internal/cmd/crossserver's), named `MCP_SERVER_NAME`, else
//! "rust-server". The client closing stdin ends it. Each finished span is appended to the file
//! `MCP_OTEL_RUST_SPAN_FILE` as one JSON line (the fields tests/node/telemetry.cjs writes), as it
//! ends.

mod crosstools;
mod spanlines;

use rmcp::ServiceExt;
use rmcp::transport::stdio;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let provider = spanlines::tracer_provider("mcp-otel-rust-server")?;
    let otel = mcp_otel::McpOtel::builder().tracer_provider(&provider).build();
    let name = spanlines::env_or("MCP_SERVER_NAME", "rust-server");
    let server = otel.service(crosstools::CrossServer::new(name)).serve(otel.transport(stdio())).await?;
    // The client closing stdin is the normal end of the session.
    let _ = server.waiting().await;
    provider.shutdown()?;
    Ok(())
}
