//! A Rust MCP server over stdio for the cross-language tests (tests/rust): rmcp's own server,
//! instrumented with mcp-otel as docs/rust.md shows (no propagator set). Its tools, as
//! go/test/internal/cmd/crossserver's:
//!
//! ```text
//! ok          returns text "ok"
//! tool_error  returns a result with isError true (text "tool failed")
//! slow        waits until its caller cancels it (returns text "gave up"), at most 5 s
//!             (returns text "slept")
//! ```
//!
//! Its name (serverInfo) is `MCP_SERVER_NAME`, else "rust-server", version 1.2.3. The client
//! closing stdin ends it. Each finished span is appended to the file `MCP_OTEL_RUST_SPAN_FILE` as
//! one JSON line (the fields tests/node/telemetry.cjs writes), as it ends.

mod spanlines;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::stdio;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

const TOOLS: [&str; 3] = ["ok", "tool_error", "slow"];

struct CrossServer {
    name: String,
}

impl ServerHandler for CrossServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(self.name.clone(), "1.2.3"))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The tools take no arguments: an object schema with no properties.
        let schema = Arc::new(serde_json::Map::from_iter([("type".to_owned(), "object".into())]));
        Ok(ListToolsResult::with_all_items(TOOLS.map(|name| Tool::new(name, name, schema.clone())).to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = |value: &str| vec![ContentBlock::text(value)];
        let result = match &*request.name {
            "ok" => CallToolResult::success(text("ok")),
            "tool_error" => CallToolResult::error(text("tool failed")),
            "slow" => tokio::select! {
                () = context.ct.cancelled() => CallToolResult::success(text("gave up")),
                () = tokio::time::sleep(Duration::from_secs(5)) => CallToolResult::success(text("slept")),
            },
            other => return Err(ErrorData::invalid_params(format!("unknown tool {other}"), None)),
        };
        Ok(CallToolResponse::Complete(result))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let provider = spanlines::tracer_provider("mcp-otel-rust-server")?;
    let otel = mcp_otel::McpOtel::builder().tracer_provider(&provider).build();
    let handler = CrossServer { name: spanlines::env_or("MCP_SERVER_NAME", "rust-server") };
    let server = otel.service(handler).serve(stdio()).await?;
    // The client closing stdin is the normal end of the session.
    let _ = server.waiting().await;
    provider.shutdown()?;
    Ok(())
}
