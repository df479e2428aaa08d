//! What rmcp's types say, as the classifier's facts: the only module that reads rmcp's requests,
//! results, notifications, errors and peers (both front ends, `service.rs` and `client.rs`, hand
//! what they receive here). A type a later rmcp adds is read by its wire name, never guessed.

use rmcp::model::{
    CallToolResult, ClientNotification, ClientRequest, ClientResult, CompleteResult, ConstString, ElicitationAction,
    ErrorData, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    ReadResourceResult, RequestId, ServerNotification, ServerRequest, ServerResult,
};
use std::borrow::Cow;

use rmcp::model::{CancelledNotificationParam, GetMeta, JsonObject, NotificationMetaObject};
use rmcp::service::{NotificationContext, Peer, RequestHandle, ServiceRole};
use rmcp::{RoleClient, RoleServer, Service, ServiceError};

use crate::attributes::{Request, SessionFacts};
use crate::model::{Answer, ClientFailure, RpcError};
use crate::semconv::{KNOWN_METHODS, OTHER_VALUE, ResultType};

/// The session a request came in over rmcp's streamable HTTP server: its `Mcp-Session-Id`
/// header, which rmcp hands the service in the request's extensions with the HTTP request's head
/// (none on `initialize`, which the answer gives its session).
#[cfg(feature = "streamable-http-server")]
pub(crate) fn http_session_id(extensions: &rmcp::model::Extensions) -> Option<&str> {
    let head = extensions.get::<http::request::Parts>()?;
    head.headers.get(rmcp::transport::common::http_header::HEADER_SESSION_ID)?.to_str().ok()
}

/// Without the feature, rmcp's HTTP server is not built: no request came over it.
#[cfg(not(feature = "streamable-http-server"))]
pub(crate) const fn http_session_id(_: &rmcp::model::Extensions) -> Option<&str> {
    None
}

/// A received notification's `_meta`. rmcp (3.1 to 3.11) moves the notification's extensions into
/// its `NotificationContext` before it takes the `_meta` out of them, so `context.meta` is empty
/// and the `_meta` read off the wire is still in `context.extensions` (observed); both are read,
/// so an rmcp that fixes the order changes nothing here.
pub(crate) fn notification_meta<R: ServiceRole>(context: &NotificationContext<R>) -> &JsonObject {
    match context.extensions.get::<NotificationMetaObject>() {
        Some(meta) if context.meta.0.0.is_empty() => &meta.0.0,
        _ => &context.meta.0.0,
    }
}

/// What the front end reads of each role's requests and results (rmcp's types, per side).
pub(crate) trait Handles: ServiceRole {
    /// The other role: what this role sends, its peer handles (its `Req` is our `PeerReq`...).
    type Other: Handles<PeerReq = Self::Req, Resp = Self::PeerResp, PeerNot = Self::Not, Not = Self::PeerNot>;
    /// The request's method and what it names.
    fn request(request: &Self::PeerReq) -> Request<'_>;
    /// What a result says of itself.
    fn answer(response: &Self::Resp) -> Answer;
    /// What this side knows of the server it serves or is served by.
    fn session<S: Service<Self>>(service: &S, peer: &Peer<Self>) -> SessionFacts;
    /// A notification's method.
    fn notification(notification: &Self::PeerNot) -> &str;
    /// The request a peer's `notifications/cancelled` cancels, and the reason it gives.
    fn cancelled_request(notification: &Self::PeerNot) -> Option<(&RequestId, Option<&str>)>;
    /// A request's `_meta`: rmcp's (in its extensions) and the one its parameters carry.
    fn meta(request: &Self::PeerReq) -> Cow<'_, JsonObject> {
        Cow::Borrowed(&request.get_meta().0.0)
    }
    /// The `_meta` a request's parameters carry: where `Client` puts its context.
    fn params_meta(request: &Self::PeerReq) -> Option<&JsonObject> {
        let _ = request;
        None
    }
    /// The `_meta` of a request this side sends, where the wire puts the trace context.
    fn meta_mut(request: &mut Self::PeerReq) -> &mut JsonObject;
    /// The `_meta` of a notification this side sends.
    fn notification_meta_mut(notification: &mut Self::PeerNot) -> &mut JsonObject;
    /// A `tools/call`'s arguments (content, captured only when asked).
    fn tool_arguments(request: &Self::PeerReq) -> Option<&JsonObject> {
        let _ = request;
        None
    }
    /// A `tools/call`'s result (content, captured only when asked).
    fn tool_result(response: &Self::Resp) -> Option<&CallToolResult> {
        let _ = response;
        None
    }
    /// What the answer to `initialize` says of the server (this role's own answer).
    fn served(response: &Self::Resp) -> Option<SessionFacts> {
        let _ = response;
        None
    }
    /// The protocol version the answer to `initialize` agreed.
    fn negotiated(response: &Self::Resp) -> Option<String> {
        let _ = response;
        None
    }
}

impl Handles for RoleServer {
    type Other = RoleClient;

    fn request(request: &ClientRequest) -> Request<'_> {
        // The requests that name something are rmcp's typed ones: their method is its constant.
        let (method, target, uri) = match request {
            ClientRequest::CallToolRequest(r) => (r.method.as_str(), Some(&*r.params.name), None),
            ClientRequest::GetPromptRequest(r) => (r.method.as_str(), Some(r.params.name.as_str()), None),
            ClientRequest::ReadResourceRequest(r) => (r.method.as_str(), None, Some(r.params.uri.as_str())),
            ClientRequest::SubscribeRequest(r) => (r.method.as_str(), None, Some(r.params.uri.as_str())),
            ClientRequest::UnsubscribeRequest(r) => (r.method.as_str(), None, Some(r.params.uri.as_str())),
            _ => return Request::new(request.method(), None, None),
        };
        Request::known(method, target, uri)
    }

    fn answer(response: &ServerResult) -> Answer {
        match response {
            ServerResult::CallToolResult(result) => result.answer(),
            ServerResult::InputRequiredResult(_) => {
                Answer { result_type: Some(ResultType::InputRequired), ..Answer::default() }
            }
            ServerResult::CreateTaskResult(_) => Answer { result_type: Some(ResultType::Task), ..Answer::default() },
            _ => Answer::default(),
        }
    }

    fn tool_arguments(request: &ClientRequest) -> Option<&JsonObject> {
        match request {
            ClientRequest::CallToolRequest(r) => r.params.arguments.as_ref(),
            _ => None,
        }
    }

    fn tool_result(response: &ServerResult) -> Option<&CallToolResult> {
        match response {
            ServerResult::CallToolResult(result) => Some(result),
            _ => None,
        }
    }

    fn session<S: Service<Self>>(service: &S, peer: &Peer<Self>) -> SessionFacts {
        let info = service.get_info();
        SessionFacts {
            server_name: Some(info.server_info.name),
            server_version: Some(info.server_info.version),
            protocol_version: peer.peer_info().map(|client| client.protocol_version.to_string()),
            network_transport: None,
        }
    }

    fn negotiated(response: &ServerResult) -> Option<String> {
        match response {
            ServerResult::InitializeResult(result) => Some(result.protocol_version.to_string()),
            _ => None,
        }
    }

    fn cancelled_request(notification: &ClientNotification) -> Option<(&RequestId, Option<&str>)> {
        match notification {
            ClientNotification::CancelledNotification(cancelled) => cancel_of(&cancelled.params),
            _ => None,
        }
    }

    fn meta_mut(request: &mut ClientRequest) -> &mut JsonObject {
        &mut request.get_meta_mut().0.0
    }

    fn notification_meta_mut(notification: &mut ClientNotification) -> &mut JsonObject {
        &mut notification.get_meta_mut().0.0
    }

    fn params_meta(request: &ClientRequest) -> Option<&JsonObject> {
        let params = match request {
            ClientRequest::CallToolRequest(r) => r.params.meta.as_ref(),
            ClientRequest::GetPromptRequest(r) => r.params.meta.as_ref(),
            ClientRequest::ReadResourceRequest(r) => r.params.meta.as_ref(),
            ClientRequest::CompleteRequest(r) => r.params.meta.as_ref(),
            ClientRequest::ListToolsRequest(r) => r.params.as_ref().and_then(|params| params.meta.as_ref()),
            ClientRequest::ListPromptsRequest(r) => r.params.as_ref().and_then(|params| params.meta.as_ref()),
            ClientRequest::ListResourcesRequest(r) => r.params.as_ref().and_then(|params| params.meta.as_ref()),
            ClientRequest::ListResourceTemplatesRequest(r) => r.params.as_ref().and_then(|params| params.meta.as_ref()),
            _ => None,
        };
        params.map(|meta| &meta.0.0)
    }

    fn meta(request: &ClientRequest) -> Cow<'_, JsonObject> {
        // `Client`'s typed calls carry their context in their parameters' `_meta`.
        let params = Self::params_meta(request);
        let own = &request.get_meta().0.0;
        match params {
            None => Cow::Borrowed(own),
            Some(params) if own.is_empty() => Cow::Borrowed(params),
            // Both: rmcp writes them as one, its own fields last.
            Some(params) => {
                let mut merged = params.clone();
                merged.extend(own.iter().map(|(key, value)| (key.clone(), value.clone())));
                Cow::Owned(merged)
            }
        }
    }

    fn served(response: &ServerResult) -> Option<SessionFacts> {
        match response {
            ServerResult::InitializeResult(result) => Some(SessionFacts {
                server_name: Some(result.server_info.name.clone()),
                server_version: Some(result.server_info.version.clone()),
                protocol_version: Some(result.protocol_version.to_string()),
                network_transport: None,
            }),
            _ => None,
        }
    }

    fn notification(notification: &ClientNotification) -> &str {
        match notification {
            ClientNotification::CancelledNotification(n) => n.method.as_str(),
            ClientNotification::ProgressNotification(n) => n.method.as_str(),
            ClientNotification::InitializedNotification(n) => n.method.as_str(),
            ClientNotification::RootsListChangedNotification(n) => n.method.as_str(),
            ClientNotification::CustomNotification(n) => n.method.as_str(),
            #[allow(unreachable_patterns)] // a later rmcp's
            other => wire_method(other),
        }
    }
}

impl Handles for RoleClient {
    type Other = RoleServer;

    fn request(request: &ServerRequest) -> Request<'_> {
        let method = match request {
            ServerRequest::PingRequest(r) => r.method.as_str(),
            ServerRequest::CreateMessageRequest(r) => r.method.as_str(),
            ServerRequest::ListRootsRequest(r) => r.method.as_str(),
            ServerRequest::ElicitRequest(r) => r.method.as_str(),
            ServerRequest::CustomRequest(r) => r.method.as_str(),
            // A request a later rmcp adds: named by the constant of our spec it is (or _OTHER).
            other => wire_method(other),
        };
        Request::new(method, None, None)
    }

    fn answer(response: &ClientResult) -> Answer {
        match response {
            ClientResult::ElicitResult(result) => {
                Answer { action: Some(action(&result.action).to_owned()), ..Answer::default() }
            }
            _ => Answer::default(),
        }
    }

    fn session<S: Service<Self>>(_: &S, peer: &Peer<Self>) -> SessionFacts {
        session_of(peer)
    }

    fn meta_mut(request: &mut ServerRequest) -> &mut JsonObject {
        &mut request.get_meta_mut().0.0
    }

    fn notification_meta_mut(notification: &mut ServerNotification) -> &mut JsonObject {
        &mut notification.get_meta_mut().0.0
    }

    fn cancelled_request(notification: &ServerNotification) -> Option<(&RequestId, Option<&str>)> {
        match notification {
            ServerNotification::CancelledNotification(cancelled) => cancel_of(&cancelled.params),
            _ => None,
        }
    }

    fn notification(notification: &ServerNotification) -> &str {
        match notification {
            ServerNotification::CancelledNotification(n) => n.method.as_str(),
            ServerNotification::ProgressNotification(n) => n.method.as_str(),
            ServerNotification::LoggingMessageNotification(n) => n.method.as_str(),
            ServerNotification::ResourceUpdatedNotification(n) => n.method.as_str(),
            ServerNotification::ResourceListChangedNotification(n) => n.method.as_str(),
            ServerNotification::ToolListChangedNotification(n) => n.method.as_str(),
            ServerNotification::PromptListChangedNotification(n) => n.method.as_str(),
            ServerNotification::CustomNotification(n) => n.method.as_str(),
            other => wire_method(other),
        }
    }
}

fn cancel_of(params: &CancelledNotificationParam) -> Option<(&RequestId, Option<&str>)> {
    params.request_id.as_ref().map(|id| (id, params.reason.as_deref()))
}

/// Whether a request's own sender cancelled it for its timeout: rmcp says so in the reason it sends.
pub(crate) fn timed_out(reason: Option<&str>) -> bool {
    reason == Some(RequestHandle::<RoleClient>::REQUEST_TIMEOUT_REASON)
}

/// A message of a type this crate does not match, by its wire name when the spec has it (else
/// `_OTHER`: a name from a peer is never a span name unbounded).
fn wire_method(message: &impl serde::Serialize) -> &'static str {
    let method = serde_json::to_value(message).ok();
    let method = method.as_ref().and_then(|value| value.get("method")).and_then(serde_json::Value::as_str);
    KNOWN_METHODS.iter().copied().find(|known| Some(*known) == method).unwrap_or(OTHER_VALUE)
}

fn result_type(kind: &str) -> Option<ResultType> {
    ResultType::ALL.into_iter().find(|known| known.as_str() == kind)
}

fn action(action: &ElicitationAction) -> &'static str {
    match action {
        ElicitationAction::Accept => "accept",
        ElicitationAction::Decline => "decline",
        ElicitationAction::Cancel => "cancel",
        #[allow(unreachable_patterns)]
        // non_exhaustive: a later action is none of the declining ones
        _ => "other",
    }
}

/// Where a 2026-07-28 request names its protocol version (it has no handshake).
const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The protocol version a request's `_meta` names, if it names one.
pub(crate) fn requested_protocol(meta: &serde_json::Map<String, serde_json::Value>) -> Option<&str> {
    meta.get(PROTOCOL_VERSION_META_KEY).and_then(serde_json::Value::as_str)
}

/// A JSON-RPC error as the classifier takes it.
pub(crate) fn rpc_error(error: &ErrorData) -> RpcError {
    RpcError { code: i64::from(error.code.0), message: error.message.to_string() }
}

/// What a client knows of its server once the handshake is over.
pub(crate) fn session_of(peer: &Peer<RoleClient>) -> SessionFacts {
    peer.peer_info().map_or_else(SessionFacts::default, |server| SessionFacts {
        server_name: server.server_info.as_ref().map(|info| info.name.clone()),
        server_version: server.server_info.as_ref().map(|info| info.version.clone()),
        protocol_version: Some(server.protocol_version.to_string()),
        network_transport: None,
    })
}

/// What a result says of itself (a tool call's `isError`; nothing for the others).
pub(crate) trait Answered {
    fn answer(&self) -> Answer {
        Answer::default()
    }
    /// The tool call's result it is, if it is one (content, captured only when asked).
    fn tool_result(&self) -> Option<&CallToolResult> {
        None
    }
}

impl Answered for CallToolResult {
    fn answer(&self) -> Answer {
        let result_type = self.result_type.as_ref().and_then(|kind| result_type(kind.as_str()));
        Answer { result_type, is_error: self.is_error == Some(true), action: None }
    }

    fn tool_result(&self) -> Option<&CallToolResult> {
        Some(self)
    }
}

impl Answered for ServerResult {
    fn answer(&self) -> Answer {
        <RoleServer as Handles>::answer(self)
    }

    fn tool_result(&self) -> Option<&CallToolResult> {
        <RoleServer as Handles>::tool_result(self)
    }
}

impl Answered for ListToolsResult {}
impl Answered for ListPromptsResult {}
impl Answered for ListResourcesResult {}
impl Answered for ListResourceTemplatesResult {}
impl Answered for GetPromptResult {}
impl Answered for ReadResourceResult {}
impl Answered for CompleteResult {}

/// What a failed send's error says, as the classifier takes it.
pub(crate) fn failure<'a>(error: &ServiceError, method: &'a str, keep_message: bool) -> ClientFailure<'a> {
    let mut facts = ClientFailure { keep_message, method, ..ClientFailure::default() };
    match error {
        ServiceError::McpError(error) => facts.rpc = Some(rpc_error(error)),
        // rmcp's answer to a cancel of this request: from its caller, through its RequestHandle.
        ServiceError::Cancelled { .. } => facts.caller_cancelled = true,
        ServiceError::Timeout { .. } => facts.timed_out = true,
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => facts.connection_closed = true,
        other => facts.error_name = error_name(other),
    }
    facts
}

/// `error.type` of an rmcp error the model has no fact for: its variant's name.
const fn error_name(error: &ServiceError) -> &'static str {
    match error {
        ServiceError::UnexpectedResponse => "UnexpectedResponse",
        ServiceError::SubscriptionLagged { .. } => "SubscriptionLagged",
        ServiceError::InputRequiredRoundsExceeded { .. } => "InputRequiredRoundsExceeded",
        _ => OTHER_VALUE,
    }
}

/// A message read off HTTP (`http.rs`): only what the attributes and the classifier take. The
/// rest is skipped, not built into rmcp's types: a tool's content is never parsed, and no untagged
/// enum tries its variants (built whole, a request and its answer cost 85k instructions more).
#[cfg(feature = "streamable-http-server")]
pub(crate) mod wire {
    use std::borrow::Cow;

    use rmcp::model::{ErrorData, JsonObject, RequestId};
    use serde::Deserialize;
    use serde::de::IgnoredAny;

    use crate::attributes::Request;
    use crate::model::Answer;
    use crate::semconv::{METHOD_PROMPTS_GET, METHOD_TOOLS_CALL};

    /// A request or a notification a client sent (a notification has no id).
    #[derive(Deserialize)]
    pub(crate) struct Sent<'a> {
        pub(crate) id: Option<RequestId>,
        #[serde(borrow)]
        method: Cow<'a, str>,
        #[serde(borrow, default)]
        params: Option<Params<'a>>,
    }

    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, default)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        uri: Option<Cow<'a, str>>,
        #[serde(rename = "_meta", default)]
        meta: Option<JsonObject>,
    }

    impl<'a> Sent<'a> {
        /// A JSON-RPC request or notification, if `body` is one.
        pub(crate) fn read(body: &'a [u8]) -> Option<Self> {
            serde_json::from_slice(body).ok()
        }

        /// The request's method and what it names (a tool or prompt by name, a resource by URI).
        pub(crate) fn request(&self) -> Request<'_> {
            let params = self.params.as_ref();
            let named = [METHOD_TOOLS_CALL, METHOD_PROMPTS_GET].contains(&&*self.method);
            let target = params.and_then(|params| params.name.as_deref()).filter(|_| named);
            Request::new(&self.method, target, params.and_then(|params| params.uri.as_deref()))
        }

        /// Its `_meta`, empty when it has none.
        pub(crate) fn meta(&self) -> Cow<'_, JsonObject> {
            self.params
                .as_ref()
                .and_then(|params| params.meta.as_ref())
                .map_or_else(|| Cow::Owned(JsonObject::new()), Cow::Borrowed)
        }
    }

    /// A message a server sent back: the answer to a request when it has a result or an error.
    #[derive(Deserialize)]
    pub(crate) struct Reply {
        id: Option<RequestId>,
        #[serde(default)]
        method: Option<IgnoredAny>,
        #[serde(default)]
        result: Option<Outcome>,
        #[serde(default)]
        error: Option<ErrorData>,
    }

    /// What a result says of itself: a tool call's `isError`, an unfinished `resultType`, the
    /// version a handshake agreed.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Outcome {
        #[serde(default)]
        is_error: Option<bool>,
        #[serde(default)]
        result_type: Option<String>,
        #[serde(default)]
        protocol_version: Option<String>,
    }

    /// A `tools/call`'s arguments, read from its message again: only when content is captured.
    pub(crate) fn tool_arguments(message: &[u8]) -> Option<JsonObject> {
        #[derive(Deserialize)]
        struct Call {
            params: Arguments,
        }
        #[derive(Deserialize)]
        struct Arguments {
            arguments: Option<JsonObject>,
        }
        serde_json::from_slice::<Call>(message).ok()?.params.arguments
    }

    /// A `tools/call`'s result, read from its answer again: only when content is captured (an
    /// error, or a result that is no tool's, has none).
    pub(crate) fn tool_result(message: &[u8]) -> Option<serde_json::Value> {
        #[derive(Deserialize)]
        struct Answer {
            result: Option<serde_json::Value>,
        }
        let result = serde_json::from_slice::<Answer>(message).ok()?.result?;
        let tool = ["content", "structuredContent"].iter().any(|key| result.get(key).is_some());
        tool.then_some(result)
    }

    /// The answer to request `id`: its result's facts and the version it agreed, or its error.
    pub(crate) enum Answered {
        Result(Answer, Option<String>),
        Error(ErrorData),
    }

    impl Reply {
        /// The answer to request `id`, if `message` is one (an error with no id answers the only
        /// request its body carried).
        pub(crate) fn to(id: &RequestId, message: &[u8]) -> Result<Option<Answered>, serde_json::Error> {
            let reply: Self = serde_json::from_slice(message)?;
            if reply.method.is_some() {
                return Ok(None);
            }
            Ok(match (reply.result, reply.error) {
                (Some(result), _) if reply.id.as_ref() == Some(id) => {
                    let result_type = result.result_type.as_deref().and_then(crate::facts::result_type);
                    let answer = Answer { result_type, is_error: result.is_error == Some(true), action: None };
                    Some(Answered::Result(answer, result.protocol_version))
                }
                (None, Some(error)) if reply.id.as_ref().is_none_or(|answered| answered == id) => {
                    Some(Answered::Error(error))
                }
                _ => None,
            })
        }
    }
}
