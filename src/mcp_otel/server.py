"""Server patches: every ``tools/call`` a server handles becomes one SERVER span.

* mcp 1.x (lowlevel ``Server`` and ``FastMCP``): ``Server._handle_request`` runs in the
  handler's task and is looked up at call time, so servers built before ``instrument()`` are
  covered; ``RequestResponder.respond`` tells what was answered; the responder knows whether
  the client cancelled; ``BaseSession._receive_loop`` ending tells that the client hung up.
* mcp 2.x (lowlevel ``Server``, ``MCPServer``, fastmcp 4.x): ``ServerRunner._on_request``, one
  runner per connection, sees the dispatch context (``cancel_requested``, transport kind) and
  every transport and protocol era. The SDK's own SERVER span (``OpenTelemetryMiddleware``) and
  fastmcp's are suppressed by default (setting ``sdk_spans``).

The span's parent is the context the client put in ``params._meta``; an ambient span (e.g. an
HTTP server span) becomes a link. The tool's own code runs with our span current.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from functools import partial
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Link, Span, SpanKind, Tracer

from mcp_otel import sdk
from mcp_otel.attributes import call_attributes, span_name, tool_name
from mcp_otel.classify import RpcError, classify_server_call
from mcp_otel.config import SdkSpans, Settings
from mcp_otel.content import arguments_attributes, result_attributes
from mcp_otel.metrics import CallMetrics
from mcp_otel.outcome import CallOutcome, bounded, finish_call
from mcp_otel.patching import Patch
from mcp_otel.safety import report_once
from mcp_otel.semconv import (
    CLIENT_ADDRESS,
    CLIENT_PORT,
    JSONRPC_REQUEST_ID,
    METHOD_TOOLS_CALL,
    NETWORK_TRANSPORT,
    TRANSPORT_PIPE,
    TRANSPORT_TCP,
)
from mcp_otel.transport import RegisteringTransport, TransportInfo, TransportRegistry


class _ServerCall:
    """Our bookkeeping for one tools/call being handled."""

    __slots__ = ("answer", "answered", "dispatch", "metric_attributes", "owner", "span", "started")

    def __init__(self, span: Span, metric_attributes: dict[str, Any], owner: Any, dispatch: Any) -> None:
        self.span = span
        self.metric_attributes = metric_attributes
        self.started = time.perf_counter()
        self.owner = owner  # 1.x: the session; 2.x: the ServerRunner
        self.dispatch = dispatch  # 1.x: the RequestResponder; 2.x: the dispatch context
        self.answer: Any = None  # 1.x: what respond() was given
        self.answered = False


# The server call handled in this task: lets the respond() and SDK-middleware hooks find it.
_ACTIVE_SERVER_CALL: ContextVar[_ServerCall | None] = ContextVar("mcp_otel_server_call", default=None)


class ServerInstrumentation:
    def __init__(self, tracer: Tracer, metrics: CallMetrics, settings: Settings) -> None:
        self._tracer = tracer
        self._metrics = metrics
        self._settings = settings
        self._transports = TransportRegistry()

    def patches(self) -> list[Patch]:
        return [
            # mcp 1.x
            Patch("mcp.server.lowlevel.server", "Server._handle_request", self._v1_handle_request, optional=True),
            Patch("mcp.shared.session", "RequestResponder.respond", self._v1_respond, optional=True),
            Patch("mcp.shared.session", "BaseSession._receive_loop", self._v1_receive_loop, optional=True),
            # mcp 2.x
            Patch("mcp.server.runner", "ServerRunner._on_request", self._v2_on_request, optional=True),
            Patch("mcp.server._otel", "OpenTelemetryMiddleware.__call__", self._v2_sdk_middleware, optional=True),
            # both
            Patch("mcp.server.stdio", "stdio_server", self._stdio_server, rebind=True),
        ]

    # --- mcp 1.x ----------------------------------------------------------------------------

    async def _v1_handle_request(
        self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        call = self._begin(partial(self._v1_call, wrapped, instance, args, kwargs))
        if call is None:
            return await wrapped(*args, **kwargs)
        with self._current(call):
            try:
                result = await wrapped(*args, **kwargs)
            except BaseException as exc:
                self._finish(call, partial(self._v1_outcome, call, exc))
                raise
        self._finish(call, partial(self._v1_outcome, call, None), getattr(call.answer, "root", call.answer))
        return result

    def _v1_call(self, wrapped: Any, server: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _ServerCall | None:
        responder, request, session = sdk.arguments_of(wrapped, args, kwargs, "message", "req", "session")
        if not sdk.is_tools_call(request):
            return None
        return self._call(sdk.v1_server_request(server, responder, request, session), session, responder)

    def _v1_outcome(self, call: _ServerCall, exc: BaseException | None) -> CallOutcome:
        session, responder = call.owner, call.dispatch
        peer_cancelled = sdk.v1_peer_cancelled(responder)
        transport_closed = sdk.v1_transport_closed(session)
        if exc is None and not call.answered and not peer_cancelled:
            # Returned without answering: 1.12-1.26 swallow a transport-close cancel.
            return classify_server_call(is_cancellation=True, transport_closed=transport_closed)
        cancelled = exc is not None and sdk.is_cancellation(exc)
        answer_error: RpcError | None
        if exc is not None and not cancelled:  # raised only with raise_exceptions=True
            answer_error = sdk.v1_handler_answer(exc)
        else:
            answer_error = sdk.rpc_error_from(call.answer) if call.answered else None
        return classify_server_call(
            answer=getattr(call.answer, "root", call.answer),
            rpc_error=answer_error,
            peer_cancelled=peer_cancelled,
            is_cancellation=cancelled,
            transport_closed=transport_closed,
            keep_message=self._settings.capture_content,
        )

    async def _v1_respond(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = _ACTIVE_SERVER_CALL.get()
        if call is not None and call.dispatch is instance:
            # Noted before sending: an answer the closed transport drops is still the outcome.
            call.answer = args[0] if args else kwargs.get("response")
            call.answered = True
        return await wrapped(*args, **kwargs)

    async def _v1_receive_loop(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        result = await wrapped(*args, **kwargs)
        # Reached only when the loop ended without being cancelled: the peer closed the stream.
        try:
            sdk.mark_v1_eof(instance)
        except Exception as exc:
            report_once("could not note a closed connection", exc)
        return result

    # --- mcp 2.x ----------------------------------------------------------------------------

    async def _v2_on_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = self._begin(partial(self._v2_call, wrapped, instance, args, kwargs))
        if call is None:
            return await wrapped(*args, **kwargs)
        with self._current(call), self._without_fastmcp_spans():
            try:
                result = await wrapped(*args, **kwargs)
            except BaseException as exc:
                self._finish(call, partial(self._v2_outcome, call, None, exc))
                raise
        self._finish(call, partial(self._v2_outcome, call, result, None), result)
        return result

    def _v2_call(self, wrapped: Any, runner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _ServerCall | None:
        dctx, method, params = sdk.arguments_of(wrapped, args, kwargs, "dctx", "method", "params")
        if method != METHOD_TOOLS_CALL:
            return None
        return self._call(sdk.v2_server_request(runner, dctx, params), runner, dctx)

    def _v2_outcome(self, call: _ServerCall, result: Any, exc: BaseException | None) -> CallOutcome:
        runner, dctx = call.owner, call.dispatch
        cancelled = exc is not None and sdk.is_cancellation(exc)
        return classify_server_call(
            answer=result,
            rpc_error=sdk.v2_handler_answer(runner, exc) if exc is not None and not cancelled else None,
            peer_cancelled=sdk.v2_peer_cancelled(dctx) or (cancelled and sdk.v2_direct(dctx)),
            is_cancellation=cancelled,
            transport_closed=sdk.v2_transport_closed(dctx),
            keep_message=self._settings.capture_content,
        )

    async def _v2_sdk_middleware(
        self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """mcp 2.x ``OpenTelemetryMiddleware``: skipped for the tools/call we trace."""
        if self._settings.sdk_spans is SdkSpans.SUPPRESS and _ACTIVE_SERVER_CALL.get() is not None:
            try:
                ctx, call_next = sdk.arguments_of(wrapped, args, kwargs, "ctx", "call_next")
                skip = getattr(ctx, "method", None) == METHOD_TOOLS_CALL and call_next is not None
            except Exception as exc:
                report_once("could not inspect the SDK's server middleware call", exc)
                skip = False
            if skip:
                return await call_next(ctx)
        return await wrapped(*args, **kwargs)

    def _without_fastmcp_spans(self) -> Any:
        if self._settings.sdk_spans is not SdkSpans.SUPPRESS:
            return nullcontext()
        return sdk.fastmcp_spans_suppressed()

    # --- both majors --------------------------------------------------------------------------

    @staticmethod
    def _begin(make_call: Callable[[], _ServerCall | None]) -> _ServerCall | None:
        try:
            return make_call()
        except Exception as exc:
            report_once("could not start a server span", exc)
            return None

    def _call(self, request: sdk.ServerRequest, owner: Any, dispatch: Any) -> _ServerCall:
        tool = tool_name(request.tool, self._settings)
        parent, links = self._parent_and_links(request.meta)
        attributes = self._attributes(request, tool)
        content = arguments_attributes(request.arguments, self._settings)
        span_attributes = {**attributes, **content} if content else attributes
        span = self._tracer.start_span(
            span_name(tool), context=parent, kind=SpanKind.SERVER, attributes=span_attributes, links=links
        )
        return _ServerCall(span, self._metrics.attributes(attributes), owner, dispatch)

    def _parent_and_links(self, meta: Any) -> tuple[otel_context.Context | None, list[Link]]:
        """Parent: the context in ``params._meta`` (semconv); the ambient span becomes a link.
        Not trusting remote context (setting), the remote span is only a link: the span stays in
        the server's own trace (or starts one), and a client cannot pick its trace id or sampling."""
        try:
            carrier = sdk.meta_carrier(meta, propagate.get_global_textmap().fields)
            remote = propagate.extract(carrier, context=otel_context.Context())
        except Exception:  # a malformed carrier is no context
            return None, []
        remote_span = trace.get_current_span(remote).get_span_context()
        if not remote_span.is_valid:
            return None, []
        if not self._settings.trust_remote_context:
            return None, [Link(remote_span)]
        ambient = trace.get_current_span().get_span_context()
        links = [Link(ambient)] if ambient.is_valid and ambient.span_id != remote_span.span_id else []
        return remote, links

    def _attributes(self, request: sdk.ServerRequest, tool: str | None) -> dict[str, Any]:
        attributes = call_attributes(
            tool,
            self._settings,
            server_name=request.server_name,
            server_version=request.server_version,
            protocol_version=request.protocol_version,
            session_id=request.session_id,
        )
        if isinstance(request.request_id, (int, str)) and not isinstance(request.request_id, bool):
            attributes[JSONRPC_REQUEST_ID] = bounded(str(request.request_id), self._settings.max_name_length)
        if request.http_request is not None:
            attributes[NETWORK_TRANSPORT] = TRANSPORT_TCP
            address, port = sdk.http_peer(request.http_request)
            if address:
                attributes[CLIENT_ADDRESS] = address
                if port is not None:
                    attributes[CLIENT_PORT] = port
        else:
            transport = self._transports.lookup(request.write_stream)
            if transport is not None:
                attributes[NETWORK_TRANSPORT] = transport.network_transport
        return attributes

    @contextmanager
    def _current(self, call: _ServerCall) -> Iterator[None]:
        """Our span is current (for the tool's code) and our call findable while it runs."""
        call_token = _ACTIVE_SERVER_CALL.set(call)
        context_token = otel_context.attach(trace.set_span_in_context(call.span))
        try:
            yield
        finally:
            otel_context.detach(context_token)
            _ACTIVE_SERVER_CALL.reset(call_token)

    def _finish(self, call: _ServerCall, classify: Callable[[], CallOutcome], result: Any = None) -> None:
        record = partial(self._metrics.record, SpanKind.SERVER, call.started, call.metric_attributes)
        finish_call(call.span, classify, record, result_attributes(result, self._settings))

    def _stdio_server(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return RegisteringTransport(wrapped(*args, **kwargs), self._transports, TransportInfo(TRANSPORT_PIPE))
