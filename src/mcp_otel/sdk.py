"""What mcp-otel knows about the MCP SDK's shapes: the one module that reads its internals.

mcp 1.x and 2.x differ in names and private attributes; every such difference is answered here
by feature checks (never by version numbers), so the patches stay thin and a future SDK change
is fixed in one place. Functions here never raise on an unexpected shape: they return ``None``.
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from mcp_otel.classify import RpcError

# mcp 1.x ClientSession keeps only capabilities after initialize; we keep the whole result.
_V1_INITIALIZE_RESULTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


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


def rpc_error_of(exc: BaseException) -> RpcError | None:
    """Code and message when ``exc`` is the SDK's MCP error (1.x McpError, 2.x MCPError)."""
    if not isinstance(exc, _mcp_error_classes()):
        return None
    error = getattr(exc, "error", None)
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
