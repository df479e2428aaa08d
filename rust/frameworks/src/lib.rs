//! An MCP server's tools as ADK-Rust tools, called through `mcp_otel::Client`: what an ADK
//! application writes so that each tool call is a CLIENT span under ADK's own `execute_tool NAME`
//! span, and a call ADK's tool timeout drops ends there, `cancelled` / `caller`. ADK's own
//! `McpToolset` calls through rmcp's `Peer`, from rmcp's task, where no caller's context is seen
//! (docs/rust.md, "Agent frameworks"); `tests/adk.rs` drives both.

use std::sync::Arc;

use adk_core::{AdkError, Tool, ToolContext};
use async_trait::async_trait;
use mcp_otel::Client;
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use rmcp::{RoleClient, Service, ServiceError};
use serde_json::{Value, json};

/// One tool of an MCP server, as an ADK tool.
pub struct McpTool<S: Service<RoleClient>> {
    client: Arc<Client<S>>,
    tool: rmcp::model::Tool,
}

/// Every tool the server lists, as ADK tools (give each to `LlmAgentBuilder::tool`).
///
/// # Errors
///
/// rmcp's, from listing the tools.
pub async fn tools<S>(client: Arc<Client<S>>) -> Result<Vec<Arc<dyn Tool>>, ServiceError>
where
    S: Service<RoleClient> + Send + Sync + 'static,
{
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut page = client.list_tools(None).await?;
    loop {
        for tool in page.tools {
            tools.push(Arc::new(McpTool { client: client.clone(), tool }));
        }
        let Some(cursor) = page.next_cursor else { return Ok(tools) };
        page = client.list_tools(Some(PaginatedRequestParams::default().with_cursor(Some(cursor)))).await?;
    }
}

#[async_trait]
impl<S> Tool for McpTool<S>
where
    S: Service<RoleClient> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.tool.name
    }

    fn description(&self) -> &str {
        self.tool.description.as_deref().unwrap_or_default()
    }

    fn parameters_schema(&self) -> Option<Value> {
        Some(Value::Object((*self.tool.input_schema).clone()))
    }

    async fn execute(&self, _: Arc<dyn ToolContext>, args: Value) -> adk_core::Result<Value> {
        let mut params = CallToolRequestParams::new(self.tool.name.clone());
        if let Value::Object(arguments) = args
            && !arguments.is_empty()
        {
            params = params.with_arguments(arguments);
        }
        // In the agent's task: ADK's span is the CLIENT span's parent, and its timeout drops this.
        let result = self.client.call_tool(params).await.map_err(|error| AdkError::tool(error.to_string()))?;
        let text: Vec<&str> =
            result.content.iter().filter_map(|content| content.as_text()).map(|text| &*text.text).collect();
        if result.is_error == Some(true) {
            return Err(AdkError::tool(format!("MCP tool '{}' execution failed: {}", self.tool.name, text.join("\n"))));
        }
        Ok(match result.structured_content {
            Some(structured) => json!({ "output": structured }),
            None => json!({ "output": text.join("\n") }),
        })
    }
}
