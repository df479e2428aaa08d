"""The mcp 1.x front end: its patch table, and the only code that reads mcp 1.x's internals.

Where mcp 1.x sends and handles requests: both sides send through ``BaseSession.send_request``
(and ``send_notification``); servers handle in ``Server._handle_request`` (looked up at call
time, so servers built before ``instrument()`` are covered), except ``initialize``, which
``ServerSession`` answers itself; clients handle their server's requests in
``ClientSession._received_request``. ``RequestResponder.respond`` tells what was answered, the
responder whether the peer cancelled, the session's read stream whether the peer hung up. The
typed requests' ``.root`` and ``params._meta``, and ``BaseSession``'s request ids, are read
here too. Each hook hands what it learns to the side it feeds (:mod:`mcp_otel.instrumentation.client`,
:mod:`mcp_otel.instrumentation.server`).

Over 400 lines: a front end is the only module that reads its SDK's shapes (docs/architecture.md),
so mcp 1.x's whole patch table and every reader of its shapes stay together.
"""

from __future__ import annotations

import importlib
import logging
import weakref
from collections.abc import Callable, Mapping
from functools import cache, lru_cache, partial
from typing import Any

from mcp_otel.instrumentation import binding
from mcp_otel.instrumentation.client import ACTIVE_CALL, SENDING, ClientCall, Started
from mcp_otel.instrumentation.frontends.sdk import SdkFrontEnd
from mcp_otel.instrumentation.patching import Patch, Wrapper
from mcp_otel.instrumentation.server import ACTIVE_SERVER_CALL, RequestFacts, ServerCall
from mcp_otel.model import messages
from mcp_otel.model.classify import RpcError, classify_answer, classify_callback_crash, classify_server_call, unfinished
from mcp_otel.model.fields import field
from mcp_otel.model.messages import ServerRequest, SessionFacts, rpc_error_of, session_facts, str_or_none
from mcp_otel.model.outcome import Verdict
from mcp_otel.model.safety import report_once
from mcp_otel.semconv import INPUT_METHODS, METHOD_INITIALIZE, METHOD_TOOLS_CALL

_new_tuple = tuple.__new__  # a NamedTuple made as its own __new__ makes it (see _received)
_UNREAD: Any = object()  # a field not read (see _handled_request)


def cancel_notification(request_id: Any, reason: str) -> Any:
    """An mcp 1.x ``notifications/cancelled`` for ``request_id``."""
    types: Any = importlib.import_module("mcp.types")  # typed against whichever major is installed
    params = types.CancelledNotificationParams(requestId=request_id, reason=reason)
    return types.ClientNotification(types.CancelledNotification(params=params))


def method_and_params(request: Any) -> tuple[Any, Any]:
    """mcp 1.x: the method and typed params of a request (``ClientRequest``/``ServerRequest``
    wrap the request in ``.root``)."""
    root = getattr(request, "root", request)
    return getattr(root, "method", None), getattr(root, "params", None)


def with_meta(request: Any, carrier: Mapping[str, str]) -> Any:
    """A copy of an mcp 1.x request (or notification) with ``carrier`` added to ``params._meta``
    (the caller's is not changed)."""
    root = getattr(request, "root", request)
    params = root.params
    if params is None:
        # No params object to copy (ping, a list without cursor): rebuild the request with one.
        data = root.model_dump(by_alias=True, mode="json", exclude_none=True)
        data.setdefault("params", {})["_meta"] = dict(carrier)
        new_root = type(root).model_validate(data)
    else:
        meta = params.meta
        entries = meta.model_dump(by_alias=True, exclude_none=True) if meta is not None else {}
        new_meta = type(params).Meta(**{**entries, **carrier})
        new_root = root.model_copy(update={"params": params.model_copy(update={"meta": new_meta})})
    return new_root if root is request else type(request)(new_root)


def initialize_request(session: Any, responder: Any) -> ServerRequest | None:
    """mcp 1.x ``ServerSession._received_request``: the ``initialize`` it answers itself (``None``
    for the other requests, which go on to ``Server._handle_request``)."""
    request = getattr(getattr(responder, "request", None), "root", None)
    if getattr(request, "method", None) != "initialize":
        return None
    options = getattr(session, "_init_options", None)
    return _received(
        request,
        responder,
        session,
        protocol_version=_agreed(getattr(getattr(request, "params", None), "protocolVersion", None)),
        server_name=getattr(options, "server_name", None),
        server_version=getattr(options, "server_version", None),
    )


def client_received_request(session: Any, responder: Any) -> ServerRequest:
    """mcp 1.x ``ClientSession._received_request``: a request a client handles from its server."""
    facts = session_facts(session)
    return _received(
        getattr(getattr(responder, "request", None), "root", None),
        responder,
        session,
        protocol_version=facts.protocol_version,
        server_name=facts.server_name,
        server_version=facts.server_version,
    )


def _received(
    request: Any, responder: Any, session: Any, protocol_version: Any, server_name: Any, server_version: Any
) -> ServerRequest:
    metadata = getattr(responder, "message_metadata", None)
    http_request = getattr(metadata, "request_context", None)
    # Every field by position, made as the NamedTuple's own __new__ makes it (tuple.__new__), without
    # that Python call (every request a server handles).
    return _new_tuple(
        ServerRequest,
        (
            getattr(request, "method", None),  # method
            getattr(request, "params", None),  # params
            getattr(responder, "request_id", None),  # request_id
            getattr(responder, "request_meta", None),  # meta
            protocol_version,
            None if http_request is None else _header(http_request, "mcp-session-id"),  # session_id
            http_request,
            server_name,
            server_version,
            getattr(session, "_write_stream", None),  # write_stream
            None,  # input_responses (mcp 1.x has none)
            None,  # connection (the session is one per connection)
        ),
    )


def transport_closed(session: Any) -> bool:
    """The peer closed the connection: the transport closed its end of the session's read stream
    (an anyio memory stream on every mcp 1.x transport), so nothing more can arrive (EOF). A
    session shut down by its own side leaves that end open."""
    try:
        return session._read_stream.statistics().open_send_streams == 0  # type: ignore[no-any-return]
    except Exception:  # another kind of stream: not known
        return False


# mcp 1.x: what a client session's receive loop answers when the agent's callback raised.
CALLBACK_CRASH_CODE = -32602


def handler_answer(exc: BaseException) -> RpcError:
    """The error mcp 1.x answers a handler exception with (``McpError``: its own; else code 0)."""
    return rpc_error_of(exc) or RpcError(0, str(exc))


# What mcp 1.x answers a request whose params it cannot validate (its receive loop).
INVALID_PARAMS_CODE = -32602


class Validated:
    """A session's validator of what it receives (mcp 1.x ``_receive_request_type``,
    ``_receive_notification_type``: a pydantic model class), telling of each message it validates
    (``valid``) or refuses (``invalid``, with the message as received) before the session acts on
    it; the same result or exception either way. Everything else is the model class's own."""

    __slots__ = ("_invalid", "_model", "_valid", "_validate")

    def __init__(self, model: Any, valid: Callable[[Any], None] | None, invalid: Callable[[Any], None] | None) -> None:
        self._model, self._valid, self._invalid = model, valid, invalid
        # Bound once (every message the session receives is validated here).
        self._validate = model.model_validate

    def model_validate(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            # The SDK passes the message alone: no arguments forwarded (a tuple and a dict built).
            validated = self._validate(obj, *args, **kwargs) if args or kwargs else self._validate(obj)
        except Exception:
            if self._invalid is not None:
                _quietly(self._invalid, obj)
            raise
        if self._valid is not None:
            _quietly(self._valid, validated)
        return validated

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def _quietly(observe: Callable[[Any], None], message: Any) -> None:
    """Our bookkeeping of a received message: never in the session's way."""
    try:
        observe(message)
    except Exception as exc:
        report_once("could not observe a received message", exc)


def _session_received(session: Any, method: Any, params: Any, request_id: Any) -> ServerRequest:
    """A message a session received, read as a request (a notification has no id)."""
    facts = server_session_facts(session) or session_facts(session)
    return ServerRequest(  # by position (see ServerRequest)
        method,
        params,
        request_id,
        field(params, "_meta") if isinstance(params, Mapping) else getattr(params, "meta", None),  # meta
        facts.protocol_version,
        None,  # session_id (the HTTP request's header is not at hand here)
        None,  # http_request
        facts.server_name,
        facts.server_version,
        getattr(session, "_write_stream", None),  # write_stream
    )


@cache
def _protocol_versions() -> tuple[frozenset[str], str | None]:
    """mcp 1.x's supported protocol versions and its latest (read once)."""
    try:
        supported = importlib.import_module("mcp.shared.version").SUPPORTED_PROTOCOL_VERSIONS
        latest = importlib.import_module("mcp.types").LATEST_PROTOCOL_VERSION
    except (ImportError, AttributeError):
        return frozenset(), None
    return frozenset(supported), str(latest)


@lru_cache(maxsize=16)  # per request on the server: a C-level lookup; bounded (versions come from peers)
def _agreed(requested: Any) -> str | None:
    """The version an mcp 1.x server agrees with a client that asked for ``requested``: the SDK's
    own rule (``ServerSession``: the version asked for if it supports it, else its latest), so a
    client asking a newer one (rmcp asks 2026-07-28) reads what the server answered."""
    version = str_or_none(requested)
    supported, latest = _protocol_versions()
    if version is None or version in supported or latest is None:
        return version
    return latest


def server_session_facts(session: Any) -> SessionFacts | None:
    """A ``ServerSession``'s server and negotiated protocol (``None`` for anything else)."""
    options = getattr(session, "_init_options", None)
    if options is None:
        return None
    client_params = getattr(session, "client_params", None)
    return SessionFacts(
        protocol_version=_agreed(getattr(client_params, "protocolVersion", None)),
        server_name=str_or_none(getattr(options, "server_name", None)),
        server_version=str_or_none(getattr(options, "server_version", None)),
    )


class Mcp1FrontEnd(SdkFrontEnd):
    """mcp 1.x's hooks."""

    def patches(self) -> list[Patch]:
        return [
            # Both sides send through BaseSession; inside call_tool too (an inner patch).
            Patch("mcp.shared.session", "BaseSession.send_request", self._send_request, optional=True, inner=True),
            Patch(
                "mcp.shared.session",
                "BaseSession.send_notification",
                partial(self._client.send_notification, carry=with_meta),
                optional=True,
            ),
            # The handler returns nothing: the answer is what respond() was given. The SDK's own
            # (private) step of every request a server handles: a plain function (inner).
            Patch(
                "mcp.server.lowlevel.server",
                "Server._handle_request",
                self._handling(_handled_request),
                optional=True,
                inner=True,
            ),
            Patch(
                "mcp.client.session",
                "ClientSession._received_request",
                self._handling(_client_received_request),
                optional=True,
            ),
            # Inside _handle_request (an inner patch).
            Patch("mcp.shared.session", "RequestResponder.respond", self._respond, optional=True, inner=True),
            # Sessions, both sides.
            Patch("mcp.shared.session", "BaseSession.__aenter__", self._session_enter, optional=True),
            Patch("mcp.shared.session", "BaseSession.__aexit__", self._session_exit, optional=True),
        ]

    # --- what a session receives -------------------------------------------------------------

    async def _session_enter(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A session opens: its validators of what it receives are observed (before its receive
        loop starts), then its duration starts."""
        try:
            session = weakref.ref(instance)
            instance._receive_notification_type = Validated(
                instance._receive_notification_type, partial(self._notification_received, session), None
            )
            if not messages.is_client_session(instance):
                instance._receive_request_type = Validated(
                    instance._receive_request_type, None, partial(self._request_refused, session)
                )
        except Exception as exc:
            report_once("could not observe what a session receives", exc)
        return await self._sessions.enter(wrapped, instance, args, kwargs)

    def _notification_received(self, session_ref: Callable[[], Any], notification: Any) -> None:
        """A notification the session validated, about to be acted on: its SERVER span (mcp 1.x
        hands a notification to no function of its own: a cancel is applied in the receive loop)."""
        session = session_ref()
        if session is None:
            return
        method, params = messages.notification_of(notification)
        span = self._server.notification_span(_session_received(session, method, params, None), session)
        if span is not None:
            span.end()

    def _request_refused(self, session_ref: Callable[[], Any], message: Any) -> None:
        """A request whose params the server session could not validate: mcp 1.x answers it
        -32602 at once, before any handler (so before any patch of ours) sees it."""
        session = session_ref()
        if session is None or not isinstance(message, Mapping):
            return
        incoming = _session_received(session, message.get("method"), message.get("params"), message.get("id"))
        self._server.refused(incoming, INVALID_PARAMS_CODE)

    # --- requests sent ------------------------------------------------------------------------

    def _send_request(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        active = ACTIVE_CALL.get()
        # On mcp 1.x only call_tool's wrapper sets ACTIVE_CALL (no logical calls, no rounds).
        if (
            active is not None
            and not active.sent
            and active.session is instance
            and args
            and getattr(getattr(args[0], "root", None), "method", None) == METHOD_TOOLS_CALL
        ):
            # call_tool's own tools/call, which it awaits at once: its span is call_tool's. Told
            # here, before the SDK's coroutine exists, so that this send (every tool call
            # makes one) costs no coroutine of ours.
            active.sent = True
            self._note_request_id(active, instance)
            return wrapped(*args, **kwargs)
        return self._client.traced(self._start_send, SENDING, wrapped, instance, args, kwargs)

    def _start_send(self, wrapped: Any, session: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Started:
        def describe() -> tuple[Any, Any]:
            (request,) = binding.arguments_of(wrapped, args, kwargs, "request")
            return method_and_params(request)

        # Both sides send through BaseSession: which one this is, asked only for a span of its own.
        call = self._client.start_request(session, describe, from_server=None)
        if call is None:
            active = ACTIVE_CALL.get()
            if active is not None and active.session is session and active.sent and active.request_id is None:
                self._note_request_id(active, session)  # call_tool's own request, passed by keyword
            return None, args, kwargs
        self._note_request_id(call, session)
        return (call, *self._with_trace_context(wrapped, call, args, kwargs))

    def _note_request_id(self, call: ClientCall, session: Any) -> None:
        """The id ``send_request`` is about to take: the session's next one, read just before it
        runs (it takes it before it first awaits)."""
        try:
            request_id = getattr(session, "_request_id", None)
            if request_id.__class__ is int:
                call.v1_request_id = request_id
                self._client.note_request_id(call, request_id)
        except Exception as exc:  # the span is still useful without it
            report_once("could not note the request id", exc)

    def _with_trace_context(
        self, wrapped: Any, call: ClientCall, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The request with our span's context in ``params._meta`` (a copy: the caller's request
        is not changed)."""
        if not self._client.settings.propagate:
            return args, kwargs
        try:
            slot = binding.slot_of(wrapped, "request")
            request = slot.get(args, kwargs) if slot is not None else None
            if slot is None or request is None:
                return args, kwargs
            carrier: dict[str, str] = {}
            self._client.propagator.inject(carrier, call.span)
            return slot.replace(args, kwargs, with_meta(request, carrier)) if carrier else (args, kwargs)
        except Exception as exc:
            report_once("could not inject trace context", exc)
            return args, kwargs

    # --- requests handled ---------------------------------------------------------------------

    def _handling(self, facts: RequestFacts) -> Wrapper:
        """The patch that handles a request inside its SERVER span, ``facts`` reading it."""
        return partial(self._server.handle, facts, self._outcome, _answer)

    def _outcome(self, call: ServerCall, result: Any, exc: BaseException | None) -> Verdict:
        session, responder = call.owner, call.dispatch
        # The client's notifications/cancelled reached this request before its answer (read here,
        # not in a function of its own: every request asks).
        cancelled_by_peer = getattr(responder, "cancelled", False) is True
        if exc is None and not cancelled_by_peer:
            if not call.answered:
                # Returned without answering: 1.12-1.26 swallow a transport-close cancel.
                return classify_server_call(is_cancellation=True, transport_closed=transport_closed(session))
            answer = getattr(call.answer, "root", None)  # a result (an error answer has no root)
            if answer is not None and call.method not in INPUT_METHODS and not call.input_declined:
                # Most requests: a result, and no person's no to weigh (none asked, none declined).
                return classify_answer(answer)
        cancelled = exc is not None and messages.is_cancellation(exc)
        answer_error: RpcError | None
        if exc is not None and not cancelled and messages.is_client_session(session) and rpc_error_of(exc) is None:
            # An agent's callback raised: the session's receive loop answers -32602 for it.
            return classify_callback_crash(type(exc).__qualname__, CALLBACK_CRASH_CODE)
        answer = _answer(call)
        if exc is not None and not cancelled:  # raised only with raise_exceptions=True
            answer_error = handler_answer(exc)
        elif call.answered and answer is call.answer:  # not a result (a ServerResult has .root)
            answer_error = messages.rpc_error_from(call.answer)
        else:
            answer_error = None
        if answer_error is None and not cancelled_by_peer and (result_type := unfinished(answer)) is not None:
            return result_type
        return classify_server_call(
            answer=answer,
            rpc_error=answer_error,
            peer_cancelled=cancelled_by_peer,
            is_cancellation=cancelled,
            transport_closed=cancelled and transport_closed(session),  # read only where it decides
            keep_message=self._server.settings.capture_content,
            answer_declined=self._server.declined_answer(call, answer, answer_error),
            input_declined=call.input_declined,
            method=call.method,
        )

    def _respond(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = ACTIVE_SERVER_CALL.get()
        if call is not None and call.dispatch is instance:
            # Noted before sending: an answer the closed transport drops is still the outcome.
            call.answer = args[0] if args else kwargs.get("response")
            call.answered = True
        elif call is None:
            return self._initialize(wrapped, instance, args, kwargs)
        return wrapped(*args, **kwargs)

    def _initialize(self, wrapped: Any, responder: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``ServerSession`` answers ``initialize`` itself, outside any handler: its span is the
        answer's (what the session does before it, recording the client's parameters, is not a
        step that can fail or wait). Hooked here, not on ``_received_request``, which every
        request passes through."""
        try:
            session = getattr(responder, "_session", None)
            request = initialize_request(session, responder)
        except Exception as exc:
            report_once("could not start a server span", exc)
            request = None
        if request is None:
            return wrapped(*args, **kwargs)
        # The answer goes through this wrapper again, now with the call active, which notes it.
        return self._server.handle(
            lambda *_: (request, session, responder), self._outcome, _answer, responder.respond, responder, args, kwargs
        )

    # --- sessions -----------------------------------------------------------------------------

    async def _session_exit(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        client = messages.is_client_session(instance)
        if client:
            # A server's client closing the connection is the normal end of its session.
            return await self._sessions.exit(
                wrapped, instance, args, kwargs, client=True, server_went_away=transport_closed(instance)
            )

        def server() -> tuple[SessionFacts, Any]:
            return server_session_facts(instance) or messages.NO_FACTS, messages.session_write_stream(instance)

        return await self._sessions.exit(
            wrapped, instance, args, kwargs, client=False, server_went_away=False, server=server
        )


def _handled_request(
    wrapped: Any, server: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[ServerRequest, Any, Any]:
    """``Server._handle_request``'s request (a request a server handles), its session and responder."""
    responder, request, session = binding.arguments_of(wrapped, args, kwargs, "message", "req", "session")
    # ServerSession keeps the client's initialize params in _client_params (its property
    # client_params returns it: a Python call per request); the property where it does not.
    client_params = getattr(session, "_client_params", _UNREAD)
    if client_params is _UNREAD:
        client_params = getattr(session, "client_params", None)
    received = _received(  # by position (every request a server handles)
        request,
        responder,
        session,
        _agreed(getattr(client_params, "protocolVersion", None)),  # protocol_version
        getattr(server, "name", None),  # server_name
        getattr(server, "version", None),  # server_version
    )
    return received, session, responder


def _client_received_request(
    wrapped: Any, session: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[ServerRequest, Any, Any]:
    """``ClientSession._received_request``'s request (from its server), the session and responder."""
    (responder,) = binding.arguments_of(wrapped, args, kwargs, "responder")
    return client_received_request(session, responder), session, responder


def _answer(call: ServerCall, result: Any = None) -> Any:
    """What the request was answered with: what respond() was given, out of its ``RootModel``."""
    return getattr(call.answer, "root", call.answer)


# Seconds a courtesy notifications/cancelled may take before we give up on it.
COURTESY_CANCEL_TIMEOUT = 2.0


async def courtesy_cancel(call: ClientCall, exc: BaseException) -> None:
    """Opt-in (setting ``send_cancel``), clients only: tell the server a request we stopped
    waiting for is cancelled, as mcp 2.x clients do, so it stops the work (and records it as
    cancelled). Shielded from the caller's cancellation and bounded in time. Never for
    ``initialize`` (the specification forbids cancelling it)."""
    try:
        if call.v1_request_id is None or call.method == METHOD_INITIALIZE:
            return
        if not messages.is_client_session(call.session):
            return
        reason = _abandon_reason(exc)
        if reason is None:
            return
        notification = cancel_notification(call.v1_request_id, reason)
        import anyio  # the SDK's async library, there whenever the SDK is (not imported before it)

        with anyio.CancelScope(shield=True), anyio.move_on_after(COURTESY_CANCEL_TIMEOUT):
            await call.session.send_notification(notification)
    except Exception as error:
        report_once("could not send a courtesy cancel", error, logging.DEBUG)


def _abandon_reason(exc: BaseException) -> str | None:
    """Why a client stopped waiting for a call, as mcp 2.x words it in its courtesy cancel: the
    caller cancelled, or the SDK's read timeout expired. ``None`` for any other ending (and for a
    closed coroutine, which can no longer send anything)."""
    if isinstance(exc, GeneratorExit):
        return None
    if messages.is_cancellation(exc):
        return "caller cancelled"
    error = rpc_error_of(exc)
    if error is not None and error.code == 408:  # mcp 1.x read timeout
        return "timed out"
    return None


def _header(http_request: Any, name: str) -> str | None:
    headers = getattr(http_request, "headers", None)
    try:
        return str_or_none(headers.get(name)) if headers is not None else None
    except Exception:
        return None
