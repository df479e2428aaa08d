//! The Rust test server's tools (crossserver over stdio, rust/http's httpserver over streamable
//! HTTP), as go/test/internal/cmd/crossserver's:
//!
//! ```text
//! ok          returns text "ok"
//! tool_error  returns a result with isError true (text "tool failed")
//! slow        waits until its caller cancels it (returns text "gave up"), at most 5 s
//!             (returns text "slept")
//! ```
//!
//! Its name (serverInfo) is its program's (`MCP_SERVER_NAME`, else "rust-server"), version 1.2.3.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

const TOOLS: [&str; 3] = ["ok", "tool_error", "slow"];

/// The server: rmcp's `ServerHandler`, the tools above.
pub struct CrossServer {
    name: String,
}

impl CrossServer {
    /// The server named `name`.
    pub fn new(name: String) -> Self {
        Self { name }
    }
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
