//! A request's attributes: what both sides say of it (its method and what its parameters name,
//! bounded) and what the session knows of its server, for its span and its point together.

use opentelemetry::KeyValue;

use crate::metrics::{Bound, CallMetrics};
use crate::model::bounded;
use crate::options::Config;
use crate::semconv::{
    GEN_AI_OPERATION_NAME, GEN_AI_PROMPT_NAME, GEN_AI_TOOL_NAME, JSONRPC_REQUEST_ID, KNOWN_METHODS, MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION, MCP_RESOURCE_URI, MCP_SERVER_NAME, MCP_SERVER_VERSION, METHOD_PROMPTS_GET, METHOD_TOOLS_CALL,
    OPERATION_EXECUTE_TOOL, RESOURCE_URI_METHODS,
};

/// One request as both sides describe it, as its sender wrote it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Request<'a> {
    pub(crate) method: &'a str,
    /// The tool or prompt it names.
    pub(crate) target: Option<&'a str>,
    /// The resource it reads or subscribes to.
    pub(crate) uri: Option<&'a str>,
}

/// What a session knows of its server and protocol.
#[derive(Clone, Debug, Default)]
pub(crate) struct Session {
    pub(crate) server_name: Option<String>,
    pub(crate) server_version: Option<String>,
    pub(crate) protocol_version: Option<String>,
}

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
    // A method the specification does not define came from a peer: bounded like a name.
    let method =
        if KNOWN_METHODS.contains(&request.method) { request.method.into() } else { bounded(request.method, limit) };
    let target = request.target.map(|target| bounded(target, limit));
    let mut attributes = Vec::with_capacity(9);
    let mut point = Vec::with_capacity(7);
    attributes.push(KeyValue::new(MCP_METHOD_NAME, method.to_string()));
    point.push(metrics.point_attribute(MCP_METHOD_NAME, &method, Bound::Method));
    let tool_call = method == METHOD_TOOLS_CALL;
    if tool_call {
        attributes.push(KeyValue::new(GEN_AI_OPERATION_NAME, OPERATION_EXECUTE_TOOL));
        point.push(KeyValue::new(GEN_AI_OPERATION_NAME, OPERATION_EXECUTE_TOOL));
    }
    let named = match &target {
        Some(target) if tool_call => Some((GEN_AI_TOOL_NAME, target, Bound::Tool)),
        Some(target) if method == METHOD_PROMPTS_GET => Some((GEN_AI_PROMPT_NAME, target, Bound::Prompt)),
        _ => None,
    };
    if let Some((key, target, bound)) = named {
        attributes.push(KeyValue::new(key, target.to_string()));
        point.push(metrics.point_attribute(key, target, bound));
    }
    if let Some(uri) = request.uri.filter(|_| RESOURCE_URI_METHODS.contains(&&*method)) {
        attributes.push(KeyValue::new(MCP_RESOURCE_URI, bounded(uri, config.max_content_length).into_owned()));
    }
    if let Some(id) = id {
        attributes.push(KeyValue::new(JSONRPC_REQUEST_ID, id));
    }
    if let Some(version) = &session.protocol_version {
        let version = bounded(version, limit).into_owned();
        point.push(KeyValue::new(MCP_PROTOCOL_VERSION, version.clone()));
        attributes.push(KeyValue::new(MCP_PROTOCOL_VERSION, version));
    }
    let (server, version) = match &config.server_name {
        Some(name) => (Some(name), config.server_version.as_ref()),
        None => (session.server_name.as_ref(), session.server_version.as_ref()),
    };
    if let Some(server) = server {
        let server = bounded(server, limit);
        point.push(metrics.point_attribute(MCP_SERVER_NAME, &server, Bound::Server));
        attributes.push(KeyValue::new(MCP_SERVER_NAME, server.into_owned()));
    }
    if let Some(version) = version {
        attributes.push(KeyValue::new(MCP_SERVER_VERSION, bounded(version, limit).into_owned()));
    }
    let name = match &target {
        Some(target) => format!("{method} {target}"),
        None => method.to_string(),
    };
    Described { name, tool_call, attributes, point }
}
