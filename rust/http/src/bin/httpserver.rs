//! A Rust MCP server over streamable HTTP for the cross-language tests (tests/rust, `test_http.py`):
//! rmcp's own `StreamableHttpService` (its `LocalSessionManager`) on 127.0.0.1, every session
//! served by the handler instrumented with mcp-otel through [`mcp_otel_http::Sessions`], and the
//! requests it serves without a session traced by `mcp_otel::McpOtel::sessionless` (no propagator
//! set), with the stdio server's tools (rust/examples/crosstools), named `MCP_SERVER_NAME`, else
//! "rust-server".
//!
//! ```text
//! httpserver [MODE]   serves http://127.0.0.1:PORT/mcp on an ephemeral port, printed on stdout
//!                     as {"port":N} once listening; SIGTERM or SIGINT ends it. MODE `stateless`:
//!                     rmcp's stateless mode (no session at all); `stateless-json`: the same,
//!                     each answer one JSON body where rmcp can (`json_response`)
//! ```
//!
//! Each finished span is appended to the file `MCP_OTEL_RUST_SPAN_FILE` as one JSON line (the
//! fields tests/node/telemetry.cjs writes), as it ends.

#[path = "../../../examples/crosstools/mod.rs"]
mod crosstools;
#[path = "../../../examples/spanlines/mod.rs"]
mod spanlines;

use std::sync::Arc;

use crosstools::CrossServer;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let provider = spanlines::tracer_provider("mcp-otel-rust-server")?;
    let otel = mcp_otel::McpOtel::builder().tracer_provider(&provider).build();
    let name = spanlines::env_or("MCP_SERVER_NAME", "rust-server");
    let handler = move || CrossServer::new(name.clone());
    let sessions = mcp_otel_http::Sessions::new(otel.clone(), LocalSessionManager::default(), handler.clone());
    let stopped = CancellationToken::new();
    let mode = std::env::args().nth(1).unwrap_or_default();
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stopped.child_token())
        .with_legacy_session_mode(!mode.starts_with("stateless"))
        .with_json_response(mode == "stateless-json");
    let server = handler();
    let service = StreamableHttpService::new(move || Ok(handler()), Arc::new(sessions), config.clone());
    let service = otel.sessionless(service, &server, &config);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", serde_json::json!({"port": listener.local_addr()?.port()}));
    let (mut terminate, mut interrupt) = (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?);
    axum::serve(listener, axum::Router::new().nest_service("/mcp", service))
        .with_graceful_shutdown(async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
            stopped.cancel();
        })
        .await?;
    provider.shutdown()?;
    Ok(())
}
