//! The wire front end (`McpOtel::transport`): the requests a side sends past `Client` get their
//! CLIENT spans there (rmcp's own `initialize`, a framework's calls through rmcp's `Peer`, a
//! server's own requests from its handlers), parented as rmcp lets the wire see, each outcome as
//! the other requests' (docs/rust.md).
#![allow(deprecated)] // roots and sampling: deprecated by SEP-2577, still sent by servers

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::{Telemetry, Weather, attribute, outcome, rmcp_cancels_dropped_calls, rmcp_version};
use mcp_otel::McpOtel;
use opentelemetry::trace::{SpanKind, TraceContextExt, Tracer, TracerProvider};
use opentelemetry_sdk::trace::SpanData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CreateMessageRequestParams, Implementation,
    InitializeResult, ListRootsRequest, ListRootsResult, ServerCapabilities, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};

fn call(tool: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned())
}

#[allow(clippy::unnecessary_wraps)] // an attribute that is there, as `attribute` reads it
fn yes(value: &str) -> Option<String> {
    Some(value.to_owned())
}

/// A server whose tools ask their client: `roots` (its roots), `sample` (a sampling request the
/// client does not handle), `slowroots` (its roots, waiting 200 ms at most).
#[derive(Clone)]
struct Asking;

impl ServerHandler for Asking {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("asking", "1.0.0"))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let answer = match &*request.name {
            "roots" => context.peer.list_roots().await.map(|_| ()),
            "sample" => context.peer.create_message(CreateMessageRequestParams::new(Vec::new(), 10)).await.map(|_| ()),
            _ => {
                let roots = ServerRequest::ListRootsRequest(ListRootsRequest::default());
                let options = PeerRequestOptions::with_timeout(Duration::from_millis(200));
                match context.peer.send_request_with_option(roots, options).await {
                    Ok(handle) => handle.await_response().await.map(|_| ()),
                    Err(error) => Err(error),
                }
            }
        };
        let text = if answer.is_ok() { "answered" } else { "not answered" };
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(text)])))
    }
}

/// A client that lists its roots, slowly when asked twice (the second time takes 2 s, or until
/// rmcp cancels it, which it records).
#[derive(Clone, Default)]
struct Person {
    asked: Arc<AtomicUsize>,
    cancelled: Arc<AtomicBool>,
}

impl ClientHandler for Person {
    async fn list_roots(&self, context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        if self.asked.fetch_add(1, Ordering::SeqCst) > 0 {
            tokio::select! {
                () = context.ct.cancelled() => self.cancelled.store(true, Ordering::SeqCst),
                () = tokio::time::sleep(Duration::from_secs(2)) => {}
            }
        }
        Ok(ListRootsResult::default())
    }
}

/// `server` served through the wire of `otel`, and a client of it, its handler `person`, each side
/// instrumented by `otel`; the client's transport wrapped too when `client_wire`.
async fn connect<S: ServerHandler>(
    otel: &McpOtel,
    server: S,
    person: Person,
    client_wire: bool,
) -> (RunningService<RoleClient, mcp_otel::Instrumented<Person>>, tokio::task::JoinHandle<()>) {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let service = otel.service(server);
    let transport = otel.transport(server_io);
    let server = tokio::spawn(async move {
        if let Ok(running) = service.serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let client = otel.service(person);
    let running =
        if client_wire { client.serve(otel.transport(client_io)).await } else { client.serve(client_io).await };
    (running.expect("handshake"), server)
}

fn only(spans: &[SpanData], name: &str, kind: &SpanKind) -> SpanData {
    let found: Vec<&SpanData> = spans.iter().filter(|span| span.name == name && span.span_kind == *kind).collect();
    assert_eq!(found.len(), 1, "{name} {kind:?}: {:?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>());
    found[0].clone()
}

#[tokio::test]
async fn a_servers_own_request_is_a_client_span_under_the_call_that_sent_it() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client, _server) = connect(&otel, Asking, Person::default(), false).await;
    let answer = client.call_tool(call("roots")).await.expect("answered");
    assert_eq!(answer.content[0].as_text().map(|text| text.text.as_str()), Some("answered"));

    let spans = telemetry.spans();
    let handled = only(&spans, "tools/call roots", &SpanKind::Server);
    let asked = only(&spans, "roots/list", &SpanKind::Client);
    let answered = only(&spans, "roots/list", &SpanKind::Server);
    // One trace: the tool call that asked, its request, the client's handling of it.
    assert_eq!(asked.parent_span_id, handled.span_context.span_id());
    assert_eq!(answered.parent_span_id, asked.span_context.span_id());
    assert_eq!(answered.span_context.trace_id(), handled.span_context.trace_id());
    assert_eq!(outcome(&asked), (yes("ok"), None, None, false));
    assert_eq!(attribute(&asked, "mcp.method.name"), yes("roots/list"));
    // The wire saw the request's id and the server's own answer to the handshake.
    assert_eq!(attribute(&asked, "jsonrpc.request.id"), attribute(&answered, "jsonrpc.request.id"));
    assert!(attribute(&asked, "jsonrpc.request.id").is_some());
    assert_eq!(attribute(&asked, "mcp.server.name"), yes("asking"));
    assert_eq!(attribute(&asked, "mcp.protocol.version"), attribute(&handled, "mcp.protocol.version"));
    let points = telemetry.points("mcp.client.operation.duration");
    let roots: Vec<_> = points.iter().filter(|(attributes, _)| attributes.contains(&method("roots/list"))).collect();
    assert_eq!(roots.len(), 1, "{points:?}");
    assert!(roots[0].0.contains(&("mcp.server.name".to_owned(), "asking".to_owned())), "{roots:?}");
    assert!(roots[0].0.contains(&("mcp.request.outcome".to_owned(), "ok".to_owned())), "{roots:?}");
}

/// The points of histogram `name` as the next export has them (each export holds every point so far).
fn exported(telemetry: &Telemetry, name: &str) -> Vec<(Vec<(String, String)>, u64)> {
    telemetry.metrics.reset();
    telemetry.points(name)
}

fn method(name: &str) -> (String, String) {
    ("mcp.method.name".to_owned(), name.to_owned())
}

#[tokio::test]
async fn a_servers_own_request_refused_fails_with_its_code_and_timed_out_fails_as_its_timeout() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let person = Person::default();
    let (client, _server) = connect(&otel, Asking, person.clone(), true).await;
    client.call_tool(call("sample")).await.expect("answered");
    // The second roots request waits 2 s; the server's 200 ms timeout ends it.
    person.asked.store(1, Ordering::SeqCst);
    client.call_tool(call("slowroots")).await.expect("answered");

    let spans = telemetry.spans();
    let refused = only(&spans, "sampling/createMessage", &SpanKind::Client);
    assert_eq!(outcome(&refused), (yes("failed"), yes("-32601"), None, true));
    assert_eq!(attribute(&refused, "rpc.response.status_code"), yes("-32601"));
    let timed_out = only(&spans, "roots/list", &SpanKind::Client);
    assert_eq!(outcome(&timed_out), (yes("failed"), yes("timeout"), None, true));
    // The server's cancel is a CLIENT span of its own, under the request it cancels.
    let cancel = only(&spans, "notifications/cancelled", &SpanKind::Client);
    assert_eq!(cancel.parent_span_id, timed_out.span_context.span_id());
    assert_eq!(outcome(&cancel), (None, None, None, false));
    // rmcp sent notifications/cancelled "request timeout": the client's handling is cancelled by it,
    // as its wire read. rmcp 3.1 does not cancel a client handler's token on its server's cancel; 3.11
    // does (where between them it changed is not known: those two are tested).
    let handled = telemetry.wait_for("roots/list", SpanKind::Server).await;
    assert_eq!(person.cancelled.load(Ordering::SeqCst), rmcp_version() >= (3, 11), "rmcp cancelled the handler");
    assert_eq!(outcome(&handled), (yes("cancelled"), None, yes("client"), false));
}

#[tokio::test]
async fn rmcps_own_initialize_is_a_client_span_and_clients_calls_are_not_traced_twice() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (running, _server) = connect(&otel, Weather::default(), Person::default(), true).await;
    let client = otel.client(running);
    client.call_tool(call("ok")).await.expect("answered");

    let spans = telemetry.spans();
    let handshake = only(&spans, "initialize", &SpanKind::Client);
    // The client's notifications/initialized: a CLIENT span, no outcome (a notification has no answer).
    let initialized = only(&spans, "notifications/initialized", &SpanKind::Client);
    assert_eq!(outcome(&initialized), (None, None, None, false));
    assert_eq!(attribute(&initialized, "mcp.server.name"), yes("weather"));
    // The server's span of it is its child: the context in the notification's `_meta`.
    let received = telemetry.wait_for("notifications/initialized", SpanKind::Server).await;
    assert_eq!(received.parent_span_id, initialized.span_context.span_id());
    assert_eq!(received.span_context.trace_id(), initialized.span_context.trace_id());
    let handled = only(&spans, "initialize", &SpanKind::Server);
    assert_eq!(handled.parent_span_id, handshake.span_context.span_id());
    assert_eq!(outcome(&handshake), (yes("ok"), None, None, false));
    // Named by the handshake's answer, as every later span of the session.
    assert_eq!(attribute(&handshake, "mcp.server.name"), yes("weather"));
    assert_eq!(attribute(&handshake, "mcp.server.version"), yes("2.1.0"));
    assert_eq!(attribute(&handshake, "mcp.protocol.version"), attribute(&handled, "mcp.protocol.version"));
    assert!(attribute(&handshake, "mcp.protocol.version").is_some());
    // `Client` traced the call: one CLIENT span, which the wire gave the request's id.
    let sent = only(&spans, "tools/call ok", &SpanKind::Client);
    let received = only(&spans, "tools/call ok", &SpanKind::Server);
    assert_eq!(received.parent_span_id, sent.span_context.span_id());
    assert_eq!(attribute(&sent, "jsonrpc.request.id"), attribute(&received, "jsonrpc.request.id"));
    assert!(attribute(&sent, "jsonrpc.request.id").is_some());
    let initialize: Vec<_> = telemetry
        .points("mcp.client.operation.duration")
        .into_iter()
        .filter(|(attributes, _)| attributes.contains(&method("initialize")))
        .collect();
    assert_eq!(initialize.len(), 1);
    assert!(initialize[0].0.contains(&("mcp.server.name".to_owned(), "weather".to_owned())), "{initialize:?}");

    // The client ends the session: one point on each side, named, with the agreed version.
    client.into_inner().cancel().await.expect("closed");
    let version = attribute(&handled, "mcp.protocol.version").expect("a version");
    let session =
        vec![("mcp.protocol.version".to_owned(), version), ("mcp.server.name".to_owned(), "weather".to_owned())];
    assert_eq!(exported(&telemetry, "mcp.client.session.duration"), vec![(session.clone(), 1)]);
    for _ in 0..100 {
        if !exported(&telemetry, "mcp.server.session.duration").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(exported(&telemetry, "mcp.server.session.duration"), vec![(session, 1)]);
}

#[tokio::test]
async fn a_request_sent_past_client_is_traced_under_the_context_in_its_meta() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (running, _server) = connect(&otel, Weather::default(), Person::default(), true).await;
    // A framework's tool call through rmcp's peer, its own span's context in `_meta` (rig's
    // `with_call_meta` does this).
    let tracer = telemetry.tracer_provider.tracer("framework");
    let step = opentelemetry::Context::current_with_span(tracer.start("execute_tool"));
    let mut params = call("ok");
    let mut meta = rmcp::model::RequestMetaObject::default();
    let traceparent =
        format!("00-{}-{}-01", step.span().span_context().trace_id(), step.span().span_context().span_id());
    meta.0.0.insert("traceparent".to_owned(), traceparent.into());
    params.meta = Some(meta);
    running.peer().call_tool(params).await.expect("answered");
    // With nothing in `_meta`: a root.
    running.peer().call_tool(call("iserr")).await.expect("answered");
    step.span().end();

    let spans = telemetry.spans();
    let sent = only(&spans, "tools/call ok", &SpanKind::Client);
    let received = only(&spans, "tools/call ok", &SpanKind::Server);
    assert_eq!(sent.parent_span_id, step.span().span_context().span_id());
    assert_eq!(received.parent_span_id, sent.span_context.span_id());
    assert_eq!(outcome(&sent), (yes("ok"), None, None, false));
    assert_eq!(attribute(&sent, "gen_ai.tool.name"), yes("ok"));
    assert_eq!(attribute(&sent, "tool.outcome"), yes("ok"));
    assert_eq!(attribute(&sent, "mcp.server.name"), yes("weather"));
    let tool_error = only(&spans, "tools/call iserr", &SpanKind::Client);
    assert_eq!(tool_error.parent_span_id, opentelemetry::trace::SpanId::INVALID);
    assert_eq!(outcome(&tool_error), (yes("failed"), yes("tool_error"), None, true));
}

#[tokio::test]
async fn a_tool_call_sent_past_client_carries_its_content_when_asked() {
    let telemetry = Telemetry::new();
    let otel = McpOtel::builder()
        .tracer_provider(&telemetry.tracer_provider)
        .meter_provider(&telemetry.meter_provider)
        .capture_content(true)
        .build();
    let (running, _server) = connect(&otel, Weather::default(), Person::default(), true).await;
    let arguments = serde_json::json!({"city": "Paris", "password": "planted"});
    running
        .peer()
        .call_tool(call("ok").with_arguments(arguments.as_object().expect("an object").clone()))
        .await
        .expect("answered");
    let spans = telemetry.spans();
    let sent = only(&spans, "tools/call ok", &SpanKind::Client);
    assert_eq!(attribute(&sent, "gen_ai.tool.call.arguments"), yes(r#"{"city":"Paris","password":"[REDACTED]"}"#));
    assert_eq!(
        attribute(&sent, "gen_ai.tool.call.result"),
        yes(r#"{"content":[{"text":"sunny","type":"text"}],"isError":false}"#)
    );
}

#[tokio::test]
async fn a_dropped_call_through_the_peer_is_the_callers_cancel_when_rmcp_says_so() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (running, _server) = connect(&otel, Weather::default(), Person::default(), true).await;
    let dropped = tokio::time::timeout(Duration::from_millis(200), running.peer().call_tool(call("slow"))).await;
    assert!(dropped.is_err(), "the timeout dropped the call");
    let sent = telemetry.wait_for("tools/call slow", SpanKind::Client).await;
    if rmcp_cancels_dropped_calls() {
        // rmcp >= 3.6 sends notifications/cancelled "request abandoned by the caller".
        assert_eq!(outcome(&sent), (yes("cancelled"), None, yes("caller"), false));
        let cancel = telemetry.span("notifications/cancelled", SpanKind::Client);
        assert_eq!(cancel.parent_span_id, sent.span_context.span_id());
    } else {
        // rmcp < 3.6 sends nothing: the wire sees the server's answer, 3 s later.
        assert_eq!(outcome(&sent), (yes("ok"), None, None, false));
    }
}

#[tokio::test]
async fn a_request_in_flight_when_the_connection_ends_failed_as_closed() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    // A server that answers the handshake, reads one request, and goes away.
    let server = tokio::spawn(async move {
        let (read, mut write) = tokio::io::split(server_io);
        let mut lines = BufReader::new(read).lines();
        let initialize: serde_json::Value =
            serde_json::from_str(&lines.next_line().await.expect("read").expect("a line")).expect("json");
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": initialize["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "gone", "version": "1"}}});
        write.write_all(format!("{answer}\n").as_bytes()).await.expect("written");
        while let Some(line) = lines.next_line().await.expect("read") {
            if line.contains("tools/call") {
                break;
            }
        }
    });
    let running = otel.service(Person::default()).serve(otel.transport(client_io)).await.expect("handshake");
    let error = running.peer().call_tool(call("slow")).await.expect_err("no answer");
    server.await.expect("the server went away");
    assert!(matches!(error, rmcp::ServiceError::TransportClosed), "{error:?}");
    let sent = telemetry.wait_for("tools/call slow", SpanKind::Client).await;
    assert_eq!(outcome(&sent), (yes("failed"), yes("connection_closed"), None, true));
    assert_eq!(attribute(&sent, "mcp.server.name"), yes("gone"));
    // The server went away: the session ended with the connection closed.
    let version = attribute(&sent, "mcp.protocol.version").expect("a version");
    let session = vec![
        ("error.type".to_owned(), "connection_closed".to_owned()),
        ("mcp.protocol.version".to_owned(), version),
        ("mcp.server.name".to_owned(), "gone".to_owned()),
    ];
    assert_eq!(exported(&telemetry, "mcp.client.session.duration"), vec![(session, 1)]);
}

#[tokio::test]
async fn a_cancel_of_a_clients_request_is_a_client_span_under_it() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let (running, _server) = connect(&otel, Weather::default(), Person::default(), true).await;
    let client = otel.client(running);
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(call("slow")));
    let sent = client.send_request_with_option(request, PeerRequestOptions::no_options()).await.expect("sent");
    tokio::time::sleep(Duration::from_millis(100)).await;
    sent.cancel(Some("the user gave up".to_owned())).await.expect("cancel sent");

    let sent = telemetry.span("tools/call slow", SpanKind::Client);
    // Its id once: the wire's, not a second from the handle.
    let ids: Vec<_> = sent.attributes.iter().filter(|kv| kv.key.as_str() == "jsonrpc.request.id").collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let cancel = telemetry.wait_for("notifications/cancelled", SpanKind::Client).await;
    assert_eq!(cancel.parent_span_id, sent.span_context.span_id());
    assert_eq!(cancel.span_context.trace_id(), sent.span_context.trace_id());
    let read = telemetry.wait_for("notifications/cancelled", SpanKind::Server).await;
    assert_eq!(read.parent_span_id, cancel.span_context.span_id());
    let handled = telemetry.wait_for("tools/call slow", SpanKind::Server).await;
    assert_eq!(outcome(&handled), (yes("cancelled"), None, yes("client"), false));
}

/// `network.transport` of every span and point of `side` (`"client"` or `"server"`), by span name.
fn transports(telemetry: &Telemetry, side: &str) -> Vec<(String, Option<String>)> {
    let kind = if side == "client" { SpanKind::Client } else { SpanKind::Server };
    let mut said: Vec<_> = telemetry
        .spans()
        .into_iter()
        .filter(|span| span.span_kind == kind)
        .map(|span| (span.name.to_string(), attribute(&span, "network.transport")))
        .collect();
    said.sort();
    telemetry.metrics.reset(); // the next export's points only
    let points = telemetry.point_values(&format!("mcp.{side}.operation.duration"), "network.transport");
    said.extend(points.into_iter().map(|value| ("point".to_owned(), Some(value))));
    said
}

#[tokio::test]
async fn a_transport_over_tcp_is_stated_on_every_span_and_point_of_both_sides() {
    let telemetry = Telemetry::new();
    let otel = telemetry.otel();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let address = listener.local_addr().expect("its address");
    let server_otel = otel.clone();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("a client");
        if let Ok(running) = server_otel.service(Weather::default()).serve(server_otel.transport(stream)).await {
            let _ = running.waiting().await;
        }
    });
    let stream = tokio::net::TcpStream::connect(address).await.expect("connected");
    let client = otel.client(().serve(otel.transport(stream)).await.expect("handshake"));
    // The first call's transport is learnt from its wire as it is sent; the second's is known before.
    client.call_tool(call("ok")).await.expect("answered");
    client.call_tool(call("ok")).await.expect("answered");
    client.into_inner().cancel().await.expect("closed");
    server.await.expect("the server ended");

    let tcp = || Some("tcp".to_owned());
    // The wire's own spans (initialize, notifications sent), `Client`'s call, the server's spans of
    // requests and notifications received, and each side's points.
    let spans = [
        ("initialize", tcp()),
        ("notifications/initialized", tcp()),
        ("tools/call ok", tcp()),
        ("tools/call ok", tcp()),
    ];
    // Two series: the handshake's, and both calls' (the same attributes, the second's on its span
    // from its start, the first's written at its end).
    let points = [("point", tcp()), ("point", tcp())];
    let expected: Vec<_> = spans.iter().chain(&points).map(|(name, said)| ((*name).to_owned(), said.clone())).collect();
    assert_eq!(transports(&telemetry, "client"), expected);
    assert_eq!(transports(&telemetry, "server"), expected);
    // Once on each span: the second call's was on it from its start.
    for span in telemetry.spans() {
        let stated = span.attributes.iter().filter(|kv| kv.key.as_str() == "network.transport").count();
        assert_eq!(stated, 1, "{}", span.name);
    }
    // A session's duration has none: the conventions do not define it there.
    for side in ["client", "server"] {
        let sessions = exported(&telemetry, &format!("mcp.{side}.session.duration"));
        assert_eq!(sessions.len(), 1, "{side}");
        assert!(!sessions[0].0.iter().any(|(key, _)| key == "network.transport"), "{side}: {sessions:?}");
    }
}
