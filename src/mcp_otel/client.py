"""Sender patches: every request a process sends becomes one CLIENT span.

That is every request a client sends its server (``initialize``, ``tools/list``,
``resources/read``, any method) and every request a server sends its client
(``elicitation/create``, ``sampling/createMessage``, ``roots/list``, ``ping``):

* mcp 1.x: ``BaseSession.send_request``, the path of both ``ClientSession`` and ``ServerSession``;
* mcp 2.x: ``ClientSession.send_request`` and ``send_discover``, ``ServerSession.send_request``
  and ``Connection.send_raw_request``;
* ``ClientSession.call_tool`` (both majors; ``mcp.Client``, ``ClientSessionGroup``, fastmcp's
  ``Client``) makes the ``tools/call`` span itself, so that it covers all the caller waits for
  (the SDK's output validation included); the ``tools/call`` request it sends gets no second span.
* mcp 2.x ``Client.call_tool`` / ``get_prompt`` make one span for the logical call: every input
  round (2026-07-28 ``InputRequiredResult``) is a request inside it, with no span of its own, and
  the person's answers (``dispatch_input_request``) tell whether an input was declined.
* a ``tools/call`` answered with a task (mcp 1.x experimental tasks) keeps its span open while
  the client follows the task (:mod:`mcp_otel.tasks`).

Around each:

* the span starts at the call's first step, in the task that awaits it (its context is the
  parent), never when the coroutine is created: a coroutine made in one task and awaited in
  another belongs to the awaiting one, and one that never runs leaves nothing;
* the span carries the connection's facts (server identity, protocol version, transport);
* the configured propagator's fields go into ``params._meta`` while our span is current;
* mcp 2.x's and fastmcp's own CLIENT spans for the same request are suppressed (setting
  ``sdk_spans``), so a request has exactly one CLIENT span and the wire carries our context;
* ``notifications/cancelled`` sent by this client are noted, so the mcp 1.x server's
  ``code 0 "Request cancelled"`` reply to it reads as a cancel, not a failure.

The wrappers stay thin: facts come from :mod:`mcp_otel.adapters`, the verdict from
:mod:`mcp_otel.classify`, and the request is opened and finished by :mod:`mcp_otel.lifecycle`.
Every step of our own fails open.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from contextvars import ContextVar
from functools import partial
from typing import Any

from opentelemetry import context, trace
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind, Tracer

from mcp_otel import binding
from mcp_otel.adapters import common, fastmcp, v1
from mcp_otel.attributes import AttributeCache, Request, session_attributes
from mcp_otel.classify import (
    classify_client_exception,
    classify_client_result,
    elicitation_action,
    is_declined_answer,
    unfinished,
)
from mcp_otel.config import SdkSpans, Settings
from mcp_otel.content import arguments_attributes, result_attributes
from mcp_otel.fields import field
from mcp_otel.lifecycle import Call, Lifecycle
from mcp_otel.metrics import CallMetrics
from mcp_otel.outcome import CallOutcome
from mcp_otel.patching import Patch
from mcp_otel.propagation import MetaPropagator
from mcp_otel.safety import report_once
from mcp_otel.semconv import (
    EVENT_INPUT_ANSWERED,
    EVENT_INPUT_REQUIRED,
    INPUT_METHODS,
    JSONRPC_REQUEST_ID,
    MCP_ELICITATION_ACTION,
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_INPUT_METHODS,
    MCP_REQUEST_ROUNDS,
    METHOD_ELICITATION_CREATE,
    METHOD_INITIALIZE,
    METHOD_PROMPTS_GET,
    METHOD_SERVER_DISCOVER,
    METHOD_TOOLS_CALL,
    NETWORK_TRANSPORT,
    OTHER_VALUE,
    SERVER_ADDRESS,
    SERVER_PORT,
    TASKS_METHOD_PREFIX,
    TRANSPORT_PIPE,
    TRANSPORT_TCP,
    CancelReason,
    ResultType,
)
from mcp_otel.server import handled_request_attributes, note_input_declined
from mcp_otel.tasks import TaskFollower
from mcp_otel.transport import RegisteringTransport, TransportInfo, TransportRegistry


class _ClientCall(Call):
    """A request this process sent, as the patches see it."""

    __slots__ = (
        "cancel_sent",
        "input_declined",
        "input_methods",
        "request_id",
        "rounds",
        "sent",
        "session",
        "task_id",
        "v1_request_id",
    )

    def __init__(self, kind: SpanKind, method: str, span: Span, metric_attributes: Mapping[str, Any]) -> None:
        super().__init__(kind, method, span, metric_attributes)
        self.session: Any = None
        self.request_id: str | None = None
        self.v1_request_id: int | None = None  # the id as mcp 1.x put it on the wire
        self.cancel_sent = False
        self.sent = False  # call_tool's own request went out (its send gets no span of its own)
        # A logical call (mcp 2.x Client.call_tool / get_prompt): every request of its method it
        # sends is one of its rounds (0: not a logical call).
        self.rounds = 0
        self.input_methods: set[str] | None = None  # input the server asked for in its rounds
        self.input_declined = False  # the person declined an input request of this call
        self.task_id: str | None = None  # tasks/get|result|cancel: the task it is about


# Seconds a courtesy notifications/cancelled may take before we give up on it.
COURTESY_CANCEL_TIMEOUT = 2.0

# The call_tool whose wrapper is running in this task: its send_request gets no span of its own.
_ACTIVE_CALL: ContextVar[_ClientCall | None] = ContextVar("mcp_otel_client_call", default=None)
# The request being sent in this task: lets the SDK-span hook find it.
_SENDING: ContextVar[_ClientCall | None] = ContextVar("mcp_otel_sending", default=None)


class ClientInstrumentation:
    def __init__(self, tracer: Tracer, metrics: CallMetrics, settings: Settings, transports: TransportRegistry) -> None:
        self._metrics = metrics
        self._lifecycle = Lifecycle(tracer, metrics)
        self._settings = settings
        self._transports = transports
        # (id(session), request id) -> call, for calls whose request id is known.
        self._inflight: dict[tuple[int, str], _ClientCall] = {}
        self._tasks = TaskFollower(self._lifecycle.finish)
        self._cache = AttributeCache()
        self._propagator = MetaPropagator()

    def patches(self) -> list[Patch]:
        return [
            Patch("mcp.client.session", "ClientSession.call_tool", self._call_tool),
            # mcp 2.x: the calls that may take input rounds are one span each, every round inside.
            Patch("mcp.client.client", "Client.call_tool", self._logical_call_tool, optional=True),
            Patch("mcp.client.client", "Client.get_prompt", self._logical_get_prompt, optional=True),
            Patch("mcp.client.session", "ClientSession.dispatch_input_request", self._dispatch_input, optional=True),
            # mcp 1.x: both sides send through BaseSession.
            Patch("mcp.shared.session", "BaseSession.send_request", self._v1_send_request, optional=True),
            # mcp 2.x
            Patch("mcp.client.session", "ClientSession.send_request", self._v2_client_send_request, optional=True),
            Patch("mcp.client.session", "ClientSession.send_discover", self._v2_send_discover, optional=True),
            Patch("mcp.server.session", "ServerSession.send_request", self._v2_server_send_request, optional=True),
            Patch("mcp.server.connection", "Connection.send_raw_request", self._v2_connection_send, optional=True),
            Patch("mcp.client.session", "ClientSession.initialize", self._initialize),
            Patch(
                "mcp.client.session",
                "ClientSession.send_notification",
                self._send_notification,
                optional=True,
            ),
            Patch("mcp.shared.session", "BaseSession.send_notification", self._send_notification, optional=True),
            Patch("mcp.shared.jsonrpc_dispatcher", "otel_span", self._sdk_span, optional=True),
            Patch("mcp.client.stdio", "stdio_client", self._stdio_client, rebind=True),
            Patch("mcp.client.streamable_http", "StreamableHTTPTransport.post_writer", self._post_writer),
            *(
                Patch(f"fastmcp.{module}", "client_span", fastmcp.without_own_span, optional=True)
                # the client's calls, and a proxy server's calls to its backend
                for module in (
                    "client.mixins.tools",
                    "client.mixins.resources",
                    "client.mixins.prompts",
                    "server.providers.proxy",
                )
                if self._settings.sdk_spans is SdkSpans.SUPPRESS
            ),
        ]

    # --- tools/call, as the caller made it ----------------------------------------------------

    async def _call_tool(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        active = _ACTIVE_CALL.get()
        if active is not None and active.rounds and active.session is instance and active.method == METHOD_TOOLS_CALL:
            return await wrapped(*args, **kwargs)  # a round of a logical call: its requests are counted there
        call = self._start_call(METHOD_TOOLS_CALL, wrapped, instance, args, kwargs)
        if call is None:
            return await wrapped(*args, **kwargs)
        args, kwargs = self._with_trace_context(wrapped, call.span, args, kwargs)
        return await self._traced(call, _ACTIVE_CALL, wrapped, args, kwargs)

    def _logical_call_tool(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._logical(METHOD_TOOLS_CALL, wrapped, instance, args, kwargs)

    def _logical_get_prompt(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._logical(METHOD_PROMPTS_GET, wrapped, instance, args, kwargs)

    async def _logical(
        self, method: str, wrapped: Any, client: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """mcp 2.x ``Client.call_tool`` / ``get_prompt``: one CLIENT span for the call as the
        caller made it, however many input rounds (2026-07-28 ``InputRequiredResult``) it takes."""
        try:
            session = client.session
        except Exception:  # not connected: the SDK raises its own error
            return await wrapped(*args, **kwargs)
        call = self._start_call(method, wrapped, session, args, kwargs)
        if call is None:
            return await wrapped(*args, **kwargs)
        call.rounds = 1
        args, kwargs = self._with_trace_context(wrapped, call.span, args, kwargs)
        return await self._traced(call, _ACTIVE_CALL, wrapped, args, kwargs)

    async def _traced(
        self,
        call: _ClientCall,
        current: ContextVar[_ClientCall | None],
        wrapped: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """Await the SDK's call with our span current and ``call`` in ``current``; finish the span
        with what it returned or raised (which goes on to the caller unchanged)."""
        call_token = current.set(call)
        context_token = context.attach(trace.set_span_in_context(call.span))
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            self._finish(call, exc=exc)
            if self._settings.send_cancel and call.v1_request_id is not None and not call.cancel_sent:
                await self._courtesy_cancel(call, exc)
            raise
        finally:
            context.detach(context_token)
            current.reset(call_token)
        self._finish(call, result=result)
        return result

    def _start_call(
        self, method: str, wrapped: Any, session: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> _ClientCall | None:
        try:
            name, arguments = binding.arguments_of(wrapped, args, kwargs, "name", "arguments")
            request = Request.of(method, {"name": name}, self._settings)
            return self._open(session, request, *self._client_attributes(session, request), arguments)
        except Exception as exc:
            report_once("could not start a client span", exc)
            return None

    def _open(
        self,
        session: Any,
        request: Request,
        attributes: dict[str, Any],
        metric_attributes: Mapping[str, Any] | None,
        arguments: Any = None,
    ) -> _ClientCall:
        """Start the CLIENT span of ``request`` (``metric_attributes``: ``None`` to derive them from
        ``attributes``; ``arguments``: a tool call's, for content capture)."""
        try:
            request_id = v1.next_request_id(session)
        except Exception as exc:  # the span is still useful without it
            report_once("could not read the client session's facts", exc)
            request_id = None
        if request_id is not None:
            attributes[JSONRPC_REQUEST_ID] = str(request_id)
        capture = self._settings.capture_content and request.method == METHOD_TOOLS_CALL
        content = arguments_attributes(arguments, self._settings) if capture else None
        if metric_attributes is None:
            metric_attributes = self._metrics.attributes(attributes)  # not from the content's
        span_attributes = {**attributes, **content} if content else attributes
        call = self._lifecycle.open(_ClientCall, SpanKind.CLIENT, request, span_attributes, metric_attributes)
        call.session = session
        if request_id is not None:
            call.v1_request_id = request_id
            self._note_request_id(call, request_id)
        return call

    def _client_attributes(self, session: Any, request: Request) -> tuple[dict[str, Any], Mapping[str, Any] | None]:
        """A client's request: its span and metric attributes, with the session's facts (the span
        is still useful without them)."""
        try:
            facts = common.session_facts(session)
            transport = self._transports.lookup(common.session_write_stream(session))
            session_id = transport.session_id() if transport is not None and transport.session_id else None
            # Plain values only: the key must not keep a transport (or what it holds) alive.
            connection = None if transport is None else transport.key()
            return self._cache.get(
                (request, facts, session_id, connection),
                partial(self._attributes, request, facts, transport, session_id),
            )
        except Exception as exc:
            report_once("could not read the client session's facts", exc)
            attributes = session_attributes(request, self._settings, common.NO_FACTS)
            return attributes, None

    def _server_attributes(self, request: Request) -> dict[str, Any]:
        """A server's request to its client: the facts of the request it is handling, if any."""
        attributes = session_attributes(request, self._settings, common.NO_FACTS)
        attributes.update(handled_request_attributes())
        return attributes

    def _attributes(
        self, request: Request, facts: common.SessionFacts, transport: TransportInfo | None, session_id: str | None
    ) -> tuple[dict[str, Any], Mapping[str, Any]]:
        attributes = session_attributes(request, self._settings, facts, session_id)
        if transport is not None:
            attributes[NETWORK_TRANSPORT] = transport.network_transport
            if transport.server_address:
                attributes[SERVER_ADDRESS] = transport.server_address
                if transport.server_port is not None:
                    attributes[SERVER_PORT] = transport.server_port
        return attributes, self._metrics.attributes(attributes)

    def _with_trace_context(
        self, wrapped: Any, span: Span, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's arguments with our span's context added to ``meta`` (the caller's dict is
        copied, never changed; the arguments are untouched when there is nothing to add)."""
        if not self._settings.propagate:
            return args, kwargs
        try:
            slot = binding.argument_slot(binding.plain_function(wrapped), "meta")
            if slot is None:
                return args, kwargs
            meta = slot.get(args, kwargs)
            if meta is not None and not isinstance(meta, Mapping):
                return args, kwargs
            carrier = dict(meta) if meta else {}
            self._propagator.inject(carrier, span)
            if carrier == (meta or {}):  # nothing to add (or the caller's own context already there)
                return args, kwargs
            return slot.replace(args, kwargs, carrier)
        except Exception as exc:
            report_once("could not inject trace context", exc)
            return args, kwargs

    # --- every request ------------------------------------------------------------------------

    def _v1_send_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        active = _ACTIVE_CALL.get()
        if (
            active is not None
            and not active.sent
            and active.session is instance
            and active.method == METHOD_TOOLS_CALL
            and not active.rounds
            and args
            and getattr(getattr(args[0], "root", None), "method", None) == METHOD_TOOLS_CALL
        ):
            # call_tool's own tools/call, which it awaits at once: its span is call_tool's. Told
            # here, before the SDK's coroutine exists, so that this send (every tool call
            # makes one) costs no coroutine of ours.
            active.sent = True
            return wrapped(*args, **kwargs)

        def describe() -> tuple[Any, Any]:
            (request,) = binding.arguments_of(wrapped, args, kwargs, "request")
            return v1.method_and_params(request)

        # Both sides send through BaseSession: which one this is, asked only for a span of its own.
        return self._send(wrapped, instance, args, kwargs, describe, from_server=None, v1_request=True)

    def _v2_client_send_request(
        self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        return self._v2_send_typed(wrapped, instance, args, kwargs, from_server=False)

    def _v2_server_send_request(
        self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        return self._v2_send_typed(wrapped, instance, args, kwargs, from_server=True)

    def _v2_send_typed(
        self, wrapped: Any, session: Any, args: tuple[Any, ...], kwargs: dict[str, Any], *, from_server: bool
    ) -> Any:
        def describe() -> tuple[Any, Any]:
            (request,) = binding.arguments_of(wrapped, args, kwargs, "request")
            return getattr(request, "method", None), getattr(request, "params", None)

        return self._send(wrapped, session, args, kwargs, describe, from_server=from_server)

    def _v2_send_discover(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        def describe() -> tuple[Any, Any]:
            (version,) = binding.arguments_of(wrapped, args, kwargs, "version")
            return METHOD_SERVER_DISCOVER, common.envelope_params(version)

        return self._send(wrapped, instance, args, kwargs, describe, from_server=False)

    def _v2_connection_send(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
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
        from_server: bool | None,
        v1_request: bool = False,
    ) -> Any:
        """A send: the SDK's own (no span of ours, or call_tool's own request, whose span is
        call_tool's), or the SDK's inside a span of its own. ``from_server``: the sender is a
        server (``None``: told by the session's type)."""
        call = self._start_request(session, describe, from_server)
        if call is None:
            return await wrapped(*args, **kwargs)
        if call.rounds and call is _ACTIVE_CALL.get():
            return await self._round(call, wrapped, args, kwargs)
        if v1_request:  # mcp 2.x's dispatcher injects the current context itself, which is ours
            args, kwargs = self._with_v1_trace_context(wrapped, call.span, args, kwargs)
        return await self._traced(call, _SENDING, wrapped, args, kwargs)

    def _start_request(
        self, session: Any, describe: Callable[[], tuple[Any, Any]], from_server: bool | None
    ) -> _ClientCall | None:
        """The request's new call; the active logical call whose round it is; or ``None``: none
        of ours, or an active call_tool's own ``tools/call`` (its span is call_tool's)."""
        try:
            method, params = describe()
            active = _ACTIVE_CALL.get()
            if active is not None and active.session is session and method == active.method:
                if active.rounds:
                    return active
                if method == METHOD_TOOLS_CALL and not active.sent:
                    active.sent = True
                    return None
            request = Request.of(method, params, self._settings)
            if from_server is None:
                from_server = not common.is_client_session(session)
            attributes, metric_attributes = (
                (self._server_attributes(request), None) if from_server else self._client_attributes(session, request)
            )
            if MCP_PROTOCOL_VERSION not in attributes and (version := common.envelope_protocol_version(params)):
                attributes[MCP_PROTOCOL_VERSION] = version  # a 2026-07-28 request before the session knows it
                metric_attributes = None  # derived with it
            arguments = field(params, "arguments") if request.is_tool_call else None
            call = self._open(session, request, attributes, metric_attributes, arguments)
            if request.method.startswith(TASKS_METHOD_PREFIX):
                call.task_id = common.str_or_none(field(params, "taskId"))
            return call
        except Exception as exc:
            report_once("could not start a client span", exc)
            return None

    async def _round(self, call: _ClientCall, wrapped: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One request of a logical call: its answer, if it asks for input, is noted on the call."""
        try:
            if call.sent:  # a later round (its own request id; the SDK's span for it suppressed too)
                call.rounds += 1
                if call.request_id is not None:
                    self._inflight.pop((id(call.session), call.request_id), None)
                    call.request_id = None
            call.sent = True
        except Exception as exc:
            report_once("could not note an input round", exc)
        result = await wrapped(*args, **kwargs)
        try:
            if unfinished(result) is ResultType.INPUT_REQUIRED:
                self._note_input_required(call, result)
        except Exception as exc:
            report_once("could not note an input round", exc)
        return result

    def _note_input_required(self, call: _ClientCall, result: Any) -> None:
        """A round answered ``InputRequiredResult``: the kinds of input asked for (methods, bounded
        to the specification's; never their content), and one event per round."""
        requests = getattr(result, "input_requests", None) or {}
        methods = sorted({_input_method(request) for request in requests.values()})
        call.input_methods = (call.input_methods or set()).union(methods)
        call.span.add_event(EVENT_INPUT_REQUIRED, {MCP_REQUEST_ROUNDS: call.rounds, MCP_REQUEST_INPUT_METHODS: methods})

    async def _dispatch_input(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """mcp 2.x ``dispatch_input_request`` inside a logical call (its input rounds): the
        person's answer. Outside one (a server's request), the receiver's span reads the answer."""
        call = _ACTIVE_CALL.get()
        answer = await wrapped(*args, **kwargs)
        if call is None or not call.rounds:
            return answer
        try:
            (request,) = binding.arguments_of(wrapped, args, kwargs, "request")
            method = _input_method(request)
            event: dict[str, Any] = {MCP_METHOD_NAME: method}
            if action := elicitation_action(answer):
                event[MCP_ELICITATION_ACTION] = action
            if is_declined_answer(method, answer, common.rpc_error_from(answer)):
                call.input_declined = True
                event[MCP_REQUEST_CANCEL_REASON] = CancelReason.INPUT_DECLINED.value
            call.span.add_event(EVENT_INPUT_ANSWERED, event)
        except Exception as exc:
            report_once("could not read an input request's answer", exc)
        return answer

    def _with_v1_trace_context(
        self, wrapped: Any, span: Span, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """mcp 1.x: the request with our span's context in ``params._meta`` (a copy: the
        caller's request is not changed)."""
        if not self._settings.propagate:
            return args, kwargs
        try:
            slot = binding.argument_slot(binding.plain_function(wrapped), "request")
            request = slot.get(args, kwargs) if slot is not None else None
            if slot is None or request is None:
                return args, kwargs
            carrier: dict[str, str] = {}
            self._propagator.inject(carrier, span)
            return slot.replace(args, kwargs, v1.with_meta(request, carrier)) if carrier else (args, kwargs)
        except Exception as exc:
            report_once("could not inject trace context", exc)
            return args, kwargs

    def _finish(self, call: _ClientCall, result: Any = None, exc: BaseException | None = None) -> None:
        if call.request_id is not None:
            self._inflight.pop((id(call.session), call.request_id), None)
        result_type = unfinished(result) if exc is None else None
        if result_type is ResultType.TASK and call.method == METHOD_TOOLS_CALL and self._tasks.follows(call, result):
            return  # answered with a task: the span ends when the task does
        if call.task_id is not None:
            self._tasks.learn(call, result, exc)
        # mcp 2.x: the request id learnt from the dispatcher goes on with the outcome (one write).
        late: dict[str, Any] = (
            {JSONRPC_REQUEST_ID: call.request_id} if call.request_id and call.v1_request_id is None else {}
        )
        if call.method == METHOD_TOOLS_CALL:
            if self._settings.capture_content:
                late.update(result_attributes(result, self._settings))
        elif call.method in (METHOD_INITIALIZE, METHOD_SERVER_DISCOVER) and result is not None:
            late.update(self._learnt_from_handshake(call, result))
        elif call.method == METHOD_ELICITATION_CREATE and (action := elicitation_action(result)):
            late[MCP_ELICITATION_ACTION] = action
        if call.rounds:
            late[MCP_REQUEST_ROUNDS] = call.rounds
            if call.input_methods:
                late[MCP_REQUEST_INPUT_METHODS] = sorted(call.input_methods)
        classify = partial(self._classify, call, result, exc, result_type, self._settings.capture_content)
        self._lifecycle.finish(call, classify, late)

    def _learnt_from_handshake(self, call: _ClientCall, result: Any) -> dict[str, Any]:
        """``initialize`` (``server/discover``) names the server only in its answer: its span and
        point say it too."""
        try:
            facts = common.handshake_facts(result)
            learnt = session_attributes(Request(call.method), self._settings, facts)
            self._lifecycle.relearn(call, learnt)
            return learnt
        except Exception as exc:
            report_once("could not read the handshake's result", exc)
            return {}

    @staticmethod
    def _classify(
        call: _ClientCall, result: Any, exc: BaseException | None, result_type: ResultType | None, keep_message: bool
    ) -> CallOutcome | ResultType:
        """``result_type``: what ``unfinished`` says of the result (read once, by the caller)."""
        if result_type is not None:
            return result_type  # an input round driven by hand, or a task not followed
        rpc_error = common.rpc_error_of(exc) if exc is not None else None
        answer_declined = call.method in INPUT_METHODS and is_declined_answer(call.method, result, rpc_error)
        if answer_declined:
            note_input_declined()  # a server's input request: the call it handles learns the no
        if exc is None:
            return classify_client_result(result, answer_declined=answer_declined, input_declined=call.input_declined)
        return classify_client_exception(
            exc,
            is_cancellation=common.is_cancellation(exc),
            rpc_error=rpc_error,
            cancel_sent=call.cancel_sent,
            transport_closed=common.is_transport_closed(exc),
            keep_message=keep_message,
            answer_declined=answer_declined,
            input_declined=call.input_declined,
        )

    async def _courtesy_cancel(self, call: _ClientCall, exc: BaseException) -> None:
        """Opt-in, mcp 1.x clients only: tell the server a request we stopped waiting for is
        cancelled, as mcp 2.x clients do, so it stops the work (and records it as cancelled).
        Shielded from the caller's cancellation and bounded in time. Never for ``initialize``
        (the specification forbids cancelling it)."""
        try:
            if call.method == METHOD_INITIALIZE or not common.is_client_session(call.session):
                return
            reason = common.abandon_reason(exc)
            if reason is None:
                return
            notification = v1.cancel_notification(call.v1_request_id, reason)
            import anyio  # the SDK's async library, there whenever the SDK is (not imported before it)

            with anyio.CancelScope(shield=True), anyio.move_on_after(COURTESY_CANCEL_TIMEOUT):
                await call.session.send_notification(notification)
        except Exception as error:
            report_once("could not send a courtesy cancel", error, logging.DEBUG)

    def _note_request_id(self, call: _ClientCall, request_id: Any) -> None:
        """Track the call by its request id (to recognize this client's own cancels)."""
        if request_id is None:
            return
        call.request_id = str(request_id)
        self._inflight[(id(call.session), call.request_id)] = call

    # --- the person in the loop, tasks, sessions ----------------------------------------------

    def input_declined(self, session: Any, trace_id: int) -> None:
        """This agent answered its server's input request (received on ``session``, sent in trace
        ``trace_id``; 0: no trace came with it) with the person's no: the tool call in flight on
        that session that asked for it may end in a cancel. With several in flight, the trace
        tells them apart; when it cannot, none is marked (the server's side still is)."""
        calls = [
            call for call in self._inflight.values() if call.session is session and call.method == METHOD_TOOLS_CALL
        ]
        if len(calls) > 1 and trace_id:
            calls = [call for call in calls if call.span.get_span_context().trace_id == trace_id]
        if len(calls) == 1:
            calls[0].input_declined = True

    def session_closed(self, session: Any) -> None:
        """A client session closed: tasks it still followed end with what is known of them."""
        self._tasks.session_closed(session)

    # --- session facts and cancel tracking ----------------------------------------------------

    async def _initialize(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        result = await wrapped(*args, **kwargs)
        try:
            common.remember_initialize_result(instance, result)
        except Exception as exc:
            report_once("could not keep the initialize result", exc)
        return result

    async def _send_notification(
        self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        try:
            notification = args[0] if args else kwargs.get("notification")
            request_id = common.cancelled_request_id(notification)
            if request_id is not None:
                call = self._inflight.get((id(instance), str(request_id)))
                if call is not None:
                    call.cancel_sent = True
        except Exception as exc:
            report_once("could not inspect an outgoing notification", exc)
        return await wrapped(*args, **kwargs)

    # --- other instrumentations' spans for the same call --------------------------------------

    def _sdk_span(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """mcp 2.x dispatcher's ``otel_span``: learn the request id, and by default replace the
        SDK's duplicate CLIENT span with a non-recording one, so the context the dispatcher then
        injects into ``_meta`` is ours."""
        # The request being sent, or (call_tool's own request, sent without a span of its own) the call.
        call = _SENDING.get() or _ACTIVE_CALL.get()
        if call is None or call.request_id is not None:
            return wrapped(*args, **kwargs)
        try:
            attributes = kwargs.get("attributes") or {}
            if kwargs.get("kind") is SpanKind.CLIENT and attributes.get(MCP_METHOD_NAME) == call.method:
                self._note_request_id(call, attributes.get(JSONRPC_REQUEST_ID))
                if self._settings.sdk_spans is SdkSpans.SUPPRESS:
                    return nullcontext(INVALID_SPAN)
        except Exception as exc:
            report_once("could not inspect the SDK's client span", exc)
        return wrapped(*args, **kwargs)

    # --- transports -------------------------------------------------------------------------

    def _stdio_client(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return RegisteringTransport(wrapped(*args, **kwargs), self._transports, TransportInfo(TRANSPORT_PIPE))

    async def _post_writer(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        stream = None
        try:
            slot = binding.argument_slot(binding.plain_function(wrapped), "write_stream")
            endpoint = common.http_endpoint(instance)
            if slot is not None and endpoint is not None:
                stream = slot.get(args, kwargs)
                info = TransportInfo(TRANSPORT_TCP, endpoint.address, endpoint.port, endpoint.session_id)
                self._transports.register(stream, info)
        except Exception as exc:
            report_once("could not register an HTTP transport", exc)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            self._transports.unregister(stream)


def _input_method(request: Any) -> str:
    """An input request's method, bounded to the specification's (a peer's other name: ``_OTHER``)."""
    method = getattr(request, "method", None)
    return method if method in INPUT_METHODS else OTHER_VALUE
