//! ADK-Rust (adk-agent and adk-tool 2.3) runs its agent loop with a scripted model, no LLM, over
//! the tools of a real rmcp server instrumented by mcp-otel, in memory; ADK's `tracing` spans reach
//! the OpenTelemetry SDK through tracing-opentelemetry. The model calls `ok`, `iserr` (a tool
//! error) and `slow` (3 s: ADK's 1 s tool timeout drops it). Two routes (docs/rust.md, "Agent
//! frameworks"):
//! - ADK's own `McpToolset` over a client on `McpOtel::transport`: it calls through rmcp's `Peer`,
//!   so each call's CLIENT span comes from the wire, a root (rmcp sends from its own task);
//! - the adapter (src/lib.rs): an ADK tool over `mcp_otel::Client`, each CLIENT span the child of
//!   ADK's `execute_tool NAME` span, one trace from ADK's run to the server.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use adk_agent::{LlmAgent, LlmAgentBuilder};
use adk_core::{Content, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part};
use adk_runner::Runner;
use adk_session::{CreateRequest, InMemorySessionService, SessionService};
use async_trait::async_trait;
use common::{Telemetry, Weather, attribute, outcome};
use futures::StreamExt;
use mcp_otel::McpOtel;
use opentelemetry::trace::{SpanId, SpanKind, TracerProvider as _};
use opentelemetry_sdk::trace::SpanData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, InitializeResult, ListToolsResult, PaginatedRequestParams, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tracing_subscriber::layer::SubscriberExt;

/// What the model asks, in turn; then it answers "done".
const SCRIPT: [&str; 3] = ["ok", "iserr", "slow"];

/// ADK's tool timeout: `slow` takes 3 s; the others take milliseconds, a second under any load.
const TOOL_TIMEOUT: Duration = Duration::from_secs(1);

#[allow(clippy::unnecessary_wraps)] // an attribute that is there, as `attribute` reads it
fn yes(value: &str) -> Option<String> {
    Some(value.to_owned())
}

/// The test's `Weather` server, listing the tools the model calls (ADK discovers them).
#[derive(Clone)]
struct Listed(Weather);

impl ServerHandler for Listed {
    fn get_info(&self) -> InitializeResult {
        self.0.get_info()
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        let schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
        Ok(ListToolsResult::with_all_items(
            SCRIPT.iter().map(|name| Tool::new(*name, "weather", schema.clone())).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.0.call_tool(request, context).await
    }
}

/// A client of a `Listed` server over an in-memory pipe, each side's transport wrapped by the wire
/// front end (as docs/rust.md's two lines do).
async fn connect(otel: &McpOtel) -> RunningService<RoleClient, mcp_otel::Instrumented<()>> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let service = otel.service(Listed(Weather::default()));
    let transport = otel.transport(server_io);
    tokio::spawn(async move {
        if let Ok(running) = service.serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    otel.service(()).serve(otel.transport(client_io)).await.expect("handshake")
}

/// A model that asks for each tool of `SCRIPT` in turn, then answers "done".
struct Script;

#[async_trait]
impl Llm for Script {
    fn name(&self) -> &'static str {
        "script"
    }

    async fn generate_content(&self, request: LlmRequest, _stream: bool) -> adk_core::Result<LlmResponseStream> {
        let answered = request
            .contents
            .iter()
            .flat_map(|content| &content.parts)
            .filter(|part| matches!(part, Part::FunctionResponse { .. }))
            .count();
        let part = match SCRIPT.get(answered) {
            Some(name) => Part::FunctionCall {
                name: (*name).to_owned(),
                args: json!({"city": "Paris"}),
                id: Some(format!("call-{answered}")),
                thought_signature: None,
            },
            None => Part::Text { text: "done".to_owned() },
        };
        let response = LlmResponse::new(Content { role: "model".to_owned(), parts: vec![part] });
        Ok(Box::pin(futures::stream::iter([Ok(response)])))
    }
}

/// Runs `agent` once, as an ADK application does (adk-runner's `Runner`, an in-memory session):
/// what ADK gave the model for each tool call.
async fn run(agent: LlmAgent) -> Vec<(String, Value)> {
    let sessions = Arc::new(InMemorySessionService::new());
    let session = CreateRequest {
        app_name: "weather-app".to_owned(),
        user_id: "user-1".to_owned(),
        session_id: Some("session-1".to_owned()),
        state: HashMap::new(),
    };
    sessions.create(session).await.expect("session");
    let runner = Runner::builder()
        .app_name("weather-app")
        .agent(Arc::new(agent))
        .session_service(sessions)
        .build()
        .expect("runner");
    let question = Content::new("user").with_text("weather in Paris?");
    let mut events = runner.run_str("user-1", "session-1", question).await.expect("run");
    let mut answers = Vec::new();
    while let Some(event) = events.next().await {
        for part in event.expect("event").llm_response.content.into_iter().flat_map(|content| content.parts) {
            if let Part::FunctionResponse { function_response, .. } = part {
                answers.push((function_response.name, function_response.response));
            }
        }
    }
    answers
}

/// ADK's `tracing` spans into `telemetry`'s SDK, on this thread (the test's runtime) until dropped.
fn trace_adk(telemetry: &Telemetry) -> tracing::subscriber::DefaultGuard {
    let layer = tracing_opentelemetry::layer().with_tracer(telemetry.tracer_provider.tracer("adk"));
    tracing::subscriber::set_default(tracing_subscriber::registry().with(layer))
}

/// What ADK gave the model for each call, the same on both routes.
fn answers() -> Vec<(String, Value)> {
    vec![
        ("ok".to_owned(), json!({"output": "sunny"})),
        ("iserr".to_owned(), json!({"error": "tool.internal: MCP tool 'iserr' execution failed: which city?"})),
        ("slow".to_owned(), json!({"error": "Tool 'slow' timed out after 1 seconds"})),
    ]
}

/// The outcome each side records of each call in `SCRIPT`: ok, a tool error, the call ADK's
/// timeout dropped (the caller's cancel; rmcp tells the server with `notifications/cancelled`).
fn outcomes(tool: &str, kind: &SpanKind) -> (Option<String>, Option<String>, Option<String>, bool) {
    match (tool, kind) {
        ("ok", _) => (yes("ok"), None, None, false),
        ("iserr", _) => (yes("failed"), yes("tool_error"), None, true),
        (_, SpanKind::Client) => (yes("cancelled"), None, yes("caller"), false),
        _ => (yes("cancelled"), None, yes("client"), false),
    }
}

/// The one span named `name` of `kind`.
fn only(spans: &[SpanData], name: &str, kind: &SpanKind) -> SpanData {
    let found: Vec<&SpanData> = spans.iter().filter(|span| span.name == name && span.span_kind == *kind).collect();
    assert_eq!(found.len(), 1, "{name} {kind:?}: {:?}", spans.iter().map(|span| &span.name).collect::<Vec<_>>());
    found[0].clone()
}

/// The names of the requests' CLIENT spans (not the notifications'), sorted.
fn client_spans(spans: &[SpanData]) -> Vec<String> {
    let mut names: Vec<String> = spans
        .iter()
        .filter(|span| span.span_kind == SpanKind::Client && !span.name.starts_with("notifications/"))
        .map(|span| span.name.to_string())
        .collect();
    names.sort();
    names
}

/// ADK's span of the call of `tool`, and its CLIENT and SERVER spans: the server's the client's
/// child, each with its outcome, the tool and the server named.
fn call(spans: &[SpanData], tool: &str) -> (SpanData, SpanData, SpanData) {
    let step = only(spans, &format!("execute_tool {tool}"), &SpanKind::Internal);
    let sent = only(spans, &format!("tools/call {tool}"), &SpanKind::Client);
    let received = only(spans, &format!("tools/call {tool}"), &SpanKind::Server);
    assert_eq!(received.parent_span_id, sent.span_context.span_id(), "{tool}");
    assert_eq!(received.span_context.trace_id(), sent.span_context.trace_id(), "{tool}");
    assert_eq!(outcome(&sent), outcomes(tool, &SpanKind::Client), "{tool}");
    assert_eq!(outcome(&received), outcomes(tool, &SpanKind::Server), "{tool}");
    assert_eq!(attribute(&sent, "gen_ai.tool.name"), yes(tool));
    assert_eq!(attribute(&sent, "mcp.server.name"), yes("weather"));
    (step, sent, received)
}

#[tokio::test]
async fn adks_own_toolset_over_the_wire_gives_each_call_a_root_client_span() {
    let telemetry = Telemetry::new();
    let _adk = trace_adk(&telemetry);
    let otel = telemetry.otel();
    // The connection outlives the run, as an application's does: rmcp queues a dropped call's
    // cancel for its serve loop, and a client closed before that loop runs again never sends it
    // (the server then records `disconnect`).
    let toolset = Arc::new(adk_tool::McpToolset::new(connect(&otel).await));
    let agent = LlmAgentBuilder::new("weather-agent")
        .model(Arc::new(Script))
        .toolset(toolset.clone())
        .tool_timeout(TOOL_TIMEOUT)
        .build()
        .expect("agent");
    assert_eq!(run(agent).await, answers());
    telemetry.wait_for("tools/call slow", SpanKind::Server).await;

    let spans = telemetry.spans();
    // rmcp's handshake, each call, ADK's listing of the tools before each of the model's four turns.
    let mut expected = vec!["initialize", "tools/call iserr", "tools/call ok", "tools/call slow"];
    expected.extend(["tools/list"; 4]);
    assert_eq!(client_spans(&spans), expected);
    for tool in SCRIPT {
        let (step, sent, _) = call(&spans, tool);
        // A root: rmcp sends ADK's call from its own task, where ADK's span is not current.
        assert_eq!(sent.parent_span_id, SpanId::INVALID, "{tool}");
        assert_ne!(sent.span_context.trace_id(), step.span_context.trace_id(), "{tool}");
    }
    // The wire ended the dropped call's span when rmcp sent its cancel, before the server read it.
    let (_, dropped, received) = call(&spans, "slow");
    assert!(dropped.end_time <= received.end_time);
    drop(toolset);
}

#[tokio::test]
async fn the_adapter_gives_each_call_a_client_span_under_adks_tool_span() {
    let telemetry = Telemetry::new();
    let _adk = trace_adk(&telemetry);
    let otel = telemetry.otel();
    // Kept past the run, as the toolset above.
    let client = Arc::new(otel.client(connect(&otel).await));
    let mut agent = LlmAgentBuilder::new("weather-agent").model(Arc::new(Script)).tool_timeout(TOOL_TIMEOUT);
    for tool in mcp_otel_frameworks::tools(client.clone()).await.expect("tools") {
        agent = agent.tool(tool);
    }
    assert_eq!(run(agent.build().expect("agent")).await, answers());
    telemetry.wait_for("tools/call slow", SpanKind::Server).await;

    let spans = telemetry.spans();
    // rmcp's handshake (the wire), each call, the listing `tools` made (`Client`).
    let expected = ["initialize", "tools/call iserr", "tools/call ok", "tools/call slow", "tools/list"];
    assert_eq!(client_spans(&spans), expected);
    // adk-runner's span of the run: one trace from it to the server, through ADK's tool spans.
    let run = only(&spans, "agent.execute", &SpanKind::Internal);
    for tool in SCRIPT {
        let (step, sent, received) = call(&spans, tool);
        assert_eq!(step.parent_span_id, run.span_context.span_id(), "{tool}");
        assert_eq!(sent.parent_span_id, step.span_context.span_id(), "{tool}");
        for span in [&step, &sent, &received] {
            assert_eq!(span.span_context.trace_id(), run.span_context.trace_id(), "{tool}: {}", span.name);
        }
    }
    // The dropped call's span ended at the drop, inside ADK's span of it.
    let (step, dropped, _) = call(&spans, "slow");
    assert!(dropped.end_time <= step.end_time);
    drop(client);
}
