//! The front end of requests the application sends: [`Client`], rmcp's `RunningService` of a
//! client with the same request methods, each one traced in the caller's own task. That is the
//! only place where the caller's context (the CLIENT span's parent, a `tracing` span's too through
//! tracing-opentelemetry) and a dropped call future can be seen: rmcp sends every request from
//! its own serve loop.
//!
//! Each method injects the span's context into the request's `params._meta`, calls rmcp's own
//! method (its timeouts, multi-round tool calls and cancel-on-drop kept), and classifies what that
//! returned. A future dropped before its answer ends its span at the drop: cancelled/caller.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use opentelemetry::{Context, KeyValue};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult, ConstString, GetPromptRequestParams,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult, RequestMetaObject,
};
use rmcp::model::{ClientRequest, GetMeta, JsonObject, RequestId, ServerResult};
use rmcp::service::{PeerRequestOptions, RequestHandle, RunningService};
use rmcp::{RoleClient, RoleServer, Service, ServiceError};
use serde_json::Map;

use crate::attributes::{self, Request, Session};
use crate::facts::{Answered, Handles, failure, session_of};
use crate::lifecycle::{Call, Learnt, Shared, Side};
use crate::model::{self};

/// A client whose every request sent through its methods gets a CLIENT span and a point
/// (`mcp_otel::client(().serve(transport).await?)`). It dereferences to rmcp's `RunningService`
/// for everything else (`peer()`, `cancel()`, `waiting()`); a request sent through those is not
/// traced (docs/rust.md).
pub struct Client<S: Service<RoleClient>> {
    running: RunningService<RoleClient, S>,
    shared: Arc<Shared>,
    session: Session,
    // The connection's transport, as its wire says it, and the session's attributes with it.
    learnt: Learnt,
    over: OnceLock<Session>,
}

impl<S: Service<RoleClient>> Deref for Client<S> {
    type Target = RunningService<RoleClient, S>;

    fn deref(&self) -> &Self::Target {
        &self.running
    }
}

/// A method of rmcp's whose params carry `_meta`, traced.
macro_rules! traced {
    ($(#[$doc:meta])* $name:ident($Params:ty) -> $Result:ty, $method:ident, |$params:ident| ($target:expr, $uri:expr, $arguments:expr)) => {
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// rmcp's, unchanged.
        pub async fn $name(&self, mut params: $Params) -> Result<$Result, ServiceError> {
            let $params = &params;
            let method = <rmcp::model::$method as ConstString>::VALUE;
            let call = self.open(Request::known(method, $target, $uri), $arguments);
            self.inject(&call, &mut params.meta);
            let result = self.running.$name(params).await;
            finish(call, method, &result, Vec::new());
            result
        }
    };
    ($(#[$doc:meta])* $name:ident(Option<$Params:ty>) -> $Result:ty, $method:ident) => {
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// rmcp's, unchanged.
        pub async fn $name(&self, params: Option<$Params>) -> Result<$Result, ServiceError> {
            let method = <rmcp::model::$method as ConstString>::VALUE;
            let call = self.open(Request::known(method, None, None), None);
            let params = self.inject_optional(&call, params);
            let result = self.running.$name(params).await;
            finish(call, method, &result, Vec::new());
            result
        }
    };
}

impl<S: Service<RoleClient>> Client<S> {
    pub(crate) fn new(running: RunningService<RoleClient, S>, shared: Arc<Shared>) -> Self {
        let session = Session::new(&session_of(running.peer()), &shared.config, &shared.lifecycle.metrics);
        Self { running, shared, session, learnt: Learnt::default(), over: OnceLock::new() }
    }

    /// rmcp's `RunningService`, unwrapped.
    pub fn into_inner(self) -> RunningService<RoleClient, S> {
        self.running
    }

    fn open(&self, request: Request<'_>, arguments: Option<&JsonObject>) -> Call {
        self.opened(request, arguments).0
    }

    /// The call of `request` (a tool call's `arguments` captured when asked), and whether a wrapped
    /// transport will know it by the context it carries (wire.rs) and give its span the request's id.
    fn opened(&self, request: Request<'_>, arguments: Option<&JsonObject>) -> (Call, bool) {
        let shared = &self.shared;
        let network = self.learnt.get();
        let session = network
            .map_or(&self.session, |network| self.over.get_or_init(|| self.session.with_network_transport(network)));
        let mut described = attributes::describe(request, session, None, &shared.config, &shared.lifecycle.metrics);
        described.attributes.extend(attributes::arguments(arguments, &shared.config));
        let mut call = shared.open(Side::Client, &Context::current(), described, Vec::new());
        let wired = shared.config.propagate && call.sent_by_client(&self.learnt, network.is_some());
        (call, wired)
    }

    /// The span's context into `meta`, created for it only when there is a context to carry.
    fn inject(&self, call: &Call, meta: &mut Option<RequestMetaObject>) {
        let created = meta.is_none();
        let fields = &mut meta.get_or_insert_with(RequestMetaObject::default).0.0;
        self.inject_into(call, fields);
        if created && fields.is_empty() {
            *meta = None;
        }
    }

    /// The propagator's fields for the call's span into `meta` (none when propagation is off).
    fn inject_into(&self, call: &Call, meta: &mut Map<String, serde_json::Value>) {
        let shared = &self.shared;
        if shared.config.propagate {
            shared.propagation.inject(call.context(), meta);
        }
    }

    /// `params` with the span's context, created for it only when there is a context to carry.
    fn inject_optional(&self, call: &Call, params: Option<PaginatedRequestParams>) -> Option<PaginatedRequestParams> {
        let mut meta = None;
        self.inject(call, &mut meta);
        match (params, meta) {
            (params, None) => params,
            (Some(mut params), Some(meta)) => {
                params.meta.get_or_insert_with(RequestMetaObject::default).0.0.extend(meta.0.0);
                Some(params)
            }
            (None, Some(meta)) => {
                let mut params = PaginatedRequestParams::default();
                params.meta = Some(meta);
                Some(params)
            }
        }
    }

    /// rmcp's `send_request`, traced: any request, by its method (and what it names).
    ///
    /// # Errors
    ///
    /// rmcp's, unchanged.
    pub async fn send_request(&self, mut request: ClientRequest) -> Result<ServerResult, ServiceError> {
        let method = request.method().to_owned();
        let call = self.open(<RoleServer as Handles>::request(&request), RoleServer::tool_arguments(&request));
        self.inject_into(&call, &mut request.get_meta_mut().0.0);
        let result = self.running.send_request(request).await;
        finish(call, &method, &result, Vec::new());
        result
    }

    /// rmcp's `send_request_with_option` (its timeout, its handle to cancel through), traced: the
    /// span ends when the returned request is answered, cancelled, or dropped.
    ///
    /// # Errors
    ///
    /// rmcp's, unchanged (a request it could not send is finished as failed).
    pub async fn send_request_with_option(
        &self,
        mut request: ClientRequest,
        options: PeerRequestOptions,
    ) -> Result<TracedRequest, ServiceError> {
        let method = request.method().to_owned();
        let (call, wired) =
            self.opened(<RoleServer as Handles>::request(&request), RoleServer::tool_arguments(&request));
        self.inject_into(&call, &mut request.get_meta_mut().0.0);
        match self.running.send_request_with_option(request, options).await {
            Ok(handle) => Ok(TracedRequest { handle, call, method, wired }),
            Err(error) => {
                let result: Result<ServerResult, ServiceError> = Err(error);
                finish(call, &method, &result, Vec::new());
                Err(result.err().unwrap_or(ServiceError::TransportClosed))
            }
        }
    }

    traced!(
        /// rmcp's `call_tool`, traced: `tools/call {name}`.
        call_tool(CallToolRequestParams) -> CallToolResult, CallToolRequestMethod, |params| (Some(&*params.name), None, params.arguments.as_ref())
    );
    traced!(
        /// rmcp's `get_prompt`, traced: `prompts/get {name}`.
        get_prompt(GetPromptRequestParams) -> GetPromptResult, GetPromptRequestMethod, |params| (Some(params.name.as_str()), None, None)
    );
    traced!(
        /// rmcp's `read_resource`, traced.
        read_resource(ReadResourceRequestParams) -> ReadResourceResult, ReadResourceRequestMethod, |params| (None, Some(params.uri.as_str()), None)
    );
    traced!(
        /// rmcp's `complete`, traced.
        complete(CompleteRequestParams) -> CompleteResult, CompleteRequestMethod, |_params| (None, None, None)
    );
    traced!(
        /// rmcp's `list_tools`, traced.
        list_tools(Option<PaginatedRequestParams>) -> ListToolsResult, ListToolsRequestMethod
    );
    traced!(
        /// rmcp's `list_prompts`, traced.
        list_prompts(Option<PaginatedRequestParams>) -> ListPromptsResult, ListPromptsRequestMethod
    );
    traced!(
        /// rmcp's `list_resources`, traced.
        list_resources(Option<PaginatedRequestParams>) -> ListResourcesResult, ListResourcesRequestMethod
    );
    traced!(
        /// rmcp's `list_resource_templates`, traced.
        list_resource_templates(Option<PaginatedRequestParams>) -> ListResourceTemplatesResult, ListResourceTemplatesRequestMethod
    );
}

/// A request sent with options, in flight: rmcp's `RequestHandle` with its span.
pub struct TracedRequest {
    handle: RequestHandle<RoleClient>,
    call: Call,
    method: String,
    // A wrapped transport gives the span the request's id.
    wired: bool,
}

impl TracedRequest {
    /// The request's JSON-RPC id.
    pub const fn id(&self) -> &RequestId {
        &self.handle.id
    }

    /// Waits for the answer (rmcp's `await_response`).
    ///
    /// # Errors
    ///
    /// rmcp's, unchanged: its timeout, a cancel, the peer's error, a closed transport.
    pub async fn await_response(self) -> Result<ServerResult, ServiceError> {
        let Self { handle, call, method, wired } = self;
        let id = id_attribute(&handle.id, wired);
        let result = handle.await_response().await;
        finish(call, &method, &result, id);
        result
    }

    /// Cancels the request (rmcp's `cancel`: `notifications/cancelled` with `reason`): the
    /// caller's cancel, cancelled/caller.
    ///
    /// # Errors
    ///
    /// rmcp's, unchanged: the notification could not be sent.
    pub async fn cancel(self, reason: Option<String>) -> Result<(), ServiceError> {
        let Self { handle, call, method, wired } = self;
        let id = id_attribute(&handle.id, wired);
        let result = handle.cancel(reason).await;
        let cancelled: Result<ServerResult, _> = Err(ServiceError::Cancelled { reason: None });
        finish(call, &method, &cancelled, id);
        result
    }
}

/// The request's id for its span, unless a wrapped transport gave it already.
fn id_attribute(id: &RequestId, wired: bool) -> Vec<KeyValue> {
    if wired { Vec::new() } else { vec![KeyValue::new(crate::semconv::JSONRPC_REQUEST_ID, id.to_string())] }
}

/// Classifies what rmcp returned for a request and finishes its call (with `late` attributes, and
/// a tool call's result captured when asked).
fn finish<T: Answered>(call: Call, method: &str, result: &Result<T, ServiceError>, mut late: Vec<KeyValue>) {
    let config = call.config();
    let verdict = match result {
        Ok(value) => model::classify_client_result(&value.answer(), false, false),
        Err(error) => model::classify_client_failure(&failure(error, method, config.capture_content)),
    };
    late.extend(attributes::result(result.as_ref().ok().and_then(Answered::tool_result), config));
    call.finish(&verdict, late);
}
