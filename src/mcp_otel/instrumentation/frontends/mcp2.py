"""The mcp 2.x front end: its patch table, and the only code that reads mcp 2.x's internals.

Where mcp 2.x sends and handles requests: ``ClientSession.send_request`` and ``send_discover``,
``ServerSession.send_request`` and ``Connection.send_raw_request`` send; servers (lowlevel
``Server``, ``MCPServer``, fastmcp 4.x) handle in ``ServerRunner._on_request``, one runner per
connection, which sees the dispatch context (``cancel_requested``, the transport's kind) and
every transport and protocol era; clients handle their server's requests in
``ClientSession._on_request``, the same shape. ``Client.call_tool`` / ``get_prompt`` are one
span for the call as the caller made it: every input round (2026-07-28
``InputRequiredResult``) is a request inside it, and the person's answers
(``dispatch_input_request``) tell whether an input was declined. The SDK's own CLIENT spans
(the dispatcher's ``otel_span``) and SERVER spans (``OpenTelemetryMiddleware``) for the same
requests are suppressed by default (setting ``sdk_spans``), so a request has one span per side
and the wire carries our context. Each hook hands what it learns to the side it feeds
(:mod:`mcp_otel.instrumentation.client`, :mod:`mcp_otel.instrumentation.server`).

Over 400 lines: a front end is the only module that reads its SDK's shapes (docs/architecture.md),
so mcp 2.x's whole patch table and every reader of its shapes stay together.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from functools import lru_cache, partial
from typing import Any

from opentelemetry.trace import INVALID_SPAN, SpanKind

from mcp_otel.instrumentation import binding
from mcp_otel.instrumentation.client import ACTIVE_CALL, SENDING, ClientCall, ClientSide, Started
from mcp_otel.instrumentation.frontends import fastmcp
from mcp_otel.instrumentation.frontends.sdk import SdkFrontEnd
from mcp_otel.instrumentation.patching import Patch
from mcp_otel.instrumentation.server import (
    ACTIVE_NOTIFICATION,
    ACTIVE_SERVER_CALL,
    RequestFacts,
    ServerCall,
    ServerSide,
)
from mcp_otel.instrumentation.sessions import Sessions
from mcp_otel.model import messages
from mcp_otel.model.classify import RpcError, classify_server_call, elicitation_action, is_declined_answer, unfinished
from mcp_otel.model.config import SdkSpans
from mcp_otel.model.messages import ServerRequest, SessionFacts, rpc_error_of, session_facts, str_or_none
from mcp_otel.model.outcome import Verdict
from mcp_otel.model.safety import report_once
from mcp_otel.semconv import (
    EVENT_INPUT_ANSWERED,
    EVENT_INPUT_REQUIRED,
    INPUT_METHODS,
    JSONRPC_REQUEST_ID,
    MCP_ELICITATION_ACTION,
    MCP_METHOD_NAME,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_INPUT_METHODS,
    MCP_REQUEST_ROUNDS,
    METHOD_PROMPTS_GET,
    METHOD_SERVER_DISCOVER,
    METHOD_TOOLS_CALL,
    OTHER_VALUE,
    CancelReason,
    ResultType,
)

# mcp 2.x TransportContext.kind values.
_DIRECT = "direct"  # in-process DirectDispatcher: the client's task runs the handler


_MODERN_HTTP = "streamable-http"  # 2026-07-28 HTTP: closing the request's stream is the cancel


def server_request(runner: Any, dctx: Any, method: Any, params: Any) -> ServerRequest:
    """mcp 2.x ``ServerRunner._on_request``: a request a server handles."""
    connection = getattr(runner, "connection", None)
    server = getattr(runner, "server", None)
    return _received(
        dctx,
        method,
        params,
        protocol_version=getattr(connection, "protocol_version", None),
        session_id=getattr(connection, "session_id", None),
        server_name=getattr(server, "name", None),
        server_version=getattr(server, "version", None),
    )


def client_received_request(session: Any, dctx: Any, method: Any, params: Any) -> ServerRequest:
    """mcp 2.x ``ClientSession._on_request``: a request a client handles from its server."""
    facts = session_facts(session)
    return _received(
        dctx,
        method,
        params,
        protocol_version=facts.protocol_version,
        session_id=None,
        server_name=facts.server_name,
        server_version=facts.server_version,
    )


def _received(
    dctx: Any,
    method: Any,
    params: Any,
    *,
    protocol_version: Any,
    session_id: Any,
    server_name: Any,
    server_version: Any,
) -> ServerRequest:
    params = params if isinstance(params, Mapping) else {}
    http_request = getattr(getattr(dctx, "message_metadata", None), "request_context", None)
    dispatcher = getattr(dctx, "_dispatcher", None)
    return ServerRequest(  # by position (see ServerRequest)
        method,
        params,
        getattr(dctx, "request_id", None),  # request_id
        params.get("_meta"),  # meta
        protocol_version,
        str_or_none(session_id),  # session_id
        http_request,
        server_name,
        server_version,
        getattr(dispatcher, "_write_stream", None),  # write_stream
        params.get("inputResponses"),  # input_responses
        dispatcher if dispatcher is not None else _dispatcher(dctx),  # connection
    )


def _dispatcher(dctx: Any) -> Any:
    """The JSON-RPC dispatcher a message came through, one per connection (a 2026-07-28 stream
    wraps each message's context, ``_inner``, and serves each message with a runner of its own)."""
    return getattr(getattr(dctx, "_inner", dctx), "_dispatcher", None)


def peer_cancelled(dctx: Any) -> bool:
    """mcp 2.x: the client's notifications/cancelled arrived (the SDK then suppresses the answer)."""
    event = getattr(dctx, "cancel_requested", None)
    return bool(event is not None and event.is_set())


def direct(dctx: Any) -> bool:
    """mcp 2.x direct path: a cancel there is the calling client's own task being cancelled."""
    return getattr(getattr(dctx, "transport", None), "kind", None) == _DIRECT


def transport_closed(dctx: Any) -> bool:
    """mcp 2.x: the connection is gone. The JSON-RPC dispatcher marks EOF before it cancels the
    in-flight handlers (a shutdown cancels them with the dispatcher still open); on 2026-07-28
    HTTP the handler is cancelled only when the client closed the request's stream."""
    if getattr(getattr(dctx, "transport", None), "kind", None) == _MODERN_HTTP:
        return True
    return getattr(getattr(dctx, "_dispatcher", None), "_closed", False) is True


def handler_answer(runner: Any, exc: BaseException) -> RpcError:
    """The error mcp 2.x answers a handler exception with: its MCP error carries its own, a
    pydantic ValidationError is -32602; anything else is -32603 "Internal server error" on
    2026-07-28 connections and the direct path, code 0 with the message in the handshake era."""
    error = rpc_error_of(exc)
    if error is not None:
        return error
    if type(exc).__name__ == "ValidationError" and type(exc).__module__.startswith("pydantic"):
        return RpcError(-32602, "Invalid request parameters")
    version = getattr(getattr(runner, "connection", None), "protocol_version", None)
    if version in _modern_versions():
        return RpcError(-32603, "Internal server error")
    return RpcError(0, str(exc))


@lru_cache(maxsize=1)
def _modern_versions() -> tuple[str, ...]:
    try:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    except ImportError:
        return ()
    return tuple(MODERN_PROTOCOL_VERSIONS)


def session_connection_closed(session: Any) -> bool:
    """A client session's dispatcher saw the connection end (EOF) while the session was open."""
    return getattr(getattr(session, "_dispatcher", None), "_closed", False) is True


def connection_facts(connection: Any, server: Any) -> SessionFacts:
    """A server ``Connection``'s negotiated protocol, and the server it serves."""
    return SessionFacts(
        protocol_version=str_or_none(getattr(connection, "protocol_version", None)),
        server_name=str_or_none(getattr(server, "name", None)),
        server_version=str_or_none(getattr(server, "version", None)),
    )


def connection_write_stream(connection: Any) -> Any:
    """A loop ``Connection``'s outbound is its dispatcher, which holds the write stream."""
    return getattr(getattr(connection, "outbound", None), "_write_stream", None)


class Mcp2FrontEnd(SdkFrontEnd):
    """mcp 2.x's hooks."""

    def __init__(self, client: ClientSide, server: ServerSide, sessions: Sessions) -> None:
        super().__init__(client, server, sessions)
        # Connections -> the server they serve (learnt when its runner is built).
        self._servers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def patches(self) -> list[Patch]:
        return [
            # The calls that may take input rounds are one span each, every round inside.
            Patch("mcp.client.client", "Client.call_tool", self._logical_call_tool, optional=True),
            Patch("mcp.client.client", "Client.get_prompt", self._logical_get_prompt, optional=True),
            Patch("mcp.client.session", "ClientSession.dispatch_input_request", self._dispatch_input, optional=True),
            # Requests sent.
            Patch("mcp.client.session", "ClientSession.send_request", self._client_send_request, optional=True),
            Patch("mcp.client.session", "ClientSession.send_discover", self._send_discover, optional=True),
            Patch("mcp.server.session", "ServerSession.send_request", self._server_send_request, optional=True),
            Patch("mcp.server.connection", "Connection.send_raw_request", self._connection_send, optional=True),
            Patch(
                "mcp.client.session",
                "ClientSession.send_notification",
                partial(self._client.send_notification, carry=_with_meta),
                optional=True,
            ),
            Patch("mcp.shared.jsonrpc_dispatcher", "otel_span", self._sdk_span, optional=True),
            # Notifications sent: every dispatcher's send (a session's typed send goes through one).
            Patch("mcp.shared.jsonrpc_dispatcher", "JSONRPCDispatcher.notify", self._client.notify, optional=True),
            Patch("mcp.shared.direct_dispatcher", "DirectDispatcher.notify", self._client.notify, optional=True),
            Patch(
                "mcp.server._streamable_http_modern",
                "_SingleExchangeDispatchContext.notify",
                self._client.notify,
                optional=True,
            ),
            # Notifications received, both sides.
            Patch("mcp.server.runner", "ServerRunner._on_notify", self._on_notify, optional=True),
            Patch("mcp.client.session", "ClientSession._on_notify", self._client_on_notify, optional=True),
            # Requests handled (lowlevel Server, MCPServer, fastmcp 4.x: one runner per connection).
            Patch("mcp.server.runner", "ServerRunner._on_request", self._on_request, optional=True),
            Patch("mcp.client.session", "ClientSession._on_request", self._client_on_request, optional=True),
            Patch("mcp.server._otel", "OpenTelemetryMiddleware.__call__", self._sdk_middleware, optional=True),
            # Client sessions, and a server's handshake-era connections.
            Patch("mcp.client.session", "ClientSession.__aenter__", self._sessions.enter, optional=True),
            Patch("mcp.client.session", "ClientSession.__aexit__", self._client_session_exit, optional=True),
            Patch("mcp.server.connection", "Connection.for_loop", self._connection_opened, optional=True),
            Patch("mcp.server.runner", "ServerRunner.__init__", self._runner_built, optional=True),
            Patch("mcp.server.runner", "aclose_shielded", self._connection_closed, optional=True),
        ]

    # --- calls as the caller made them, with their input rounds -------------------------------

    def _logical_call_tool(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._logical(METHOD_TOOLS_CALL, wrapped, instance, args, kwargs)

    def _logical_get_prompt(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._logical(METHOD_PROMPTS_GET, wrapped, instance, args, kwargs)

    def _logical(self, method: str, wrapped: Any, client: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``Client.call_tool`` / ``get_prompt``: one CLIENT span for the call as the caller made
        it, however many input rounds (2026-07-28 ``InputRequiredResult``) it takes."""
        return self._client.traced(partial(self._start_logical, method), ACTIVE_CALL, wrapped, client, args, kwargs)

    def _start_logical(
        self, method: str, wrapped: Any, client: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Started:
        try:
            session = client.session
        except Exception:  # not connected: the SDK raises its own error
            return None, args, kwargs
        call = self._client.start_call(method, wrapped, session, args, kwargs)
        if call is None:
            return None, args, kwargs
        call.rounds = 1
        return (call, *self._client.with_trace_context(wrapped, call.span, args, kwargs))

    async def _round(self, call: ClientCall, wrapped: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One request of a logical call: its answer, if it asks for input, is noted on the call."""
        try:
            if call.sent:  # a later round (its own request id; the SDK's span for it suppressed too)
                call.rounds += 1
                self._client.forget_request_id(call)
            call.sent = True
        except Exception as exc:
            report_once("could not note an input round", exc)
        result = await wrapped(*args, **kwargs)
        try:
            if unfinished(result) is ResultType.INPUT_REQUIRED:
                _note_input_required(call, result)
        except Exception as exc:
            report_once("could not note an input round", exc)
        return result

    async def _dispatch_input(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``dispatch_input_request`` inside a logical call (its input rounds): the person's
        answer. Outside one (a server's request), the receiver's span reads the answer."""
        call = ACTIVE_CALL.get()
        answer = await wrapped(*args, **kwargs)
        if call is None or not call.rounds:
            return answer
        try:
            (request,) = binding.arguments_of(wrapped, args, kwargs, "request")
            method = _input_method(request)
            event: dict[str, Any] = {MCP_METHOD_NAME: method}
            if action := elicitation_action(answer):
                event[MCP_ELICITATION_ACTION] = action
            if is_declined_answer(method, answer, messages.rpc_error_from(answer)):
                call.input_declined = True
                event[MCP_REQUEST_CANCEL_REASON] = CancelReason.INPUT_DECLINED.value
            call.span.add_event(EVENT_INPUT_ANSWERED, event)
        except Exception as exc:
            report_once("could not read an input request's answer", exc)
        return answer

    # --- requests sent ------------------------------------------------------------------------

    def _client_send_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._send_typed(wrapped, instance, args, kwargs, from_server=False)

    def _server_send_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._send_typed(wrapped, instance, args, kwargs, from_server=True)

    def _send_typed(
        self, wrapped: Any, session: Any, args: tuple[Any, ...], kwargs: dict[str, Any], *, from_server: bool
    ) -> Any:
        def describe() -> tuple[Any, Any]:
            (request,) = binding.arguments_of(wrapped, args, kwargs, "request")
            return getattr(request, "method", None), getattr(request, "params", None)

        return self._send(wrapped, session, args, kwargs, describe, from_server=from_server)

    def _send_discover(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        def describe() -> tuple[Any, Any]:
            (version,) = binding.arguments_of(wrapped, args, kwargs, "version")
            return METHOD_SERVER_DISCOVER, _envelope_params(version)

        return self._send(wrapped, instance, args, kwargs, describe, from_server=False)

    def _connection_send(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        def describe() -> tuple[Any, Any]:
            method, params = binding.arguments_of(wrapped, args, kwargs, "method", "params")
            return method, params

        return self._send(wrapped, instance, args, kwargs, describe, from_server=True)

    async def _send(
        self,
        wrapped: Any,
        session: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        describe: Callable[[], tuple[Any, Any]],
        *,
        from_server: bool,
    ) -> Any:
        """A send: the SDK's own (no span of ours, or call_tool's own request, whose span is
        call_tool's), a round of the logical call in flight, or the SDK's inside a span of its
        own. The dispatcher injects the current context into ``_meta`` itself: ours."""
        call = self._client.start_request(session, describe, from_server)
        if call is None:
            return await wrapped(*args, **kwargs)
        if call.rounds and call is ACTIVE_CALL.get():
            return await self._round(call, wrapped, args, kwargs)
        return await self._client.traced(
            lambda _wrapped, _session, args, kwargs: (call, args, kwargs), SENDING, wrapped, session, args, kwargs
        )

    def _sdk_span(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The dispatcher's ``otel_span``: learn the request id, and by default replace the SDK's
        duplicate CLIENT span with a non-recording one, so the context the dispatcher then
        injects into ``_meta`` is ours."""
        # The request being sent, or (call_tool's own request, sent without a span of its own) the call.
        call = SENDING.get() or ACTIVE_CALL.get()
        if call is None or call.request_id is not None:
            return wrapped(*args, **kwargs)
        try:
            attributes = kwargs.get("attributes") or {}
            if kwargs.get("kind") is SpanKind.CLIENT and attributes.get(MCP_METHOD_NAME) == call.method:
                self._client.note_request_id(call, attributes.get(JSONRPC_REQUEST_ID))
                if self._client.settings.sdk_spans is SdkSpans.SUPPRESS:
                    return nullcontext(INVALID_SPAN)
        except Exception as exc:
            report_once("could not inspect the SDK's client span", exc)
        return wrapped(*args, **kwargs)

    # --- requests handled ---------------------------------------------------------------------

    def _on_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._handle(_handled_request, wrapped, instance, args, kwargs)

    def _client_on_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._handle(_client_handled_request, wrapped, instance, args, kwargs)

    def _on_notify(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._server.notified(server_request, wrapped, instance, args, kwargs)

    def _client_on_notify(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._server.notified(client_received_request, wrapped, instance, args, kwargs)

    def _handle(
        self, facts: RequestFacts, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        # fastmcp's own SERVER span for the same request suppressed while the handler runs.
        around = fastmcp.spans_suppressed() if self._server.settings.sdk_spans is SdkSpans.SUPPRESS else None
        return self._server.handle(facts, self._outcome, _returned, wrapped, instance, args, kwargs, around)

    def _outcome(self, call: ServerCall, result: Any, exc: BaseException | None) -> Verdict:
        owner, dctx = call.owner, call.dispatch
        cancelled = exc is not None and messages.is_cancellation(exc)
        cancel_received = peer_cancelled(dctx)
        if cancel_received:
            # The dispatcher cancels the handler before it hands the notification on.
            self._server.cancel_to_come(call, _dispatcher(dctx), getattr(dctx, "request_id", None))
        cancelled_by_peer = cancel_received or (cancelled and direct(dctx))
        if exc is None and not cancelled_by_peer and (result_type := unfinished(result)) is not None:
            return result_type
        rpc_error = handler_answer(owner, exc) if exc is not None and not cancelled else None
        return classify_server_call(
            answer=result,
            rpc_error=rpc_error,
            peer_cancelled=cancelled_by_peer,
            is_cancellation=cancelled,
            transport_closed=transport_closed(dctx),
            keep_message=self._server.settings.capture_content,
            answer_declined=self._server.declined_answer(call, result, rpc_error),
            input_declined=call.input_declined,
            method=call.method,
        )

    def _sdk_middleware(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``OpenTelemetryMiddleware`` (the SDK's own SERVER spans, of every message received):
        skipped for the requests and notifications we trace."""
        call, notification = ACTIVE_SERVER_CALL.get(), ACTIVE_NOTIFICATION.get()
        if self._server.settings.sdk_spans is SdkSpans.SUPPRESS and (call is not None or notification is not None):
            try:
                ctx, call_next = binding.arguments_of(wrapped, args, kwargs, "ctx", "call_next")
                method = getattr(ctx, "method", None)
                skip = (
                    call_next is not None
                    and method is not None
                    and (method == notification or (call is not None and method == call.method))
                )
            except Exception as exc:
                report_once("could not inspect the SDK's server middleware call", exc)
                skip = False
            if skip:
                return call_next(ctx)
        return wrapped(*args, **kwargs)

    # --- sessions -----------------------------------------------------------------------------

    async def _client_session_exit(
        self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        went_away = session_connection_closed(instance)
        return await self._sessions.exit(wrapped, instance, args, kwargs, client=True, server_went_away=went_away)

    def _connection_opened(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        connection = wrapped(*args, **kwargs)
        self._sessions.start(connection)
        return connection

    def _runner_built(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        result = wrapped(*args, **kwargs)
        try:
            connection = getattr(instance, "connection", None)
            if connection is not None:
                self._servers[connection] = getattr(instance, "server", None)
        except Exception as exc:
            report_once("could not note a session's server", exc)
        return result

    async def _connection_closed(
        self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        connection = args[0] if args else kwargs.get("connection")

        def server() -> tuple[SessionFacts, Any]:
            facts = connection_facts(connection, self._servers.get(connection))
            return facts, messages.session_write_stream(connection) or connection_write_stream(connection)

        try:
            return await wrapped(*args, **kwargs)
        finally:
            self._sessions.end(connection, None, client=False, server=server)


def _handled_request(
    wrapped: Any, runner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[ServerRequest, Any, Any]:
    """A request the server's runner dispatches: it, the runner and its dispatch context."""
    dctx, method, params = binding.arguments_of(wrapped, args, kwargs, "dctx", "method", "params")
    return server_request(runner, dctx, method, params), runner, dctx


def _client_handled_request(
    wrapped: Any, session: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[ServerRequest, Any, Any]:
    """A request a client session handles from its server: it, the session and the dispatch context."""
    dctx, method, params = binding.arguments_of(wrapped, args, kwargs, "dctx", "method", "params")
    return client_received_request(session, dctx, method, params), session, dctx


def _returned(call: ServerCall, result: Any) -> Any:
    """What the request was answered with: what the handler returned."""
    return result


def _note_input_required(call: ClientCall, result: Any) -> None:
    """A round answered ``InputRequiredResult``: the kinds of input asked for (methods, bounded to
    the specification's; never their content), and one event per round."""
    requests = getattr(result, "input_requests", None) or {}
    methods = sorted({_input_method(request) for request in requests.values()})
    call.input_methods = (call.input_methods or set()).union(methods)
    call.span.add_event(EVENT_INPUT_REQUIRED, {MCP_REQUEST_ROUNDS: call.rounds, MCP_REQUEST_INPUT_METHODS: methods})


def _input_method(request: Any) -> str:
    """An input request's method, bounded to the specification's (a peer's other name: ``_OTHER``)."""
    method = getattr(request, "method", None)
    return method if method in INPUT_METHODS else OTHER_VALUE


def _with_meta(notification: Any, carrier: Mapping[str, str]) -> Any:
    """A copy of an mcp 2.x typed notification with ``carrier`` added to ``params._meta`` (a dict
    on 2.x; the caller's notification is not changed)."""
    data = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
    params = data.setdefault("params", {})
    params["_meta"] = {**(params.get("_meta") or {}), **carrier}
    return type(notification).model_validate(data)


def _envelope_params(protocol_version: Any) -> dict[str, Any]:
    """Params whose envelope names ``protocol_version`` (what ``server/discover`` sends)."""
    return {"_meta": {messages.PROTOCOL_VERSION_META_KEY: protocol_version}}
