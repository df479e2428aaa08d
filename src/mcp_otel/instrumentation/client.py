"""The sender side: every request a process sends becomes one CLIENT span.

That is every request a client sends its server (``initialize``, ``tools/list``,
``resources/read``, any method) and every request a server sends its client
(``elicitation/create``, ``sampling/createMessage``, ``roots/list``, ``ping``). Which SDK
function sends a request is each front end's to know (:mod:`mcp_otel.instrumentation.frontends.mcp1`,
:mod:`mcp_otel.instrumentation.frontends.mcp2`); they hand their requests here. What is here is the same on
both majors:

* ``ClientSession.call_tool`` (both majors; ``mcp.Client``, ``ClientSessionGroup``, fastmcp's
  ``Client``) makes the ``tools/call`` span itself, so that it covers all the caller waits for
  (the SDK's output validation included); the ``tools/call`` request it sends gets no second span;
* the span starts at the call's first step, in the task that awaits it (its context is the
  parent), never when the coroutine is created: a coroutine made in one task and awaited in
  another belongs to the awaiting one, and one that never runs leaves nothing;
* the span carries the connection's facts (server identity, protocol version, transport);
* the configured propagator's fields go into ``params._meta`` while our span is current;
* ``notifications/cancelled`` sent by this client are noted, so the mcp 1.x server's
  ``code 0 "Request cancelled"`` reply to it reads as a cancel, not a failure;
* a ``tools/call`` answered with a task (mcp 1.x experimental tasks) keeps its span open while
  the client follows the task (:mod:`mcp_otel.instrumentation.tasks`).

The verdict comes from :mod:`mcp_otel.model.classify`, and the request is opened and finished by
:mod:`mcp_otel.model.lifecycle`. Every step of our own fails open.

Over 400 lines: :class:`ClientSide` is the one sender side both SDK majors feed; its request spans,
notification spans, trace context and handshake facts share the calls in flight and the session
facts it keeps.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from functools import partial
from typing import Any

from opentelemetry import context, trace
from opentelemetry.trace import Span, SpanKind, Tracer

from mcp_otel.instrumentation import binding
from mcp_otel.instrumentation.patching import Patch
from mcp_otel.instrumentation.server import handled_request_attributes, note_input_declined
from mcp_otel.instrumentation.tasks import TaskFollower
from mcp_otel.instrumentation.transport import RegisteringTransport, TransportInfo, TransportRegistry
from mcp_otel.model import messages
from mcp_otel.model.attributes import AttributeCache, Request, SettledSessions, session_attributes, traced_notification
from mcp_otel.model.classify import (
    classify_answer,
    classify_client_exception,
    classify_client_result,
    elicitation_action,
    is_declined_answer,
)
from mcp_otel.model.config import Settings
from mcp_otel.model.content import arguments_attributes, result_attributes
from mcp_otel.model.current import CURRENT_CONTEXT, in_span_context
from mcp_otel.model.fields import field
from mcp_otel.model.lifecycle import Answered, Call, Lifecycle, unnamed_negotiation
from mcp_otel.model.messages import rpc_error_of
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.model.outcome import Verdict
from mcp_otel.model.propagation import MetaPropagator
from mcp_otel.model.safety import report_once
from mcp_otel.semconv import (
    INPUT_METHODS,
    JSONRPC_REQUEST_ID,
    MCP_ELICITATION_ACTION,
    MCP_PROTOCOL_VERSION,
    MCP_REQUEST_INPUT_METHODS,
    MCP_REQUEST_ROUNDS,
    METHOD_CANCELLED,
    METHOD_ELICITATION_CREATE,
    METHOD_INITIALIZE,
    METHOD_INITIALIZED,
    METHOD_SERVER_DISCOVER,
    METHOD_TOOLS_CALL,
    NETWORK_TRANSPORT,
    SERVER_ADDRESS,
    SERVER_PORT,
    TASKS_METHOD_PREFIX,
    TRANSPORT_PIPE,
    TRANSPORT_TCP,
    ResultType,
)


class ClientCall(Call):
    """A request this process sent, as the patches see it."""

    session: Any = None
    request_id: str | None = None
    v1_request_id: int | None = None  # the id as mcp 1.x put it on the wire
    cancel_sent = False
    sent = False  # call_tool's own request went out (its send gets no span of its own)
    # A logical call (mcp 2.x Client.call_tool / get_prompt): every request of its method it
    # sends is one of its rounds (0: not a logical call).
    rounds = 0
    input_methods: set[str] | None = None  # input the server asked for in its rounds
    input_declined = False  # the person declined an input request of this call
    task_id: str | None = None  # tasks/get|result|cancel: the task it is about


# The call_tool (or logical call) whose wrapper is running in this task: its own requests get no
# span of their own (or are its rounds).
ACTIVE_CALL: ContextVar[ClientCall | None] = ContextVar("mcp_otel_client_call", default=None)
# The request being sent in this task: lets a front end's hook on the SDK's send path find it.
SENDING: ContextVar[ClientCall | None] = ContextVar("mcp_otel_sending", default=None)
# A session's send of a notification is under way here, its span made: the SDK's own send
# underneath (mcp 2.x's dispatcher) makes none.
NOTIFYING: ContextVar[bool] = ContextVar("mcp_otel_notifying", default=False)

# How a request starts (see ClientSide.traced): its call (``None``: none of ours) and
# the arguments to send it with, given (wrapped, instance, args, kwargs) as the patch got them.
Started = tuple["ClientCall | None", tuple[Any, ...], dict[str, Any]]
Start = Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Started]

# A front end's copy of a typed notification with the given entries in its ``params._meta``.
Carry = Callable[[Any, Mapping[str, str]], Any]

# What a front end does when the caller stopped waiting for a request (mcp 1.x: the courtesy
# cancel, opt-in); it never raises.
Abandoned = Callable[[ClientCall, BaseException], Awaitable[None]]


class ClientSide:
    """The sender side: the CLIENT spans' lifecycle, fed by the front ends' send hooks and by its own patches of
    what both majors share (``call_tool``, ``initialize``, the transports)."""

    def __init__(
        self,
        tracer: Tracer,
        metrics: CallMetrics,
        settings: Settings,
        transports: TransportRegistry,
        abandoned: Abandoned | None = None,
    ) -> None:
        self.settings = settings
        self.propagator = MetaPropagator()
        self._metrics = metrics
        self._lifecycle = Lifecycle(tracer, metrics)
        self._transports = transports
        self._abandoned = abandoned
        # (id(session), request id) -> call, for calls whose request id is known.
        self._inflight: dict[tuple[int, str], ClientCall] = {}
        self._tasks = TaskFollower(self._lifecycle.finish)
        self._cache = AttributeCache()
        self._settled = SettledSessions()
        # id(session) -> a server/discover probe the server refused, held (answered, not yet
        # ended) until the handshake that follows names the server.
        self._negotiated: dict[int, Answered] = {}

    def patches(self) -> list[Patch]:
        return [
            # The wrapper is traced itself, its first two arguments bound: no call of ours between.
            Patch(
                "mcp.client.session",
                "ClientSession.call_tool",
                partial(self.traced, self._start_tool_call, ACTIVE_CALL),
            ),
            Patch("mcp.client.session", "ClientSession.initialize", self._initialize),
            Patch("mcp.client.stdio", "stdio_client", self._stdio_client, rebind=True),
            Patch("mcp.client.streamable_http", "StreamableHTTPTransport.post_writer", self._post_writer),
        ]

    # --- tools/call, as the caller made it ----------------------------------------------------

    def _start_tool_call(self, wrapped: Any, session: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Started:
        active = ACTIVE_CALL.get()
        if active is not None and active.rounds and active.session is session and active.method == METHOD_TOOLS_CALL:
            return None, args, kwargs  # a round of a logical call: its requests are counted there
        call = self.start_call(METHOD_TOOLS_CALL, wrapped, session, args, kwargs)
        if call is None:
            return None, args, kwargs
        return (call, *self.with_trace_context(wrapped, call.span, args, kwargs))

    async def traced(
        self,
        start: Start,
        current: ContextVar[ClientCall | None],
        wrapped: Any,
        instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """Start a request where its awaited call first runs (in the task that awaits it, whose
        context is its span's parent; nothing of ours runs when the coroutine is only created),
        then await the SDK's call with our span current and the call in ``current``; finish the
        span with what it returned or raised (which goes on to the caller unchanged). One
        coroutine of ours per request: each layer costs every one of the SDK's awaits."""
        try:
            call, args, kwargs = start(wrapped, instance, args, kwargs)
        except Exception as exc:
            report_once("could not start a client span", exc)
            call = None
        if call is None:
            return await wrapped(*args, **kwargs)
        call_token = current.set(call)
        # Our span current: the API's context variable set directly where it is one (as attach
        # sets it; see current.CURRENT_CONTEXT).
        call.context = in_span = in_span_context(call.span)  # its point's too
        context_token = context.attach(in_span) if CURRENT_CONTEXT is None else CURRENT_CONTEXT.set(in_span)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            self._finish(call, exc=exc)
            if self._abandoned is not None and not call.cancel_sent:
                await self._abandoned(call, exc)
            raise
        finally:
            try:
                CURRENT_CONTEXT.reset(context_token)  # type: ignore[union-attr]
            except Exception:  # not the API's variable, or a reset that fails: detach's own way
                context.detach(context_token)
            current.reset(call_token)
        self._finish(call, result=result)
        return result

    def start_call(
        self, method: str, wrapped: Any, session: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> ClientCall | None:
        """A call as the caller made it (``call_tool``, ``get_prompt``): its name and arguments."""
        try:
            name, arguments = binding.arguments_of(wrapped, args, kwargs, "name", "arguments")
            request = Request.named(method, name, None, self.settings)
            return self._open(session, request, *self._client_attributes(session, request), arguments)
        except Exception as exc:
            report_once("could not start a client span", exc)
            return None

    def _open(
        self,
        session: Any,
        request: Request,
        attributes: Mapping[str, Any],
        metric_attributes: Mapping[str, Any] | None,
        arguments: Any = None,
    ) -> ClientCall:
        """Start the CLIENT span of ``request`` (``metric_attributes``: ``None`` to derive them from
        ``attributes``; ``arguments``: a tool call's, for content capture)."""
        capture = self.settings.capture_content and request.method == METHOD_TOOLS_CALL
        content = arguments_attributes(arguments, self.settings) if capture else None
        if metric_attributes is None:
            metric_attributes = self._metrics.attributes(attributes)  # not from the content's
        span_attributes = {**attributes, **content} if content else attributes
        call = self._lifecycle.open(ClientCall, SpanKind.CLIENT, request, span_attributes, metric_attributes)
        call.session = session
        return call

    def _client_attributes(self, session: Any, request: Request) -> tuple[Mapping[str, Any], Mapping[str, Any] | None]:
        """A client's request: its span and metric attributes (shared: read-only), with the
        session's facts (the span is still useful without them)."""
        try:
            settled = self._settled.requests(session)
            if settled is not None and (found := settled.get(request)) is not None:
                return found
            facts = messages.session_facts(session)
            transport = self._transports.lookup(messages.session_write_stream(session))
            session_id = transport.session_id() if transport is not None and transport.session_id else None
            # Plain values only: the key must not keep a transport (or what it holds) alive.
            connection = None if transport is None else transport.key()
            key = (request, facts, session_id, connection)
            found = self._cache.get(key) or self._cache.put(
                key, self._attributes(request, facts, transport, session_id)
            )
            if settled is not None:
                self._settled.keep(settled, request, found)
            return found
        except Exception as exc:
            report_once("could not read the client session's facts", exc)
            attributes = session_attributes(request, self.settings, messages.NO_FACTS)
            return attributes, None

    def _server_attributes(self, request: Request) -> dict[str, Any]:
        """A server's request to its client: the facts of the request it is handling, if any."""
        attributes = session_attributes(request, self.settings, messages.NO_FACTS)
        attributes.update(handled_request_attributes())
        return attributes

    def _attributes(
        self, request: Request, facts: messages.SessionFacts, transport: TransportInfo | None, session_id: str | None
    ) -> tuple[dict[str, Any], Mapping[str, Any]]:
        attributes = session_attributes(request, self.settings, facts, session_id)
        if transport is not None:
            attributes[NETWORK_TRANSPORT] = transport.network_transport
            if transport.server_address:
                attributes[SERVER_ADDRESS] = transport.server_address
                if transport.server_port is not None:
                    attributes[SERVER_PORT] = transport.server_port
        return attributes, self._metrics.attributes(attributes)

    def with_trace_context(
        self, wrapped: Any, span: Span, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's arguments with our span's context added to ``meta`` (the caller's dict is
        copied, never changed; the arguments are untouched when there is nothing to add)."""
        if not self.settings.propagate:
            return args, kwargs
        try:
            slot = binding.slot_of(wrapped, "meta")
            if slot is None:
                return args, kwargs
            meta = slot.get(args, kwargs)
            if meta is not None and not isinstance(meta, Mapping):
                return args, kwargs
            carrier = dict(meta) if meta else {}
            self.propagator.inject(carrier, span)
            if carrier == (meta or {}):  # nothing to add (or the caller's own context already there)
                return args, kwargs
            return slot.replace(args, kwargs, carrier)
        except Exception as exc:
            report_once("could not inject trace context", exc)
            return args, kwargs

    # --- every request ------------------------------------------------------------------------

    def start_request(
        self, session: Any, describe: Callable[[], tuple[Any, Any]], from_server: bool | None
    ) -> ClientCall | None:
        """A request a front end saw sent on ``session`` (``describe``: its method and params;
        ``from_server``: the sender is a server, ``None``: told by the session's type). Returns
        its new call; the active logical call whose round it is; or ``None``: none of ours, or an
        active call_tool's own ``tools/call`` (its span is call_tool's)."""
        try:
            method, params = describe()
            active = ACTIVE_CALL.get()
            if active is not None and active.session is session and method == active.method:
                if active.rounds:
                    return active
                if method == METHOD_TOOLS_CALL and not active.sent:
                    active.sent = True
                    return None
            request = Request.of(method, params, self.settings)
            if from_server is None:
                from_server = not messages.is_client_session(session)
            attributes, metric_attributes = (
                (self._server_attributes(request), None) if from_server else self._client_attributes(session, request)
            )
            if MCP_PROTOCOL_VERSION not in attributes and (version := messages.envelope_protocol_version(params)):
                # A 2026-07-28 request before the session knows it (a copy: cached ones are shared).
                attributes = {**attributes, MCP_PROTOCOL_VERSION: version}
                metric_attributes = None  # derived with it
            arguments = field(params, "arguments") if request.is_tool_call else None
            call = self._open(session, request, attributes, metric_attributes, arguments)
            if request.method.startswith(TASKS_METHOD_PREFIX):
                call.task_id = messages.str_or_none(field(params, "taskId"))
            return call
        except Exception as exc:
            report_once("could not start a client span", exc)
            return None

    def note_request_id(self, call: ClientCall, request_id: Any) -> None:
        """The id the call's request went out with, as its front end learnt it: tracked by it (to
        recognize this client's own cancels), written with the outcome."""
        if request_id is None:
            return
        call.request_id = str(request_id)
        self._inflight[(id(call.session), call.request_id)] = call

    def forget_request_id(self, call: ClientCall) -> None:
        """The call's request is answered, though the call goes on (an input round)."""
        if call.request_id is not None:
            self._inflight.pop((id(call.session), call.request_id), None)
            call.request_id = None

    def _finish(self, call: ClientCall, result: Any = None, exc: BaseException | None = None) -> None:
        if call.request_id is not None:
            self._inflight.pop((id(call.session), call.request_id), None)
        late: dict[str, Any] = {JSONRPC_REQUEST_ID: call.request_id} if call.request_id else {}
        try:
            answer = classify_answer(result) if exc is None else None  # the result read once
        except Exception as error:  # fails open: the full classification reads it again
            report_once("could not classify a call", error)
            answer = None
        result_type = answer if isinstance(answer, ResultType) else None
        if result_type is ResultType.TASK and call.method == METHOD_TOOLS_CALL and self._tasks.follows(call, result):
            call.span.set_attributes(late)  # the span ends when the task does
            return
        if call.task_id is not None:
            self._tasks.learn(call, result, exc)
        if call.method == METHOD_TOOLS_CALL:
            if self.settings.capture_content:
                late.update(result_attributes(result, self.settings))
        elif call.method in (METHOD_INITIALIZE, METHOD_SERVER_DISCOVER) and result is not None:
            late.update(self._learnt_from_handshake(call, result))
        elif call.method == METHOD_ELICITATION_CREATE and (action := elicitation_action(result)):
            late[MCP_ELICITATION_ACTION] = action
        if call.rounds:
            late[MCP_REQUEST_ROUNDS] = call.rounds
            if call.input_methods:
                late[MCP_REQUEST_INPUT_METHODS] = sorted(call.input_methods)
        if answer is not None and (
            result_type is not None or (call.method not in INPUT_METHODS and not call.input_declined)
        ):
            # What the result says decides (most requests): an input round driven by hand, a task
            # not followed, or no person's no to weigh.
            self._lifecycle.finish(call, self._classify, late, verdict=answer)
            return
        facts = (call, result, exc, answer, self.settings.capture_content)
        if call.method == METHOD_SERVER_DISCOVER and exc is not None and unnamed_negotiation(call, rpc_error_of(exc)):
            # Named by the handshake that follows (or ended as it is when the session closes).
            self._negotiated[id(call.session)] = Answered(call, self._classify, late, facts)
            return
        self._lifecycle.finish(call, self._classify, late, facts)

    def _end_negotiated(self, session: Any, learnt: Mapping[str, Any] | None = None) -> None:
        """The session's refused probe ends, with the server's identity the handshake that
        followed learnt (``learnt``), if any."""
        held = self._negotiated.pop(id(session), None)
        if held is not None:
            held.finish(self._lifecycle, learnt)

    def _learnt_from_handshake(self, call: ClientCall, result: Any) -> dict[str, Any]:
        """``initialize`` (``server/discover``) names the server only in its answer: its span and
        point say it too."""
        try:
            self._settled.settle(call.session)
            facts = messages.handshake_facts(result)
            learnt = session_attributes(Request(call.method), self.settings, facts)
            self._lifecycle.relearn(call, learnt)
            self._end_negotiated(call.session, learnt)
            return learnt
        except Exception as exc:
            report_once("could not read the handshake's result", exc)
            return {}

    @staticmethod
    def _classify(
        call: ClientCall,
        result: Any,
        exc: BaseException | None,
        answer: Verdict | None,
        keep_message: bool,
    ) -> Verdict:
        """``answer``: what the result alone says (``classify_answer``, read once by the caller;
        ``None``: the call raised); asked only where it does not decide (see ``_finish``)."""
        rpc_error = messages.rpc_error_of(exc) if exc is not None else None
        answer_declined = call.method in INPUT_METHODS and is_declined_answer(call.method, result, rpc_error)
        if answer_declined:
            note_input_declined()  # a server's input request: the call it handles learns the no
        if exc is None:
            return classify_client_result(result, answer_declined=answer_declined, input_declined=call.input_declined)
        return classify_client_exception(
            exc,
            is_cancellation=messages.is_cancellation(exc),
            rpc_error=rpc_error,
            cancel_sent=call.cancel_sent,
            transport_closed=messages.is_transport_closed(exc),
            keep_message=keep_message,
            answer_declined=answer_declined,
            input_declined=call.input_declined,
            method=call.method,
        )

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
        self._settled.forget(session)
        self._tasks.session_closed(session)
        self._end_negotiated(session)

    # --- session facts and cancel tracking (the front ends patch their send_notification) -----

    async def _initialize(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        result = await wrapped(*args, **kwargs)
        try:
            messages.remember_initialize_result(instance, result)
            self._settled.settle(instance)  # anew: mcp 1.x's facts are the ones just kept
        except Exception as exc:
            report_once("could not keep the initialize result", exc)
        return result

    async def send_notification(
        self,
        wrapped: Any,
        instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        carry: Carry | None = None,
    ) -> Any:
        """A session sends a typed notification (mcp 1.x ``BaseSession``, either side; mcp 2.x
        ``ClientSession``): a cancel of a call in flight is noted on it, and the notification has
        its CLIENT span, around the send. The handshake's ``notifications/initialized`` (which
        the SDKs send without params) is sent as ``carry`` copies it, with the span's context in
        ``params._meta``: the receiver's span of it is its child."""
        span = None
        try:
            notification = args[0] if args else kwargs.get("notification")
            request_id = messages.cancelled_request_id(notification)
            if request_id is not None:
                call = self._inflight.get((id(instance), str(request_id)))
                if call is not None:
                    call.cancel_sent = True
            method, params = messages.notification_of(notification)
            span = self.notification_span(instance, method, params)
            if span is not None and carry is not None and method == METHOD_INITIALIZED:
                args, kwargs = self._carrying(carry, span, notification, args, kwargs)
        except Exception as exc:
            report_once("could not inspect an outgoing notification", exc)
        return await self._sending_notification(span, wrapped, args, kwargs)

    def _carrying(
        self, carry: Carry, span: Span, notification: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The send's arguments with ``carry``'s copy of ``notification`` (the SDK's own object,
        made for this send), ``span``'s context in its ``params._meta``, in its place."""
        if not self.settings.propagate:
            return args, kwargs
        try:
            carrier: dict[str, str] = {}
            self.propagator.inject(carrier, span)
            if not carrier:
                return args, kwargs
            carried = carry(notification, carrier)
            return ((carried, *args[1:]), kwargs) if args else (args, {**kwargs, "notification": carried})
        except Exception as exc:  # sent as it is, still with its span
            report_once("could not inject trace context", exc)
            return args, kwargs

    async def notify(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """mcp 2.x: a dispatcher sends a notification by method and params (a server's progress, log
        and change notifications, the client's own cancel of a request it stopped waiting for):
        its CLIENT span around the send, unless a session's send above made it."""
        if NOTIFYING.get():
            return await wrapped(*args, **kwargs)
        span = None
        try:
            method, params = binding.arguments_of(wrapped, args, kwargs, "method", "params")
            span = self.notification_span(None, method, params)
        except Exception as exc:
            report_once("could not inspect an outgoing notification", exc)
        return await self._sending_notification(span, wrapped, args, kwargs)

    @staticmethod
    async def _sending_notification(
        span: Span | None, wrapped: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Send with ``span`` current (an SDK that puts the context in ``_meta`` puts it there, so
        the receiver's span is its child), and no other span made by a send underneath."""
        notifying = NOTIFYING.set(True)
        current = None if span is None else context.attach(trace.set_span_in_context(span))
        try:
            return await wrapped(*args, **kwargs)
        finally:
            if current is not None:
                context.detach(current)
            NOTIFYING.reset(notifying)
            if span is not None:
                span.end()

    def notification_span(self, session: Any, method: Any, params: Any) -> Span | None:
        """The CLIENT span of a notification ``session`` sends (``None``: the session is not known
        here), started, or ``None`` for a notification not traced. Its parent is the call a cancel
        names (sent from here), else the current span (the handler's, for the progress of the
        request it handles, or a log message); its attributes are those of a request on its
        session, or of the request being handled."""
        if not traced_notification(method, self.settings):
            return None
        request = Request.of(method, params, self.settings)
        call = None
        if method == METHOD_CANCELLED and (concerned := messages.concerned_request_id(method, params)) is not None:
            call = self._call_sending(session, concerned)
            if call is not None:
                session = call.session
        parent = None if call is None else trace.set_span_in_context(call.span, context.Context())
        attributes: Mapping[str, Any]
        if session is not None and messages.is_client_session(session):
            attributes = self._client_attributes(session, request)[0]
        else:  # a server's: of the request it handles, if any
            attributes = self._server_attributes(request)
        return self._lifecycle.notification(SpanKind.CLIENT, request, attributes, parent=parent)

    def _call_sending(self, session: Any, request_id: Any) -> ClientCall | None:
        """The call in flight a notification names: on ``session``, or (no session known) the one
        this task sends."""
        if session is not None:
            return self._inflight.get((id(session), str(request_id)))
        for call in (SENDING.get(), ACTIVE_CALL.get()):
            if call is not None and call.request_id == str(request_id):
                return call
        return None

    def sent_span(self, session: Any, request_id: Any) -> Span | None:
        """The span of the request ``session`` sent with ``request_id``, while in flight."""
        call = self._inflight.get((id(session), str(request_id)))
        return None if call is None else call.span

    # --- transports -------------------------------------------------------------------------

    def _stdio_client(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return RegisteringTransport(wrapped(*args, **kwargs), self._transports, TransportInfo(TRANSPORT_PIPE))

    async def _post_writer(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        stream = None
        try:
            slot = binding.slot_of(wrapped, "write_stream")
            endpoint = messages.http_endpoint(instance)
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
