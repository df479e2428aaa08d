"""What mcp-otel knows about the MCP SDK's shapes: the one module that reads its internals.

mcp 1.x and 2.x differ in names and private attributes; every such difference is answered here
by feature checks (never by version numbers), so the patches stay thin and a future SDK change
is fixed in one place. Functions here never raise on an unexpected shape: they return ``None``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import weakref
from collections.abc import Callable, Collection, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from mcp_otel.classify import RpcError

# mcp 1.x ClientSession keeps only capabilities after initialize; we keep the whole result.
_V1_INITIALIZE_RESULTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
# mcp 1.x sessions whose receive loop ended because the peer closed the connection (EOF).
_V1_EOF_SESSIONS: weakref.WeakSet[Any] = weakref.WeakSet()
# mcp 2.x TransportContext.kind values.
_V2_DIRECT = "direct"  # in-process DirectDispatcher: the client's task runs the handler
_V2_MODERN_HTTP = "streamable-http"  # 2026-07-28 HTTP: closing the request's stream is the cancel


@dataclass(frozen=True)
class SessionFacts:
    """What a client session knows about its server, read at call time."""

    protocol_version: str | None = None
    server_name: str | None = None
    server_version: str | None = None


def remember_initialize_result(session: Any, result: Any) -> None:
    """mcp 1.x: keep ``initialize``'s result, which the session itself does not store."""
    _V1_INITIALIZE_RESULTS[session] = result


def session_facts(session: Any) -> SessionFacts:
    # mcp 2.x: public properties, also filled on 2026-era connections that never initialize.
    info = getattr(session, "server_info", None)
    version = getattr(session, "protocol_version", None)
    if info is None and version is None:
        result = _V1_INITIALIZE_RESULTS.get(session)
        if result is None:
            return SessionFacts()
        info = getattr(result, "serverInfo", None)
        version = getattr(result, "protocolVersion", None)
    return SessionFacts(
        protocol_version=_str_or_none(version),
        server_name=_str_or_none(getattr(info, "name", None)),
        server_version=_str_or_none(getattr(info, "version", None)),
    )


def initialize_facts(result: Any) -> SessionFacts:
    """What an ``initialize`` result says of the server (1.x camelCase, 2.x snake_case)."""
    info = getattr(result, "server_info", None) or getattr(result, "serverInfo", None)
    version = getattr(result, "protocol_version", None) or getattr(result, "protocolVersion", None)
    return SessionFacts(
        protocol_version=_str_or_none(version),
        server_name=_str_or_none(getattr(info, "name", None)),
        server_version=_str_or_none(getattr(info, "version", None)),
    )


def next_request_id(session: Any) -> int | None:
    """mcp 1.x: the id ``send_request`` will take, read just before ``call_tool`` runs.

    ``call_tool`` reaches the id allocation without awaiting, so this is the call's id. mcp 2.x
    allocates inside its dispatcher; the client patch reads the id there instead.
    """
    if getattr(session, "_dispatcher", None) is not None:
        return None
    value = getattr(session, "_request_id", None)
    return value if isinstance(value, int) else None


def session_write_stream(session: Any) -> Any:
    """The stream the session writes requests to (the key of the transport registry)."""
    dispatcher = getattr(session, "_dispatcher", None)
    owner = dispatcher if dispatcher is not None else session
    return getattr(owner, "_write_stream", None)


def fastmcp_spans_suppressed() -> Any:
    """fastmcp's own scoped switch that turns its spans off (``suppress_fastmcp_telemetry``), or a
    no-op where fastmcp is not loaded (then it makes no spans)."""
    telemetry = sys.modules.get("fastmcp.telemetry")
    suppress = getattr(telemetry, "suppress_fastmcp_telemetry", None)
    return suppress() if suppress is not None else nullcontext()


def abandon_reason(exc: BaseException) -> str | None:
    """Why a client stopped waiting for a call, as mcp 2.x words it in its courtesy cancel: the
    caller cancelled, or the SDK's read timeout expired. ``None`` for any other ending (and for a
    closed coroutine, which can no longer send anything)."""
    if isinstance(exc, GeneratorExit):
        return None
    if is_cancellation(exc):
        return "caller cancelled"
    error = rpc_error_of(exc)
    if error is not None and error.code == 408:  # mcp 1.x read timeout
        return "timed out"
    return None


def v1_cancel_notification(request_id: Any, reason: str) -> Any:
    """An mcp 1.x ``notifications/cancelled`` for ``request_id``."""
    types: Any = importlib.import_module("mcp.types")  # typed against whichever major is installed
    params = types.CancelledNotificationParams(requestId=request_id, reason=reason)
    return types.ClientNotification(types.CancelledNotification(params=params))


def v1_method_and_params(request: Any) -> tuple[Any, Any]:
    """mcp 1.x: the method and typed params of a request (``ClientRequest``/``ServerRequest``
    wrap the request in ``.root``)."""
    root = getattr(request, "root", request)
    return getattr(root, "method", None), getattr(root, "params", None)


def is_client_session(session: Any) -> bool:
    """The session is a client's (mcp 1.x sends both sides' requests through ``BaseSession``)."""
    module = sys.modules.get("mcp.client.session")
    client_session = getattr(module, "ClientSession", None)
    return isinstance(client_session, type) and isinstance(session, client_session)


def v1_with_meta(request: Any, carrier: Mapping[str, str]) -> Any:
    """A copy of an mcp 1.x request with ``carrier`` added to ``params._meta`` (the caller's
    request is not changed)."""
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


def cancelled_request_id(notification: Any) -> Any:
    """The request id a ``notifications/cancelled`` names, or ``None`` for other notifications."""
    root = getattr(notification, "root", notification)  # mcp 1.x wraps it in ClientNotification
    if getattr(root, "method", None) != "notifications/cancelled":
        return None
    params = getattr(root, "params", None)
    request_id = getattr(params, "request_id", None)  # mcp 2.x
    if request_id is None:
        request_id = getattr(params, "requestId", None)  # mcp 1.x
    return request_id


@dataclass(frozen=True)
class ServerRequest:
    """What the receiver patches read about one incoming request, on either major and side."""

    method: Any
    params: Any  # a wire dict (2.x) or the typed params (1.x)
    request_id: Any
    meta: Any  # params._meta as the SDK holds it (a dict, or a 1.x pydantic model)
    protocol_version: str | None
    session_id: str | None
    http_request: Any  # the Starlette request on HTTP transports, else None
    server_name: str | None
    server_version: str | None
    write_stream: Any  # the connection's write stream (the transport registry's key)


def v1_server_request(server: Any, responder: Any, request: Any, session: Any) -> ServerRequest:
    """mcp 1.x ``Server._handle_request``: a request a server handles."""
    client_params = getattr(session, "client_params", None)
    return _v1_received(
        request,
        responder,
        session,
        protocol_version=getattr(client_params, "protocolVersion", None),
        server_name=getattr(server, "name", None),
        server_version=getattr(server, "version", None),
    )


def v1_initialize_request(session: Any, responder: Any) -> ServerRequest | None:
    """mcp 1.x ``ServerSession._received_request``: the ``initialize`` it answers itself (``None``
    for the other requests, which go on to ``Server._handle_request``)."""
    request = getattr(getattr(responder, "request", None), "root", None)
    if getattr(request, "method", None) != "initialize":
        return None
    options = getattr(session, "_init_options", None)
    return _v1_received(
        request,
        responder,
        session,
        protocol_version=getattr(getattr(request, "params", None), "protocolVersion", None),
        server_name=getattr(options, "server_name", None),
        server_version=getattr(options, "server_version", None),
    )


def v1_client_received_request(session: Any, responder: Any) -> ServerRequest:
    """mcp 1.x ``ClientSession._received_request``: a request a client handles from its server."""
    facts = session_facts(session)
    return _v1_received(
        getattr(getattr(responder, "request", None), "root", None),
        responder,
        session,
        protocol_version=facts.protocol_version,
        server_name=facts.server_name,
        server_version=facts.server_version,
    )


def _v1_received(
    request: Any, responder: Any, session: Any, *, protocol_version: Any, server_name: Any, server_version: Any
) -> ServerRequest:
    metadata = getattr(responder, "message_metadata", None)
    http_request = getattr(metadata, "request_context", None)
    return ServerRequest(
        method=getattr(request, "method", None),
        params=getattr(request, "params", None),
        request_id=getattr(responder, "request_id", None),
        meta=getattr(responder, "request_meta", None),
        protocol_version=_str_or_none(protocol_version),
        session_id=_header(http_request, "mcp-session-id"),
        http_request=http_request,
        server_name=_str_or_none(server_name),
        server_version=_str_or_none(server_version),
        write_stream=getattr(session, "_write_stream", None),
    )


def v2_server_request(runner: Any, dctx: Any, method: Any, params: Any) -> ServerRequest:
    """mcp 2.x ``ServerRunner._on_request``: a request a server handles."""
    connection = getattr(runner, "connection", None)
    server = getattr(runner, "server", None)
    return _v2_received(
        dctx,
        method,
        params,
        protocol_version=getattr(connection, "protocol_version", None),
        session_id=getattr(connection, "session_id", None),
        server_name=getattr(server, "name", None),
        server_version=getattr(server, "version", None),
    )


def v2_client_received_request(session: Any, dctx: Any, method: Any, params: Any) -> ServerRequest:
    """mcp 2.x ``ClientSession._on_request``: a request a client handles from its server."""
    facts = session_facts(session)
    return _v2_received(
        dctx,
        method,
        params,
        protocol_version=facts.protocol_version,
        session_id=None,
        server_name=facts.server_name,
        server_version=facts.server_version,
    )


def _v2_received(
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
    return ServerRequest(
        method=method,
        params=params,
        request_id=getattr(dctx, "request_id", None),
        meta=params.get("_meta"),
        protocol_version=_str_or_none(protocol_version),
        session_id=_str_or_none(session_id),
        http_request=http_request,
        server_name=_str_or_none(server_name),
        server_version=_str_or_none(server_version),
        write_stream=getattr(getattr(dctx, "_dispatcher", None), "_write_stream", None),
    )


# The longest propagation value read from params._meta: W3C baggage's own limit (traceparent is 55
# characters). A peer's longer value is not read at all.
MAX_CARRIER_VALUE = 8192


def meta_carrier(meta: Any, fields: Collection[str]) -> dict[str, str]:
    """The entries of ``params._meta`` a propagator reads (its ``fields``): strings of bounded
    length only. A peer's ``_meta`` can be anything, any size, with any number of keys."""
    if meta is not None and not isinstance(meta, Mapping):
        meta = getattr(meta, "model_extra", None)  # mcp 1.x RequestParams.Meta keeps extras here
    if not isinstance(meta, Mapping):
        return {}
    carrier = {}
    for field in fields:
        value = meta.get(field)
        if isinstance(value, str) and len(value) <= MAX_CARRIER_VALUE:
            carrier[field] = value
    return carrier


def http_peer(http_request: Any) -> tuple[str | None, int | None]:
    """Client address and port of a Starlette request."""
    client = getattr(http_request, "client", None)
    host, port = getattr(client, "host", None), getattr(client, "port", None)
    return _str_or_none(host), port if isinstance(port, int) else None


def v1_peer_cancelled(responder: Any) -> bool:
    """mcp 1.x: the client's notifications/cancelled reached this request before its answer."""
    return getattr(responder, "cancelled", False) is True


def mark_v1_eof(session: Any) -> None:
    _V1_EOF_SESSIONS.add(session)


def v1_transport_closed(session: Any) -> bool:
    return session in _V1_EOF_SESSIONS


def v2_peer_cancelled(dctx: Any) -> bool:
    """mcp 2.x: the client's notifications/cancelled arrived (the SDK then suppresses the answer)."""
    event = getattr(dctx, "cancel_requested", None)
    return bool(event is not None and event.is_set())


def v2_direct(dctx: Any) -> bool:
    """mcp 2.x direct path: a cancel there is the calling client's own task being cancelled."""
    return getattr(getattr(dctx, "transport", None), "kind", None) == _V2_DIRECT


def v2_transport_closed(dctx: Any) -> bool:
    """mcp 2.x: the connection is gone. The JSON-RPC dispatcher marks EOF before it cancels the
    in-flight handlers (a shutdown cancels them with the dispatcher still open); on 2026-07-28
    HTTP the handler is cancelled only when the client closed the request's stream."""
    if getattr(getattr(dctx, "transport", None), "kind", None) == _V2_MODERN_HTTP:
        return True
    return getattr(getattr(dctx, "_dispatcher", None), "_closed", False) is True


# mcp 1.x: what a client session's receive loop answers when the agent's callback raised.
V1_CALLBACK_CRASH_CODE = -32602


def v1_handler_answer(exc: BaseException) -> RpcError:
    """The error mcp 1.x answers a handler exception with (``McpError``: its own; else code 0)."""
    return rpc_error_of(exc) or RpcError(0, str(exc))


def v2_handler_answer(runner: Any, exc: BaseException) -> RpcError:
    """The error mcp 2.x answers a handler exception with: its MCP error carries its own, a
    pydantic ValidationError is -32602; anything else is -32603 "Internal server error" on
    2026-07-28 connections and the direct path, code 0 with the message in the handshake era."""
    error = rpc_error_of(exc)
    if error is not None:
        return error
    if type(exc).__name__ == "ValidationError" and type(exc).__module__.startswith("pydantic"):
        return RpcError(-32602, "Invalid request parameters")
    version = getattr(getattr(runner, "connection", None), "protocol_version", None)
    if version in _v2_modern_versions():
        return RpcError(-32603, "Internal server error")
    return RpcError(0, str(exc))


def rpc_error_of(exc: BaseException) -> RpcError | None:
    """Code and message when ``exc`` is the SDK's MCP error (1.x McpError, 2.x MCPError)."""
    if not isinstance(exc, _mcp_error_classes()):
        return None
    return rpc_error_from(getattr(exc, "error", None))


@lru_cache(maxsize=1)
def _v2_modern_versions() -> tuple[str, ...]:
    try:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    except ImportError:
        return ()
    return tuple(MODERN_PROTOCOL_VERSIONS)


def rpc_error_from(error: Any) -> RpcError | None:
    """Code and message of an ``ErrorData``."""
    code = getattr(error, "code", None)
    if not isinstance(code, int):
        return None
    message = getattr(error, "message", "")
    return RpcError(code, message if isinstance(message, str) else "")


def is_cancellation(exc: BaseException) -> bool:
    """``exc`` is the running async library's cancellation, or the awaiting coroutine was closed."""
    if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
        return True
    try:
        import anyio

        return isinstance(exc, anyio.get_cancelled_exc_class())
    except Exception:  # no async library running (cannot happen inside a coroutine we wrap)
        return False


def is_transport_closed(exc: BaseException) -> bool:
    """``exc`` says the other end of the transport is gone (raised before any response)."""
    try:
        import anyio

        stream_errors: tuple[type[BaseException], ...] = (
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            anyio.EndOfStream,
        )
    except ImportError:
        stream_errors = ()
    return isinstance(exc, (*stream_errors, BrokenPipeError, ConnectionResetError))


@dataclass(frozen=True)
class HttpEndpoint:
    """Where an HTTP transport connects, and how to read its MCP session id at call time."""

    address: str | None
    port: int | None
    session_id: Callable[[], str | None]


def http_endpoint(transport: Any) -> HttpEndpoint | None:
    """From a ``StreamableHTTPTransport`` (both majors): url and the ``Mcp-Session-Id`` it holds."""
    url = getattr(transport, "url", None)
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None
    return HttpEndpoint(parts.hostname, port, lambda: _str_or_none(getattr(transport, "session_id", None)))


def transport_streams(yielded: Any) -> Any:
    """The write stream in what a client transport context manager yields: ``(read, write, ...)``."""
    if isinstance(yielded, tuple) and len(yielded) >= 2:
        return yielded[1]
    return None


@dataclass(frozen=True)
class ArgumentSlot:
    """Where one parameter of a method arrives: by position (after ``self``) or by keyword."""

    name: str
    position: int | None  # None: keyword-only

    def get(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        if self.name in kwargs:
            return kwargs[self.name]
        if self.position is not None and self.position < len(args):
            return args[self.position]
        return None

    def replace(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], value: Any
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.name not in kwargs and self.position is not None and self.position < len(args):
            return (*args[: self.position], value, *args[self.position + 1 :]), kwargs
        return args, {**kwargs, self.name: value}


def plain_function(wrapped: Any) -> Any:
    """The function behind a bound method: the key of the signature cache (it holds no instance)."""
    return getattr(wrapped, "__func__", wrapped)


def arguments_of(wrapped: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], *names: str) -> tuple[Any, ...]:
    """The values of parameters ``names`` in a call of ``wrapped`` (``None`` where absent)."""
    function = plain_function(wrapped)
    values = []
    for name in names:
        slot = argument_slot(function, name)
        values.append(slot.get(args, kwargs) if slot is not None else None)
    return tuple(values)


@lru_cache(maxsize=32)
def argument_slot(method: Callable[..., Any], name: str) -> ArgumentSlot | None:
    """The slot of parameter ``name`` of ``method``, from its signature (``None`` if it has none).

    Callers pass the plain function (``bound.__func__``), so the cache holds no instance.
    """
    parameters = list(inspect.signature(method).parameters.values())[1:]  # drop self
    for index, parameter in enumerate(parameters):
        if parameter.name != name:
            continue
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            return ArgumentSlot(name, None)
        if parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            return ArgumentSlot(name, index)
    return None


@lru_cache(maxsize=1)
def _mcp_error_classes() -> tuple[type[BaseException], ...]:
    try:
        from mcp.shared import exceptions
    except ImportError:
        return ()
    names = ("McpError", "MCPError")  # 1.x, 2.x (2.x has no McpError alias)
    return tuple(cls for name in names if isinstance(cls := getattr(exceptions, name, None), type))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _header(http_request: Any, name: str) -> str | None:
    headers = getattr(http_request, "headers", None)
    try:
        return _str_or_none(headers.get(name)) if headers is not None else None
    except Exception:
        return None
