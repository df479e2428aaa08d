"""Receiver patches: every request a process handles becomes one SERVER span.

That is every request a server handles from its clients (``tools/call``, ``resources/read``,
``initialize``, any method), and every request a client handles from its server
(``sampling/createMessage``, ``elicitation/create``, ``roots/list``, ``ping``).

* mcp 1.x servers: ``Server._handle_request`` runs in the handler's task and is looked up at
  call time, so servers built before ``instrument()`` are covered; ``ServerSession._received_request``
  answers ``initialize`` itself. mcp 1.x clients: ``ClientSession._received_request``. On both,
  ``RequestResponder.respond`` tells what was answered, the responder knows whether the peer
  cancelled, and the session's read stream whether the peer hung up.
* mcp 2.x servers (lowlevel ``Server``, ``MCPServer``, fastmcp 4.x): ``ServerRunner._on_request``,
  one runner per connection, sees the dispatch context (``cancel_requested``, transport kind)
  and every transport and protocol era. mcp 2.x clients: ``ClientSession._on_request``, the
  same shape. The SDK's own SERVER spans (``OpenTelemetryMiddleware``) and fastmcp's are
  suppressed by default (setting ``sdk_spans``).

The span's parent is the context the sender put in ``params._meta``; an ambient span (e.g. an
HTTP server span) becomes a link. The handler's own code runs with our span current.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from contextvars import ContextVar
from functools import partial
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, Tracer

from mcp_otel import binding
from mcp_otel.adapters import common, fastmcp, v1, v2
from mcp_otel.attributes import AttributeCache, Request, request_attributes, round_attributes
from mcp_otel.classify import (
    RpcError,
    classify_callback_crash,
    classify_server_call,
    declined_in,
    elicitation_action,
    is_declined_answer,
    unfinished,
)
from mcp_otel.config import SdkSpans, Settings
from mcp_otel.content import arguments_attributes, result_attributes
from mcp_otel.fields import field
from mcp_otel.lifecycle import Call, Classify, Lifecycle
from mcp_otel.metrics import CallMetrics
from mcp_otel.outcome import CallOutcome, bounded
from mcp_otel.patching import Patch
from mcp_otel.propagation import MetaPropagator
from mcp_otel.safety import report_once
from mcp_otel.semconv import (
    CLIENT_ADDRESS,
    CLIENT_PORT,
    INPUT_METHODS,
    JSONRPC_REQUEST_ID,
    MCP_ELICITATION_ACTION,
    MCP_PROTOCOL_VERSION,
    MCP_SERVER_NAME,
    MCP_SERVER_VERSION,
    MCP_SESSION_ID,
    METHOD_ELICITATION_CREATE,
    METHOD_TOOLS_CALL,
    NETWORK_TRANSPORT,
    TRANSPORT_PIPE,
    TRANSPORT_TCP,
    ResultType,
)
from mcp_otel.transport import RegisteringTransport, TransportInfo, TransportRegistry

# The attributes a request this process sends while handling one inherits from it: the
# connection's facts (a server's elicitation/create goes to the client of its tools/call).
CONNECTION_ATTRIBUTES = (MCP_SERVER_NAME, MCP_SERVER_VERSION, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, NETWORK_TRANSPORT)


class _ServerCall(Call):
    """A request this process handles, as the patches see it."""

    __slots__ = ("answer", "answered", "attributes", "dispatch", "input_declined", "owner", "remote_trace_id")

    def __init__(self, kind: SpanKind, method: str, span: Span, metric_attributes: Mapping[str, Any]) -> None:
        super().__init__(kind, method, span, metric_attributes)
        self.attributes: dict[str, Any] = {}  # its span's, but for content (requests it sends inherit them)
        self.owner: Any = None  # 1.x: the session; 2.x: the ServerRunner or ClientSession
        self.dispatch: Any = None  # 1.x: the RequestResponder; 2.x: the dispatch context
        self.answer: Any = None  # 1.x: what respond() was given
        self.answered = False
        # The person declined an input request of this call (answered in this round, or to an
        # elicitation this process sent while handling it).
        self.input_declined = False
        self.remote_trace_id = 0  # the sender's trace (0: none came with the request)


# The request handled in this task: lets the respond() and SDK-middleware hooks find it, and
# requests sent while handling it inherit its connection's facts.
_ACTIVE_SERVER_CALL: ContextVar[_ServerCall | None] = ContextVar("mcp_otel_server_call", default=None)


def note_input_declined() -> None:
    """The person declined an input request this task's handler sent (an elicitation or sampling
    request sent while handling a call): the call may end in a cancel, not a failure."""
    call = _ACTIVE_SERVER_CALL.get()
    if call is not None:
        call.input_declined = True


def handled_request_attributes() -> dict[str, Any]:
    """The connection facts of the request this task is handling (empty when none)."""
    call = _ACTIVE_SERVER_CALL.get()
    if call is None:
        return {}
    return {key: call.attributes[key] for key in CONNECTION_ATTRIBUTES if key in call.attributes}


class ServerInstrumentation:
    def __init__(
        self,
        tracer: Tracer,
        metrics: CallMetrics,
        settings: Settings,
        transports: TransportRegistry,
        input_declined: Callable[[Any, int], None] = lambda session, trace_id: None,
    ) -> None:
        self._metrics = metrics
        self._lifecycle = Lifecycle(tracer, metrics)
        self._settings = settings
        self._transports = transports
        # An agent answered its server's input request with the person's no: (session, the
        # request's trace id) go to the client side, whose call in flight asked for it.
        self._input_declined = input_declined
        self._cache = AttributeCache()
        self._propagator = MetaPropagator()

    def patches(self) -> list[Patch]:
        return [
            # mcp 1.x
            Patch("mcp.server.lowlevel.server", "Server._handle_request", self._v1_handle_request, optional=True),
            Patch("mcp.client.session", "ClientSession._received_request", self._v1_client_received, optional=True),
            Patch("mcp.shared.session", "RequestResponder.respond", self._v1_respond, optional=True),
            # mcp 2.x
            Patch("mcp.server.runner", "ServerRunner._on_request", self._v2_on_request, optional=True),
            Patch("mcp.client.session", "ClientSession._on_request", self._v2_client_on_request, optional=True),
            Patch("mcp.server._otel", "OpenTelemetryMiddleware.__call__", self._v2_sdk_middleware, optional=True),
            # both
            Patch("mcp.server.stdio", "stdio_server", self._stdio_server, rebind=True),
            # fastmcp's own SERVER spans (3.x has no switch that the handler's wrapper could turn)
            *(
                [Patch("fastmcp.server.server", "server_span", fastmcp.without_own_span, optional=True)]
                if self._settings.sdk_spans is SdkSpans.SUPPRESS
                else []
            ),
        ]

    # --- mcp 1.x ----------------------------------------------------------------------------

    def _v1_handle_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        def facts() -> tuple[common.ServerRequest, Any, Any] | None:
            responder, request, session = binding.arguments_of(wrapped, args, kwargs, "message", "req", "session")
            return v1.server_request(instance, responder, request, session), session, responder

        return self._v1_handle(facts, wrapped, args, kwargs)

    def _v1_client_received(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        def facts() -> tuple[common.ServerRequest, Any, Any] | None:
            (responder,) = binding.arguments_of(wrapped, args, kwargs, "responder")
            return v1.client_received_request(instance, responder), instance, responder

        return self._v1_handle(facts, wrapped, args, kwargs)

    def _v1_handle(
        self,
        facts: Callable[[], tuple[common.ServerRequest, Any, Any] | None],
        wrapped: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        # _handle_request returns nothing: the answer is what respond() was given.
        return self._handle(facts, self._v1_outcome, lambda call, _: _root(call.answer), wrapped, args, kwargs)

    def _v1_outcome(self, call: _ServerCall, result: Any, exc: BaseException | None) -> CallOutcome | ResultType:
        session, responder = call.owner, call.dispatch
        peer_cancelled = v1.peer_cancelled(responder)
        if exc is None and not call.answered and not peer_cancelled:
            # Returned without answering: 1.12-1.26 swallow a transport-close cancel.
            return classify_server_call(is_cancellation=True, transport_closed=v1.transport_closed(session))
        cancelled = exc is not None and common.is_cancellation(exc)
        answer_error: RpcError | None
        if exc is not None and not cancelled and common.is_client_session(session) and common.rpc_error_of(exc) is None:
            # An agent's callback raised: the session's receive loop answers -32602 for it.
            return classify_callback_crash(type(exc).__qualname__, v1.CALLBACK_CRASH_CODE)
        if exc is not None and not cancelled:  # raised only with raise_exceptions=True
            answer_error = v1.handler_answer(exc)
        else:
            answer_error = common.rpc_error_from(call.answer) if call.answered else None
        answer = _root(call.answer)
        if answer_error is None and not peer_cancelled and (result_type := unfinished(answer)) is not None:
            return result_type
        return classify_server_call(
            answer=answer,
            rpc_error=answer_error,
            peer_cancelled=peer_cancelled,
            is_cancellation=cancelled,
            transport_closed=cancelled and v1.transport_closed(session),  # read only where it decides
            keep_message=self._settings.capture_content,
            answer_declined=self._declined_answer(call, answer, answer_error),
            input_declined=call.input_declined,
        )

    def _v1_respond(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = _ACTIVE_SERVER_CALL.get()
        if call is not None and call.dispatch is instance:
            # Noted before sending: an answer the closed transport drops is still the outcome.
            call.answer = args[0] if args else kwargs.get("response")
            call.answered = True
        elif call is None:
            return self._v1_initialize(wrapped, instance, args, kwargs)
        return wrapped(*args, **kwargs)

    def _v1_initialize(self, wrapped: Any, responder: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """mcp 1.x ``ServerSession`` answers ``initialize`` itself, outside any handler: its span
        is the answer's (what the session does before it, recording the client's parameters, is
        not a step that can fail or wait). Hooked here, not on ``_received_request``, which every
        request passes through."""
        try:
            session = getattr(responder, "_session", None)
            request = v1.initialize_request(session, responder)
        except Exception as exc:
            report_once("could not start a server span", exc)
            request = None
        if request is None:
            return wrapped(*args, **kwargs)
        # The answer goes through this wrapper again, now with the call active, which notes it.
        return self._v1_handle(lambda: (request, session, responder), responder.respond, args, kwargs)

    # --- mcp 2.x ----------------------------------------------------------------------------

    def _v2_on_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        def facts() -> tuple[common.ServerRequest, Any, Any]:
            dctx, method, params = binding.arguments_of(wrapped, args, kwargs, "dctx", "method", "params")
            return v2.server_request(instance, dctx, method, params), instance, dctx

        return self._v2_handle(facts, wrapped, args, kwargs)

    def _v2_client_on_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        def facts() -> tuple[common.ServerRequest, Any, Any]:
            dctx, method, params = binding.arguments_of(wrapped, args, kwargs, "dctx", "method", "params")
            return v2.client_received_request(instance, dctx, method, params), instance, dctx

        return self._v2_handle(facts, wrapped, args, kwargs)

    def _v2_handle(
        self,
        facts: Callable[[], tuple[common.ServerRequest, Any, Any] | None],
        wrapped: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        return self._handle(
            facts, self._v2_outcome, lambda _, result: result, wrapped, args, kwargs, self._without_fastmcp_spans()
        )

    def _v2_outcome(self, call: _ServerCall, result: Any, exc: BaseException | None) -> CallOutcome | ResultType:
        owner, dctx = call.owner, call.dispatch
        cancelled = exc is not None and common.is_cancellation(exc)
        peer_cancelled = v2.peer_cancelled(dctx) or (cancelled and v2.direct(dctx))
        if exc is None and not peer_cancelled and (result_type := unfinished(result)) is not None:
            return result_type
        rpc_error = v2.handler_answer(owner, exc) if exc is not None and not cancelled else None
        return classify_server_call(
            answer=result,
            rpc_error=rpc_error,
            peer_cancelled=peer_cancelled,
            is_cancellation=cancelled,
            transport_closed=v2.transport_closed(dctx),
            keep_message=self._settings.capture_content,
            answer_declined=self._declined_answer(call, result, rpc_error),
            input_declined=call.input_declined,
        )

    def _v2_sdk_middleware(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """mcp 2.x ``OpenTelemetryMiddleware``: skipped for the requests we trace."""
        call = _ACTIVE_SERVER_CALL.get()
        if self._settings.sdk_spans is SdkSpans.SUPPRESS and call is not None:
            try:
                ctx, call_next = binding.arguments_of(wrapped, args, kwargs, "ctx", "call_next")
                skip = getattr(ctx, "method", None) == call.method and call_next is not None
            except Exception as exc:
                report_once("could not inspect the SDK's server middleware call", exc)
                skip = False
            if skip:
                return call_next(ctx)
        return wrapped(*args, **kwargs)

    def _without_fastmcp_spans(self) -> Any:
        if self._settings.sdk_spans is not SdkSpans.SUPPRESS:
            return nullcontext()
        return fastmcp.spans_suppressed()

    # --- both majors --------------------------------------------------------------------------

    async def _handle(
        self,
        facts: Callable[[], tuple[common.ServerRequest, Any, Any] | None],
        outcome: Callable[[_ServerCall, Any, BaseException | None], CallOutcome | ResultType],
        answer: Callable[[_ServerCall, Any], Any],
        wrapped: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        around: Any = None,
    ) -> Any:
        """Run the SDK's handling of one request inside its SERVER span. ``outcome`` classifies
        (call, returned, raised); ``answer`` is the result the request was answered with."""
        call = self._begin(facts)
        if call is None:
            return await wrapped(*args, **kwargs)
        # Our span current (for the handler's code) and our call findable while it runs; the
        # tokens by hand, not a context manager: this runs for every request.
        call_token = _ACTIVE_SERVER_CALL.set(call)
        context_token = otel_context.attach(trace.set_span_in_context(call.span))
        try:
            if around is None:
                result = await wrapped(*args, **kwargs)
            else:
                with around:
                    result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            self._finish(call, partial(outcome, call, None, exc))
            raise
        finally:
            otel_context.detach(context_token)
            _ACTIVE_SERVER_CALL.reset(call_token)
        self._finish(call, partial(outcome, call, result, None), answer(call, result))
        return result

    def _begin(self, facts: Callable[[], tuple[common.ServerRequest, Any, Any] | None]) -> _ServerCall | None:
        try:
            found = facts()
            return None if found is None else self._call(*found)
        except Exception as exc:
            report_once("could not start a server span", exc)
            return None

    def _call(self, incoming: common.ServerRequest, owner: Any, dispatch: Any) -> _ServerCall:
        request = Request.of(incoming.method, incoming.params, self._settings)
        remote_span, parent, links = self._parent_and_links(incoming.meta)
        attributes, metric_attributes = self._attributes(incoming, request)
        span_attributes = attributes
        if (
            self._settings.capture_content
            and request.is_tool_call
            and (content := arguments_attributes(field(incoming.params, "arguments"), self._settings))
        ):
            span_attributes = {**span_attributes, **content}
        if answers := round_attributes(incoming.input_responses):
            span_attributes = {**span_attributes, **answers}
        call = self._lifecycle.open(
            _ServerCall, SpanKind.SERVER, request, span_attributes, metric_attributes, parent=parent, links=links
        )
        call.attributes, call.owner, call.dispatch = attributes, owner, dispatch
        call.input_declined = declined_in(incoming.input_responses)
        call.remote_trace_id = remote_span.trace_id if remote_span is not None else 0
        return call

    def _parent_and_links(self, meta: Any) -> tuple[trace.SpanContext | None, otel_context.Context | None, list[Link]]:
        """The sender's span, and our span's parent and links. Parent: the context in
        ``params._meta`` (semconv); the ambient span becomes a link. Not trusting remote context
        (setting), the remote span is only a link: the span stays in the server's own trace (or
        starts one), and a client cannot pick its trace id or sampling."""
        found = self._propagator.remote(meta)
        if found is None:
            return None, None, []
        remote, remote_span = found
        if not self._settings.trust_remote_context:
            return remote_span, None, [Link(remote_span)]
        ambient = trace.get_current_span().get_span_context()
        links = [Link(ambient)] if ambient.is_valid and ambient.span_id != remote_span.span_id else []
        return remote_span, remote, links

    def _attributes(self, incoming: common.ServerRequest, request: Request) -> tuple[dict[str, Any], Mapping[str, Any]]:
        """The request's span and metric attributes: what its connection says, then its own id."""
        peer: tuple[str, ...] | tuple[str | None, int | None] | None
        if incoming.http_request is not None:
            peer = common.http_peer(incoming.http_request)
        else:
            transport = self._transports.lookup(incoming.write_stream)
            peer = None if transport is None else (transport.network_transport,)
        facts = (incoming.server_name, incoming.server_version, incoming.protocol_version, incoming.session_id)
        attributes, metric_attributes = self._cache.get(
            (request, facts, peer), partial(self._connection_attributes, incoming, request, peer)
        )
        if isinstance(incoming.request_id, (int, str)) and not isinstance(incoming.request_id, bool):
            attributes[JSONRPC_REQUEST_ID] = bounded(str(incoming.request_id), self._settings.max_name_length)
        return attributes, metric_attributes

    def _connection_attributes(
        self, incoming: common.ServerRequest, request: Request, peer: Any
    ) -> tuple[dict[str, Any], Mapping[str, Any]]:
        attributes = request_attributes(
            request,
            self._settings,
            server_name=incoming.server_name,
            server_version=incoming.server_version,
            protocol_version=incoming.protocol_version,
            session_id=incoming.session_id,
        )
        if incoming.http_request is not None:
            attributes[NETWORK_TRANSPORT] = TRANSPORT_TCP
            address, port = peer
            if address:
                attributes[CLIENT_ADDRESS] = address
                if port is not None:
                    attributes[CLIENT_PORT] = port
        elif peer is not None:
            (attributes[NETWORK_TRANSPORT],) = peer
        return attributes, self._metrics.attributes(attributes)

    def _finish(self, call: _ServerCall, classify: Classify, result: Any = None) -> None:
        capture = self._settings.capture_content and call.method == METHOD_TOOLS_CALL
        late = result_attributes(result, self._settings) if capture else {}
        if call.method == METHOD_ELICITATION_CREATE:
            late.update(self._answered_elicitation(call, result))
        self._lifecycle.finish(call, classify, late)

    def _declined_answer(self, call: _ServerCall, answer: Any, rpc_error: RpcError | None) -> bool:
        """Whether an agent answered its server's input request with the person's no; if so, the
        agent's call in flight that asked for it learns it too."""
        declined = call.method in INPUT_METHODS and is_declined_answer(call.method, answer, rpc_error)
        if declined:
            self._input_declined(call.owner, call.remote_trace_id)
        return declined

    @staticmethod
    def _answered_elicitation(call: _ServerCall, result: Any) -> dict[str, Any]:
        """An agent answered its server's elicitation: the person's action goes on the span."""
        action = elicitation_action(result)
        return {MCP_ELICITATION_ACTION: action} if action else {}

    def _stdio_server(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return RegisteringTransport(wrapped(*args, **kwargs), self._transports, TransportInfo(TRANSPORT_PIPE))


def _root(answer: Any) -> Any:
    """mcp 1.x wraps results and errors in a ``RootModel``."""
    return getattr(answer, "root", answer)
