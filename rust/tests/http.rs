//! SERVER spans of the requests rmcp's streamable HTTP server serves without a session
//! (`McpOtel::sessionless`, feature `streamable-http-server`): rmcp's own `StreamableHttpService`
//! and `Weather`, called in process with the HTTP requests a client sends, their responses read as
//! a client reads them; beside it the same service unwrapped, whose responses must be the same.
#![cfg(feature = "streamable-http-server")]

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::common::{Telemetry, Weather, attribute, outcome};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use mcp_otel::http::Sessionless;
use opentelemetry::trace::SpanKind;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower_service::Service;

type Rmcp = StreamableHttpService<Weather, LocalSessionManager>;

/// rmcp's service for `Weather` (`stateful`: rmcp's session mode; `json`: one JSON answer, not an
/// event stream).
fn rmcp(stateful: bool, json: bool) -> (Rmcp, StreamableHttpServerConfig) {
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(stateful).with_json_response(json);
    let manager = Arc::new(LocalSessionManager::default());
    (StreamableHttpService::new(|| Ok(Weather::default()), manager, config.clone()), config)
}

/// rmcp's service for `Weather` (as [`rmcp`]), through `sessionless`, on `telemetry`'s providers.
fn traced(telemetry: &Telemetry, stateful: bool, json: bool) -> Sessionless<Rmcp> {
    let (service, config) = rmcp(stateful, json);
    telemetry.otel().sessionless(service, &Weather::default(), &config)
}

/// A caller's context, in `params._meta` as every mcp-otel client sends it.
const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn call(id: u32, tool: &str) -> String {
    let meta = serde_json::json!({"traceparent": TRACEPARENT});
    let params = serde_json::json!({"name": tool, "arguments": {}, "_meta": meta});
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// A POST as rmcp's and the other SDKs' clients send it (a 2025-11-25 client without a session).
fn post(body: impl Into<Bytes>) -> Request<Full<Bytes>> {
    let mut request = handshake(body);
    request.headers_mut().insert("mcp-protocol-version", "2025-11-25".parse().expect("a header"));
    request
}

/// A POST before the handshake agreed a version: it names none.
fn handshake(body: impl Into<Bytes>) -> Request<Full<Bytes>> {
    Request::post("http://127.0.0.1/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(body.into()))
        .expect("a request")
}

/// What a client reads of a response: its status, content type and whole body, polled as hyper's
/// server polls it (no further once the body says it is at its end).
async fn read<B: Body<Data = Bytes, Error = Infallible> + Unpin>(
    response: Response<B>,
) -> (StatusCode, Option<String>, String) {
    let kind = response.headers().get("content-type").map(|value| value.to_str().expect("text").to_owned());
    let status = response.status();
    let mut body = response.into_body();
    let mut read = Vec::new();
    while !body.is_end_stream() {
        let Some(frame) = body.frame().await else { break };
        if let Ok(data) = frame.expect("a frame").into_data() {
            read.extend_from_slice(&data);
        }
    }
    (status, kind, String::from_utf8(read).expect("utf-8"))
}

/// The same request sent to rmcp's service wrapped (`ours`) and unwrapped: what a client reads of
/// each, which must be the same.
async fn both(
    ours: &mut Sessionless<Rmcp>,
    bare: &mut Rmcp,
    request: impl Fn() -> Request<Full<Bytes>>,
) -> (StatusCode, String) {
    let wrapped = read(ours.call(request()).await.expect("answered")).await;
    let unwrapped = read(bare.call(request()).await.expect("answered")).await;
    assert_eq!(wrapped, unwrapped, "the client reads the same");
    (wrapped.0, wrapped.2)
}

#[tokio::test]
async fn each_request_served_without_a_session_is_a_server_span_the_child_of_its_callers() {
    for json in [false, true] {
        let telemetry = Telemetry::new();
        let mut ours = traced(&telemetry, false, json);
        let (mut bare, _) = rmcp(false, json);

        for (id, tool) in [(1, "ok"), (2, "iserr"), (3, "fail"), (4, "invalid")] {
            let (status, body) = both(&mut ours, &mut bare, || post(call(id, tool))).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let span = |tool: &str| telemetry.span(&format!("tools/call {tool}"), SpanKind::Server);
        assert_eq!(outcome(&span("ok")), (Some("ok".into()), None, None, false));
        assert_eq!(outcome(&span("iserr")), (Some("failed".into()), Some("tool_error".into()), None, true));
        assert_eq!(outcome(&span("fail")), (Some("failed".into()), Some("-32603".into()), None, true));
        // A caller's fault: failed, not the server's error.
        assert_eq!(outcome(&span("invalid")), (Some("failed".into()), None, None, false));
        assert_eq!(attribute(&span("invalid"), "rpc.response.status_code"), Some("-32602".into()));
        let ok = span("ok");
        assert_eq!(ok.parent_span_id.to_string(), "b7ad6b7169203331");
        assert_eq!(ok.span_context.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
        for (key, value) in [
            ("jsonrpc.request.id", "1"),
            ("mcp.server.name", "weather"),
            ("mcp.server.version", "2.1.0"),
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "tcp"),
            ("gen_ai.tool.name", "ok"),
        ] {
            assert_eq!(attribute(&ok, key).as_deref(), Some(value), "{key}");
        }
        // Each request's point, with its outcome.
        let outcomes = telemetry.point_values("mcp.server.operation.duration", "mcp.request.outcome");
        assert_eq!(outcomes, ["failed", "failed", "failed", "ok"], "json: {json}");
    }
}

#[tokio::test]
async fn with_content_capture_a_tool_calls_arguments_and_result_are_on_its_span() {
    for json in [false, true] {
        let telemetry = Telemetry::new();
        let (service, config) = rmcp(false, json);
        let otel = mcp_otel::McpOtel::builder()
            .tracer_provider(&telemetry.tracer_provider)
            .meter_provider(&telemetry.meter_provider)
            .capture_content(true)
            .build();
        let mut ours = otel.sessionless(service, &Weather::default(), &config);
        let (mut bare, _) = rmcp(false, json);
        let arguments = serde_json::json!({"city": "Paris", "token": "planted"});
        let params = serde_json::json!({"name": "ok", "arguments": arguments});
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
        both(&mut ours, &mut bare, || post(body.to_string())).await;
        both(&mut ours, &mut bare, || post(call(2, "fail"))).await;
        let ok = telemetry.span("tools/call ok", SpanKind::Server);
        let captured = |key: &str| attribute(&ok, key);
        assert_eq!(captured("gen_ai.tool.call.arguments").as_deref(), Some(r#"{"city":"Paris","token":"[REDACTED]"}"#));
        assert_eq!(
            captured("gen_ai.tool.call.result").as_deref(),
            Some(r#"{"content":[{"text":"sunny","type":"text"}],"isError":false}"#),
            "json: {json}"
        );
        let fail = telemetry.span("tools/call fail", SpanKind::Server);
        assert_eq!(attribute(&fail, "gen_ai.tool.call.arguments").as_deref(), Some("{}"));
        assert_eq!(attribute(&fail, "gen_ai.tool.call.result"), None);
    }
}

#[tokio::test]
async fn the_handshake_states_the_version_its_answer_agrees() {
    let telemetry = Telemetry::new();
    let mut ours = traced(&telemetry, false, false);
    let params = serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params});
    let (status, kind, _) = read(ours.call(handshake(initialize.to_string())).await.expect("answered")).await;
    assert_eq!((status, kind.as_deref()), (StatusCode::OK, Some("text/event-stream")));
    let handshake = telemetry.span("initialize", SpanKind::Server);
    assert_eq!(outcome(&handshake), (Some("ok".into()), None, None, false));
    assert_eq!(attribute(&handshake, "mcp.protocol.version"), Some("2025-06-18".into()));
}

#[tokio::test]
async fn a_client_gone_before_the_answer_is_a_disconnect() {
    for json in [false, true] {
        let telemetry = Telemetry::new();
        let mut ours = traced(&telemetry, false, json);
        // An event stream begins before the answer: the client closes it. One JSON answer is sent
        // whole: the client goes away while rmcp awaits it.
        let sent = tokio::time::timeout(Duration::from_millis(300), async {
            let response = ours.call(post(call(7, "slow"))).await.expect("answered");
            drop(response);
        })
        .await;
        assert_eq!(sent.is_err(), json, "json: {json}");
        let slow = telemetry.wait_for("tools/call slow", SpanKind::Server).await;
        assert_eq!(outcome(&slow), (Some("cancelled".into()), None, Some("disconnect".into()), false));
        let outcomes = telemetry.point_values("mcp.server.operation.duration", "mcp.request.outcome");
        assert_eq!(outcomes, ["cancelled"]);
    }
}

#[tokio::test]
async fn what_is_no_sessionless_request_is_relayed_and_not_traced() {
    let telemetry = Telemetry::new();
    let mut ours = traced(&telemetry, true, false);
    let (mut bare, config) = rmcp(true, false);
    let params = serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let initialize =
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).to_string();
    // rmcp's session mode: the handshake starts a session, whose service traces it (Sessions).
    let (status, _, _) = read(ours.call(handshake(initialize)).await.expect("answered")).await;
    assert_eq!(status, StatusCode::OK);
    let in_a_session = || {
        let mut request = post(call(1, "ok"));
        request.headers_mut().insert("mcp-session-id", "no-such-session".parse().expect("a header"));
        request
    };
    let not_json = || post("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\"");
    let refused = || {
        let mut request = post(call(1, "ok"));
        request.headers_mut().remove("accept");
        request
    };
    let too_long = || post(vec![b' '; config.max_request_body_bytes + 1]);
    let statuses = [
        both(&mut ours, &mut bare, in_a_session).await.0,
        both(&mut ours, &mut bare, not_json).await.0,
        both(&mut ours, &mut bare, refused).await.0,
        both(&mut ours, &mut bare, too_long).await.0,
    ];
    assert_eq!(
        statuses,
        [
            StatusCode::NOT_FOUND,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            StatusCode::NOT_ACCEPTABLE,
            StatusCode::PAYLOAD_TOO_LARGE
        ]
    );
    assert_eq!(telemetry.spans().iter().map(|span| span.name.to_string()).collect::<Vec<_>>(), Vec::<String>::new());
}

/// rmcp's service, its responses handed on one byte at a time: an event split anywhere.
#[derive(Clone)]
struct Bytewise(Rmcp);

/// A body handed on one byte a frame.
struct OneByOne<B> {
    body: B,
    left: Bytes,
}

impl<B: Body<Data = Bytes> + Unpin> Body for OneByOne<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        loop {
            if !this.left.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(this.left.split_to(1)))));
            }
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => this.left = data,
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                polled => return polled,
            }
        }
    }
}

impl<B: Body + Send + 'static> Service<Request<B>> for Bytewise
where
    B::Error: std::fmt::Display,
    B::Data: Send,
{
    type Response = Response<OneByOne<http_body_util::combinators::BoxBody<Bytes, Infallible>>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Service::<Request<B>>::poll_ready(&mut self.0, cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let answer = self.0.call(request);
        Box::pin(async move { Ok(answer.await?.map(|body| OneByOne { body, left: Bytes::new() })) })
    }
}

#[tokio::test]
async fn an_answer_read_one_byte_at_a_time_is_read_the_same() {
    for json in [false, true] {
        let telemetry = Telemetry::new();
        let otel = telemetry.otel();
        let (service, config) = rmcp(false, json);
        let mut ours = otel.sessionless(Bytewise(service), &Weather::default(), &config);
        for (id, tool) in [(1, "ok"), (2, "iserr"), (3, "progress")] {
            let (status, _, body) = read(ours.call(post(call(id, tool))).await.expect("answered")).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let outcomes = telemetry.point_values("mcp.server.operation.duration", "mcp.request.outcome");
        assert_eq!(outcomes, ["failed", "ok", "ok"], "json: {json}");
        let progress = telemetry.span("tools/call progress", SpanKind::Server);
        assert_eq!(outcome(&progress), (Some("ok".into()), None, None, false));
    }
}

/// A server whose one tool answers 17 MiB of text: more than the crate reads of an answer.
#[derive(Clone)]
struct Huge;

impl rmcp::ServerHandler for Huge {
    fn get_info(&self) -> rmcp::model::InitializeResult {
        Weather::default().get_info()
    }

    async fn call_tool(
        &self,
        _: rmcp::model::CallToolRequestParams,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let text = "a".repeat(17 << 20);
        Ok(rmcp::model::CallToolResponse::Complete(rmcp::model::CallToolResult::success(vec![
            rmcp::model::ContentBlock::text(text),
        ])))
    }
}

#[tokio::test]
async fn an_answer_too_long_to_read_is_relayed_whole_and_has_no_outcome() {
    for json in [false, true] {
        let telemetry = Telemetry::new();
        let otel = telemetry.otel();
        let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(json);
        let huge = || StreamableHttpService::new(|| Ok(Huge), Arc::new(LocalSessionManager::default()), config.clone());
        let mut ours = otel.sessionless(huge(), &Huge, &config);
        let wrapped = read(ours.call(post(call(1, "any"))).await.expect("answered")).await;
        let unwrapped = read(huge().call(post(call(1, "any"))).await.expect("answered")).await;
        assert!(wrapped.2.len() > 17 << 20, "the whole answer");
        assert!(wrapped == unwrapped, "the client reads the same");
        let span = telemetry.span("tools/call any", SpanKind::Server);
        assert_eq!(outcome(&span), (None, None, None, false), "json: {json}");
        assert_eq!(telemetry.points("mcp.server.operation.duration"), Vec::new(), "no point");
    }
}

/// A service that answers with what it read of its request's body: the data, then each trailer.
#[derive(Clone)]
struct Echo;

impl<B: Body + Send + 'static> Service<Request<B>> for Echo
where
    B::Data: Send,
    B::Error: std::fmt::Debug,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        Box::pin(async move {
            let read = request.into_body().collect().await.expect("a body");
            let trailers = read.trailers().map(|trailers| format!("{trailers:?}")).unwrap_or_default();
            let data = String::from_utf8(read.to_bytes().to_vec()).expect("utf-8");
            Ok(Response::new(Full::new(Bytes::from(format!("{data}|{trailers}")))))
        })
    }
}

#[tokio::test]
async fn a_request_is_handed_on_whole_its_trailers_too() {
    let telemetry = Telemetry::new();
    let (_, config) = rmcp(false, false);
    let mut ours = telemetry.otel().sessionless(Echo, &Weather::default(), &config);
    let mut trailers = http::HeaderMap::new();
    trailers.insert("x-checksum", "42".parse().expect("a header"));
    let frames = Frames(vec![Frame::trailers(trailers.clone()), Frame::data(Bytes::from(call(1, "ok")))]);
    let request = Request::post("http://127.0.0.1/mcp").body(frames).expect("a request");
    let (_, _, answer) = read(ours.call(request).await.expect("answered")).await;
    assert_eq!(answer, format!("{}|{trailers:?}", call(1, "ok")));
}

/// A body of these frames, the last first.
struct Frames(Vec<Frame<Bytes>>);

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().0.pop().map(Ok))
    }
}
