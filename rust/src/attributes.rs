//! A request's attributes: what both sides say of it (its method and what its parameters name,
//! bounded) and what the session knows of its server, for its span and its point together. A
//! session's attributes are made once ([`Session`]); a request's per call, its strings shared
//! between its span and its point. A tool call's content, captured only when asked, is its span's
//! alone: on a point it would make a series per call.

use std::borrow::Cow;
use std::sync::Arc;

use opentelemetry::{KeyValue, Value};

use crate::config::Config;
use crate::metrics::{Bound, CallMetrics};
use crate::model::{bounded, captured};
use crate::semconv::{
    GEN_AI_OPERATION_NAME, GEN_AI_PROMPT_NAME, GEN_AI_TOOL_CALL_ARGUMENTS, GEN_AI_TOOL_CALL_RESULT, GEN_AI_TOOL_NAME,
    JSONRPC_REQUEST_ID, KNOWN_METHODS, MCP_METHOD_NAME, MCP_PROTOCOL_VERSION, MCP_RESOURCE_URI, MCP_SERVER_NAME,
    MCP_SERVER_VERSION, METHOD_PROMPTS_GET, METHOD_TOOLS_CALL, NETWORK_TRANSPORT, OPERATION_EXECUTE_TOOL,
    RESOURCE_URI_METHODS,
};

/// One request as both sides describe it, as its sender wrote it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Request<'a> {
    pub(crate) method: &'a str,
    /// The method as our constant, when the specification defines it (looked up once).
    pub(crate) known: Option<&'static str>,
    /// The tool or prompt it names.
    pub(crate) target: Option<&'a str>,
    /// The resource it reads or subscribes to.
    pub(crate) uri: Option<&'a str>,
}

impl<'a> Request<'a> {
    pub(crate) fn new(method: &'a str, target: Option<&'a str>, uri: Option<&'a str>) -> Self {
        let known = KNOWN_METHODS.iter().copied().find(|known| *known == method);
        Self { method, known, target, uri }
    }

    /// A request of `method`, rmcp's constant of a method the specification defines: no lookup.
    pub(crate) fn known(method: &'static str, target: Option<&'a str>, uri: Option<&'a str>) -> Self {
        debug_assert!(KNOWN_METHODS.contains(&method), "{method} is not in the specification");
        Self { method, known: Some(method), target, uri }
    }

    /// The method, to outlive the request: our constant, or a copy of a peer's.
    pub(crate) fn owned_method(&self) -> Cow<'static, str> {
        self.known.map_or_else(|| Cow::Owned(self.method.to_owned()), Cow::Borrowed)
    }
}

/// What a session's peer said of the server and the protocol, and what its connection is (the
/// front ends' facts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SessionFacts {
    pub(crate) server_name: Option<String>,
    pub(crate) server_version: Option<String>,
    pub(crate) protocol_version: Option<String>,
    /// `pipe` or `tcp`, when the wire knows its transport (wire.rs).
    pub(crate) network_transport: Option<&'static str>,
}

/// A session's attributes, made once: on every span of it, and (the server's name admitted by its
/// bound, the protocol version, the transport) on every point.
#[derive(Clone, Debug, Default)]
pub(crate) struct Session {
    span: Vec<KeyValue>,
    point: Vec<KeyValue>,
}

impl Session {
    pub(crate) fn new(facts: &SessionFacts, config: &Config, metrics: &CallMetrics) -> Self {
        let limit = config.max_name_length;
        let mut session = Self::default();
        if let Some(version) = &facts.protocol_version {
            let version = shared(version, limit);
            session.point.push(KeyValue::new(MCP_PROTOCOL_VERSION, version.clone()));
            session.span.push(KeyValue::new(MCP_PROTOCOL_VERSION, version));
        }
        if let Some(transport) = facts.network_transport {
            session.over(transport);
        }
        let (server, version) = match &config.server_name {
            Some(name) => (Some(name), config.server_version.as_ref()),
            None => (facts.server_name.as_ref(), facts.server_version.as_ref()),
        };
        if let Some(server) = server {
            let server: Arc<str> = Arc::from(bounded(server, limit));
            session.point.push(metrics.point_attribute(MCP_SERVER_NAME, &server, Bound::Server));
            session.span.push(KeyValue::new(MCP_SERVER_NAME, Value::from(server)));
        }
        // A server that reports an empty version states none (as every language records it).
        if let Some(version) = version.filter(|version| !version.is_empty()) {
            session.span.push(KeyValue::new(MCP_SERVER_VERSION, shared(version, limit)));
        }
        session
    }

    /// The same session over `transport` (learnt once its first request was sent).
    pub(crate) fn with_network_transport(&self, transport: &'static str) -> Self {
        let mut session = self.clone();
        session.over(transport);
        session
    }

    fn over(&mut self, transport: &'static str) {
        self.point.push(KeyValue::new(NETWORK_TRANSPORT, transport));
        self.span.push(KeyValue::new(NETWORK_TRANSPORT, transport));
    }

    /// What every span of the session carries.
    pub(crate) fn span(&self) -> &[KeyValue] {
        &self.span
    }

    /// What every point of the session carries.
    pub(crate) fn point(&self) -> &[KeyValue] {
        &self.point
    }
}

/// `text` bounded, as a value its span and its point share.
fn shared(text: &str, limit: usize) -> Value {
    Value::from(Arc::<str>::from(bounded(text, limit)))
}

/// The attributes a request's span or point may get beside its session's: its own (four at most),
/// its id, a session id, a conversation id, two learnt at its end, its outcome's (four at most).
const ROOM: usize = 13;

/// A request's span name, attributes and point attributes.
pub(crate) struct Described {
    pub(crate) name: String,
    pub(crate) tool_call: bool,
    pub(crate) attributes: Vec<KeyValue>,
    pub(crate) point: Vec<KeyValue>,
}

/// The attributes of `request` in `session` (`id`: its JSON-RPC id, when this side knows it).
pub(crate) fn describe(
    request: Request<'_>,
    session: &Session,
    id: Option<String>,
    config: &Config,
    metrics: &CallMetrics,
) -> Described {
    let limit = config.max_name_length;
    // Room for what the span and the point get later too (the request's id, the outcome's
    // attributes): the span's attributes are not moved again when it ends.
    let mut attributes = Vec::with_capacity(ROOM + session.span.len());
    let mut point = Vec::with_capacity(ROOM + session.point.len());
    // A method the specification defines is one of our constants; another came from a peer:
    // bounded like a name, and on points only as far as its bound admits.
    let known = request.known;
    let from_peer: Option<Arc<str>> = known.is_none().then(|| Arc::from(bounded(request.method, limit)));
    let (method, method_value) = match (known, &from_peer) {
        (Some(known), _) => {
            point.push(KeyValue::new(MCP_METHOD_NAME, known));
            (known, Value::from(known))
        }
        (None, Some(method)) => {
            point.push(metrics.point_attribute(MCP_METHOD_NAME, method, Bound::Method));
            (&**method, Value::from(Arc::clone(method)))
        }
        (None, None) => unreachable!("a method from a peer is bounded above"),
    };
    attributes.push(KeyValue::new(MCP_METHOD_NAME, method_value));
    let tool_call = method == METHOD_TOOLS_CALL;
    if tool_call {
        attributes.push(KeyValue::new(GEN_AI_OPERATION_NAME, OPERATION_EXECUTE_TOOL));
        point.push(KeyValue::new(GEN_AI_OPERATION_NAME, OPERATION_EXECUTE_TOOL));
    }
    let target: Option<Arc<str>> = request.target.map(|target| Arc::from(bounded(target, limit)));
    // Written out rather than `format!`: the formatting machinery is more code to run per call.
    let name = match &target {
        Some(target) => [method, " ", target].concat(),
        None => method.to_owned(),
    };
    let named = match target {
        Some(target) if tool_call => Some((GEN_AI_TOOL_NAME, target, Bound::Tool)),
        Some(target) if method == METHOD_PROMPTS_GET => Some((GEN_AI_PROMPT_NAME, target, Bound::Prompt)),
        _ => None,
    };
    if let Some((key, target, bound)) = named {
        point.push(metrics.point_attribute(key, &target, bound));
        attributes.push(KeyValue::new(key, Value::from(target)));
    }
    if let Some(uri) = request.uri.filter(|_| RESOURCE_URI_METHODS.contains(&method)) {
        let uri: Arc<str> = Arc::from(bounded(uri, config.max_content_length));
        if config.metrics_resource_uri {
            point.push(metrics.point_attribute(MCP_RESOURCE_URI, &uri, Bound::Resource));
        }
        attributes.push(KeyValue::new(MCP_RESOURCE_URI, Value::from(uri)));
    }
    if let Some(id) = id {
        attributes.push(KeyValue::new(JSONRPC_REQUEST_ID, id));
    }
    attributes.extend_from_slice(&session.span);
    point.extend_from_slice(&session.point);
    Described { name, tool_call, attributes, point }
}

/// `{key: text}` of `content` when capture is on ([`captured`]: redacted, bounded).
fn content(key: &'static str, content: &impl serde::Serialize, config: &Config) -> Option<KeyValue> {
    if !config.capture_content {
        return None;
    }
    let value = serde_json::to_value(content).ok()?;
    captured(&value, config.max_content_length).map(|text| KeyValue::new(key, text))
}

/// A tool call's arguments, captured when asked (a call with none has no attribute).
pub(crate) fn arguments(arguments: Option<&impl serde::Serialize>, config: &Config) -> Option<KeyValue> {
    content(GEN_AI_TOOL_CALL_ARGUMENTS, arguments?, config)
}

/// A tool call's result, captured when asked (an error is no result: it has none).
pub(crate) fn result(result: Option<&impl serde::Serialize>, config: &Config) -> Option<KeyValue> {
    content(GEN_AI_TOOL_CALL_RESULT, result?, config)
}
