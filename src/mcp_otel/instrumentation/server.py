"""The receiver side: every request a process handles becomes one SERVER span.

That is every request a server handles from its clients (``tools/call``, ``resources/read``,
``initialize``, any method), and every request a client handles from its server
(``sampling/createMessage``, ``elicitation/create``, ``roots/list``, ``ping``). Where each SDK
major handles a request, and how it tells what was answered and whether the peer cancelled, is
its front end's to know (:mod:`.frontends.mcp1`, :mod:`.frontends.mcp2`): each
hands :meth:`ServerSide.handle` the request's facts and its own classification.

The span's parent is the context the sender put in ``params._meta``; an ambient span (e.g. an
HTTP server span) becomes a link. The handler's own code runs with our span current.

Over 400 lines: :class:`ServerSide` is the one receiver side both SDK majors feed; its request
spans, notification spans and the peer's cancels share the calls it keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Tracer

from mcp_otel.instrumentation import binding
from mcp_otel.instrumentation.patching import Patch
from mcp_otel.instrumentation.transport import RegisteringTransport, TransportInfo, TransportRegistry
from mcp_otel.model import messages
from mcp_otel.model.attributes import (
    AttributeCache,
    Request,
    request_attributes,
    round_attributes,
    traced_notification,
)
from mcp_otel.model.classify import (
    RpcError,
    classify_server_call,
    declined_in,
    elicitation_action,
    is_declined_answer,
)
from mcp_otel.model.config import Settings
from mcp_otel.model.content import arguments_attributes, result_attributes
from mcp_otel.model.current import CURRENT_CONTEXT, SPAN_KEY, current_span, in_span_context
from mcp_otel.model.fields import field
from mcp_otel.model.lifecycle import Call, Classify, Lifecycle
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.model.outcome import Verdict, bounded
from mcp_otel.model.propagation import MetaPropagator
from mcp_otel.model.safety import report_once
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
    METHOD_CANCELLED,
    METHOD_ELICITATION_CREATE,
    METHOD_TOOLS_CALL,
    NETWORK_TRANSPORT,
    TRANSPORT_PIPE,
    TRANSPORT_TCP,
)

# The attributes a request this process sends while handling one inherits from it: the
# connection's facts (a server's elicitation/create goes to the client of its tools/call).
CONNECTION_ATTRIBUTES = (MCP_SERVER_NAME, MCP_SERVER_VERSION, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, NETWORK_TRANSPORT)


_NO_ATTRIBUTES: Mapping[str, Any] = MappingProxyType({})
# Calls ended before their peer's cancel was handed on, kept for it (ServerSide.cancel_to_come).
MAX_CANCELS_TO_COME = 1024


class ServerCall(Call):
    """A request this process handles, as the patches see it."""

    # Its span's, but for content (requests it sends inherit them); shared with alike requests.
    attributes: Mapping[str, Any] = _NO_ATTRIBUTES
    owner: Any = None  # 1.x: the session; 2.x: the ServerRunner or ClientSession
    dispatch: Any = None  # 1.x: the RequestResponder; 2.x: the dispatch context
    answer: Any = None  # 1.x: what respond() was given
    answered = False
    # The person declined an input request of this call (answered in this round, or to an
    # elicitation this process sent while handling it).
    input_declined = False
    remote_span: SpanContext | None = None  # the sender's span (none came with the request)
    cancel_seen = False  # the peer's notifications/cancelled of it was received while it ran


# What a front end reads of a request it handles, given its patch's (wrapped, instance, args,
# kwargs): the request, its owner (session) and its dispatch (1.x: the responder), or ``None``:
# none of ours. A function, not a closure made per request.
RequestFacts = Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], "tuple[messages.ServerRequest, Any, Any] | None"]


def _unanswered(call: ServerCall, result: Any) -> None:
    """A handler that raised answered nothing of its own."""
    return None


def _cancel_key(connection: Any, owner: Any, request_id: Any) -> tuple[int, str]:
    """What a request is found by when a cancel names it: its connection's (else owner's) identity
    and its id (ids are unique per connection, per direction)."""
    return id(owner if connection is None else connection), str(request_id)


# The request handled in this task: lets the respond() and SDK-middleware hooks find it, and
# requests sent while handling it inherit its connection's facts.
ACTIVE_SERVER_CALL: ContextVar[ServerCall | None] = ContextVar("mcp_otel_server_call", default=None)
# The method of the notification handled in this task inside our SERVER span: lets a front end
# skip the SDK's own span of it (setting ``sdk_spans``).
ACTIVE_NOTIFICATION: ContextVar[str | None] = ContextVar("mcp_otel_server_notification", default=None)


def note_input_declined() -> None:
    """The person declined an input request this task's handler sent (an elicitation or sampling
    request sent while handling a call): the call may end in a cancel, not a failure."""
    call = ACTIVE_SERVER_CALL.get()
    if call is not None:
        call.input_declined = True


def handled_request_attributes() -> dict[str, Any]:
    """The connection facts of the request this task is handling (empty when none)."""
    call = ACTIVE_SERVER_CALL.get()
    if call is None:
        return {}
    return {key: call.attributes[key] for key in CONNECTION_ATTRIBUTES if key in call.attributes}


class ServerSide:
    """The receiver side: the SERVER spans' lifecycle, fed by the front ends' handler hooks."""

    def __init__(
        self,
        tracer: Tracer,
        metrics: CallMetrics,
        settings: Settings,
        transports: TransportRegistry,
        input_declined: Callable[[Any, int], None] = lambda session, trace_id: None,
        sent_span: Callable[[Any, Any], Span | None] = lambda session, request_id: None,
    ) -> None:
        self.settings = settings
        self._metrics = metrics
        self._lifecycle = Lifecycle(tracer, metrics)
        self._transports = transports
        # An agent answered its server's input request with the person's no: (session, the
        # request's trace id) go to the client side, whose call in flight asked for it.
        self._input_declined = input_declined
        # The span of a request a session sent, while in flight (the client side's): what a
        # progress notification received is about.
        self._sent_span = sent_span
        # (id(connection, else owner), request id) -> the call being handled: what a cancel received
        # is about (_cancel_key).
        self._handling: dict[tuple[int, str], ServerCall] = {}
        # The same key -> the span of a call the peer cancelled, ended before its cancel was handed
        # on (see cancel_to_come): what that cancel is about. At most MAX_CANCELS_TO_COME.
        self._cancels_to_come: dict[tuple[int, str], Span] = {}
        self._cache = AttributeCache()
        self._propagator = MetaPropagator()

    def patches(self) -> list[Patch]:
        return [Patch("mcp.server.stdio", "stdio_server", self._stdio_server, rebind=True)]

    async def handle(
        self,
        facts: RequestFacts,
        outcome: Callable[[ServerCall, Any, BaseException | None], Verdict],
        answer: Callable[[ServerCall, Any], Any],
        wrapped: Any,
        instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        around: Any = None,
    ) -> Any:
        """Run the SDK's handling of one request inside its SERVER span. ``facts`` reads the
        request from the patch's (wrapped, instance, args, kwargs); ``outcome`` classifies (call,
        returned, raised); ``answer`` is the result the request was answered with. The last four
        are a patch's, in wrapt's order: a front end binds the first three with ``partial`` and
        patches with that, no call of its own between."""
        held = None  # (owner, request id) while it is handled, for a cancel to find it
        try:
            found = facts(wrapped, instance, args, kwargs)
            call = None
            if found is not None:
                call = self._call(*found)
                if (request_id := found[0].request_id).__class__ in (int, str):
                    # _cancel_key, inline (every request)
                    connection = found[0].connection
                    held = (id(call.owner if connection is None else connection), str(request_id))
                    self._handling[held] = call
        except Exception as exc:
            report_once("could not start a server span", exc)
            call = None
        if call is None:
            return await wrapped(*args, **kwargs)
        # Our span current (for the handler's code) and our call findable while it runs; the
        # tokens by hand, not a context manager: this runs for every request.
        call_token = ACTIVE_SERVER_CALL.set(call)
        # Set as attach sets it (see CURRENT_CONTEXT); its point's context too.
        call.context = in_span = in_span_context(call.span)
        context_token = otel_context.attach(in_span) if CURRENT_CONTEXT is None else CURRENT_CONTEXT.set(in_span)
        try:
            if around is None:
                result = await wrapped(*args, **kwargs)
            else:
                with around:
                    result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            self._finish(call, outcome, None, exc, _unanswered)
            raise
        finally:
            try:
                CURRENT_CONTEXT.reset(context_token)  # type: ignore[union-attr]
            except Exception:  # not the API's variable, or a reset that fails: detach's own way
                otel_context.detach(context_token)
            ACTIVE_SERVER_CALL.reset(call_token)
            if held is not None:
                self._handling.pop(held, None)
        self._finish(call, outcome, result, None, answer)
        return result

    async def notified(
        self,
        read: Callable[[Any, Any, Any, Any], messages.ServerRequest],
        wrapped: Any,
        owner: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """Run the SDK's handling of one notification (``(dctx, method, params)``, mcp 2.x) inside
        its SERVER span; ``read(owner, dctx, method, params)`` reads it as a request."""
        span = None
        try:
            dctx, method, params = binding.arguments_of(wrapped, args, kwargs, "dctx", "method", "params")
            span = self.notification_span(read(owner, dctx, method, params), owner)
        except Exception as exc:
            report_once("could not start a notification's span", exc)
        if span is None:
            return await wrapped(*args, **kwargs)
        token = otel_context.attach(trace.set_span_in_context(span))
        notification_token = ACTIVE_NOTIFICATION.set(method)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            ACTIVE_NOTIFICATION.reset(notification_token)
            otel_context.detach(token)
            span.end()

    def notification_span(self, incoming: messages.ServerRequest, owner: Any) -> Span | None:
        """The SERVER span of a notification ``owner`` received (a server's connection, or a
        client's session from its server), started, or ``None`` for one not traced. Its parent is
        the sender's context in ``params._meta`` (as a request's), else the request it concerns:
        a cancel's, handled here; a progress report's, sent from here (request ids are the
        sender's own: each direction has its own)."""
        method = incoming.method
        if not traced_notification(method, self.settings):
            return None
        request = Request.of(method, incoming.params, self.settings)
        _, parent, links = self._parent_and_links(incoming.meta)
        concerned = messages.concerned_request_id(method, incoming.params)
        span = None
        if concerned is not None and method == METHOD_CANCELLED:
            # Looked up (and let go) whether or not it is the parent.
            span = self._cancelled_span(_cancel_key(incoming.connection, owner, concerned))
        if parent is None and not links:
            if concerned is not None and method != METHOD_CANCELLED:
                span = self._sent_span(owner, concerned)
            parent = trace.set_span_in_context(span, otel_context.Context()) if span is not None else None
        attributes, _ = self._attributes(incoming, request)
        return self._lifecycle.notification(SpanKind.SERVER, request, attributes, parent=parent, links=links)

    def _cancelled_span(self, key: tuple[int, str]) -> Span | None:
        """The span of the call a cancel received is about: still handled, or ended already (its
        front end applied the cancel first: :meth:`cancel_to_come`)."""
        handled = self._handling.get(key)
        if handled is not None:
            handled.cancel_seen = True
            return handled.span
        return self._cancels_to_come.pop(key, None)

    def cancel_to_come(self, call: ServerCall, connection: Any, request_id: Any) -> None:
        """The peer cancelled ``call`` (request ``request_id`` on ``connection``, as in its
        :class:`~mcp_otel.model.messages.ServerRequest`) and the SDK applied the cancel before handing
        its notification on (mcp 2.x's dispatcher: the call may end first): that notification's
        span still finds the call's. Kept until it comes, at most :data:`MAX_CANCELS_TO_COME` (one
        that never comes is let go when full)."""
        if call.cancel_seen or request_id.__class__ not in (int, str):
            return
        if len(self._cancels_to_come) >= MAX_CANCELS_TO_COME:
            self._cancels_to_come.clear()
        self._cancels_to_come[_cancel_key(connection, call.owner, request_id)] = call.span

    def refused(self, incoming: messages.ServerRequest, code: int) -> None:
        """A request the SDK answered ``code`` before any handler saw it (mcp 1.x: params it could
        not validate): its SERVER span, opened and finished at once with that answer."""
        try:
            request = Request.of(incoming.method, incoming.params, self.settings)  # its names, bounded
            _, parent, links = self._parent_and_links(incoming.meta)
            attributes, metric_attributes = self._attributes(incoming, request)
            call = self._lifecycle.open(
                ServerCall, SpanKind.SERVER, request, attributes, metric_attributes, parent=parent, links=links
            )
            error = RpcError(code, "")
            self._lifecycle.finish(call, lambda: classify_server_call(rpc_error=error, method=request.method))
        except Exception as exc:
            report_once("could not record a request the SDK refused", exc)

    def _call(self, incoming: messages.ServerRequest, owner: Any, dispatch: Any) -> ServerCall:
        request = Request.of(incoming.method, incoming.params, self.settings)
        remote_span, parent, links = self._parent_and_links(incoming.meta)
        attributes, metric_attributes = self._attributes(incoming, request)
        span_attributes = attributes
        if (
            self.settings.capture_content
            and request.is_tool_call
            and (content := arguments_attributes(field(incoming.params, "arguments"), self.settings))
        ):
            span_attributes = {**span_attributes, **content}
        responses = incoming.input_responses  # a 2026-07-28 round's answers (mcp 1.x: none)
        if responses is not None and (answers := round_attributes(responses)):
            span_attributes = {**span_attributes, **answers}
        call = self._lifecycle.open(
            ServerCall, SpanKind.SERVER, request, span_attributes, metric_attributes, parent=parent, links=links
        )
        call.attributes, call.owner, call.dispatch = attributes, owner, dispatch
        call.input_declined = responses is not None and declined_in(responses)
        call.remote_span = remote_span
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
        if not self.settings.trust_remote_context:
            return remote_span, None, [Link(remote_span)]
        # No current span (most requests): nothing to link (current_span, inline: every request).
        if CURRENT_CONTEXT is not None and SPAN_KEY is not None and CURRENT_CONTEXT.get().get(SPAN_KEY) is None:
            return remote_span, remote, []
        ambient_span = current_span()
        if ambient_span is trace.INVALID_SPAN:
            return remote_span, remote, []
        ambient = ambient_span.get_span_context()
        links = [Link(ambient)] if ambient.is_valid and ambient.span_id != remote_span.span_id else []
        return remote_span, remote, links

    def _attributes(
        self, incoming: messages.ServerRequest, request: Request
    ) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """The request's span and metric attributes: what its connection says, then its own id."""
        peer: tuple[str, ...] | tuple[str | None, int | None] | None
        if incoming.http_request is not None:
            peer = messages.http_peer(incoming.http_request)
        else:
            transport = self._transports.lookup(incoming.write_stream)
            peer = None if transport is None else (transport.network_transport,)
        facts = (incoming.server_name, incoming.server_version, incoming.protocol_version, incoming.session_id)
        key = (request, facts, peer)
        attributes, metric_attributes = self._cache.get(key) or self._cache.put(
            key, self._connection_attributes(incoming, request, peer)
        )
        request_id = incoming.request_id
        if request_id.__class__ is int or request_id.__class__ is str:  # no bool, nor a peer's odd id
            # A copy with it: the cached attributes are shared. Bounded only when too long (most ids
            # are short: no call).
            text = str(request_id)
            if len(text) > self.settings.max_name_length:
                text = bounded(text, self.settings.max_name_length)
            attributes = {**attributes, JSONRPC_REQUEST_ID: text}
        return attributes, metric_attributes

    def _connection_attributes(
        self, incoming: messages.ServerRequest, request: Request, peer: Any
    ) -> tuple[dict[str, Any], Mapping[str, Any]]:
        attributes = request_attributes(
            request,
            self.settings,
            server_name=messages.str_or_none(incoming.server_name),
            server_version=messages.str_or_none(incoming.server_version),
            protocol_version=messages.str_or_none(incoming.protocol_version),
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

    def _finish(
        self,
        call: ServerCall,
        outcome: Classify,
        result: Any,
        exc: BaseException | None,
        answer: Callable[[ServerCall, Any], Any],
    ) -> None:
        """``outcome(call, result, exc)`` classifies; ``answer(call, result)`` is what the request
        was answered with (asked only where it is recorded)."""
        capture = self.settings.capture_content and call.method == METHOD_TOOLS_CALL
        late = result_attributes(answer(call, result), self.settings) if capture else {}
        if call.method == METHOD_ELICITATION_CREATE:
            late.update(self._answered_elicitation(call, answer(call, result)))
        self._lifecycle.finish(call, outcome, late, (call, result, exc))

    def declined_answer(self, call: ServerCall, answer: Any, rpc_error: RpcError | None) -> bool:
        """Whether an agent answered its server's input request with the person's no; if so, the
        agent's call in flight that asked for it learns it too."""
        declined = call.method in INPUT_METHODS and is_declined_answer(call.method, answer, rpc_error)
        if declined:
            remote = call.remote_span
            self._input_declined(call.owner, 0 if remote is None else remote.trace_id)
        return declined

    @staticmethod
    def _answered_elicitation(call: ServerCall, result: Any) -> dict[str, Any]:
        """An agent answered its server's elicitation: the person's action goes on the span."""
        action = elicitation_action(result)
        return {MCP_ELICITATION_ACTION: action} if action else {}

    def _stdio_server(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return RegisteringTransport(wrapped(*args, **kwargs), self._transports, TransportInfo(TRANSPORT_PIPE))
