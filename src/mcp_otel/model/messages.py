"""What every side reads of an MCP message and what carries it, whichever front end it came from:
session facts and the handshake's answer, JSON-RPC errors, cancellation and cancel
notifications, the request record the receivers read, trace context in ``params._meta``,
headers and transports' endpoints (told apart by a feature check on one object where the two
SDK majors differ). Below the lifecycle: it imports no front end, host or side."""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from mcp_otel.model.classify import RpcError
from mcp_otel.model.fields import field
from mcp_otel.semconv import METHOD_CANCELLED, METHOD_PROGRESS


class SessionFacts(NamedTuple):
    """What a client session knows about its server, read at call time."""

    protocol_version: str | None = None
    server_name: str | None = None
    server_version: str | None = None

    def updated_by(self, newer: SessionFacts) -> SessionFacts:
        """These facts with what ``newer`` knows (what it does not know stays as it was)."""
        return SessionFacts(*(new or old for new, old in zip(newer, self, strict=True)))


NO_FACTS = SessionFacts()
# mcp 1.x ClientSession keeps only capabilities after initialize; we keep what its result says.
_V1_SESSION_FACTS: weakref.WeakKeyDictionary[Any, SessionFacts] = weakref.WeakKeyDictionary()


def remember_initialize_result(session: Any, result: Any) -> None:
    """mcp 1.x: keep what ``initialize``'s result says of the server, which the session itself
    does not store (read once here, not at every request)."""
    _V1_SESSION_FACTS[session] = handshake_facts(result)


def session_facts(session: Any) -> SessionFacts:
    # mcp 2.x: public properties, also filled on 2026-era connections that never initialize.
    info = getattr(session, "server_info", None)
    version = getattr(session, "protocol_version", None)
    if info is None and version is None:
        return _V1_SESSION_FACTS.get(session) or NO_FACTS
    # By position: every request asks, and a NamedTuple's keywords are dear (see ServerRequest).
    return SessionFacts(
        str_or_none(version), str_or_none(getattr(info, "name", None)), str_or_none(getattr(info, "version", None))
    )


# Where a 2026-07-28 server/discover result names the server (optional, display only), and where
# a 2026-07-28 request names its protocol version (the per-request envelope in params._meta).
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"


def envelope_protocol_version(params: Any) -> str | None:
    """The protocol version a 2026-07-28 request's envelope names, if it carries one."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return str_or_none(meta.get(PROTOCOL_VERSION_META_KEY)) if isinstance(meta, Mapping) else None


def handshake_facts(result: Any) -> SessionFacts:
    """What a handshake's answer says of the server: an ``initialize`` result (1.x camelCase, 2.x
    snake_case, or as the wire carries it), or a raw ``server/discover`` result (its ``_meta``
    stamp)."""
    if isinstance(result, Mapping):
        info = result.get("serverInfo")
        if isinstance(info, Mapping):  # initialize, on the wire
            return SessionFacts(
                protocol_version=str_or_none(result.get("protocolVersion")),
                server_name=str_or_none(info.get("name")),
                server_version=str_or_none(info.get("version")),
            )
        meta = result.get("_meta")
        info = meta.get(SERVER_INFO_META_KEY) if isinstance(meta, Mapping) else None
        info = info if isinstance(info, Mapping) else {}
        return SessionFacts(server_name=str_or_none(info.get("name")), server_version=str_or_none(info.get("version")))
    info = getattr(result, "server_info", None) or getattr(result, "serverInfo", None)
    version = getattr(result, "protocol_version", None) or getattr(result, "protocolVersion", None)
    return SessionFacts(
        protocol_version=str_or_none(version),
        server_name=str_or_none(getattr(info, "name", None)),
        server_version=str_or_none(getattr(info, "version", None)),
    )


def session_write_stream(session: Any) -> Any:
    """The stream the session writes requests to (the key of the transport registry)."""
    dispatcher = getattr(session, "_dispatcher", None)
    owner = dispatcher if dispatcher is not None else session
    return getattr(owner, "_write_stream", None)


def is_client_session(session: Any) -> bool:
    """The session is a client's (mcp 1.x sends both sides' requests through ``BaseSession``)."""
    module = sys.modules.get("mcp.client.session")
    client_session = getattr(module, "ClientSession", None)
    return isinstance(client_session, type) and isinstance(session, client_session)


def cancelled_request_id(notification: Any) -> Any:
    """The request id a typed ``notifications/cancelled`` names, or ``None`` for other
    notifications."""
    method, params = notification_of(notification)
    return concerned_request_id(method, params) if method == METHOD_CANCELLED else None


def notification_of(notification: Any) -> tuple[Any, Any]:
    """A typed notification's method and params (mcp 1.x wraps it in a ``RootModel``)."""
    root = getattr(notification, "root", notification)
    return getattr(root, "method", None), getattr(root, "params", None)


def concerned_request_id(method: Any, params: Any) -> Any:
    """The request a notification is about, by its id: ``notifications/cancelled``'s
    ``requestId``, ``notifications/progress``'s ``progressToken`` (both SDKs send a request's own
    id as its token); ``None`` for other notifications. ``params``: a wire dict or a model."""
    if method == METHOD_CANCELLED:
        names = ("requestId", "request_id")
    elif method == METHOD_PROGRESS:
        names = ("progressToken", "progress_token")
    else:
        return None
    for name in names:
        found = field(params, name)
        if found is not None:
            return found
    return None


class ServerRequest(NamedTuple):
    """What the receiver patches read about one incoming request, on either major and side.

    Built once per request, by position: a class called with keywords gets them as a dict, to be
    matched to its ``__new__``'s parameters, about 4,000 instructions more for these (measured
    under cachegrind)."""

    method: Any
    params: Any  # a wire dict (2.x) or the typed params (1.x)
    request_id: Any
    meta: Any  # params._meta as the SDK holds it (a dict, or a 1.x pydantic model)
    # The connection's facts as the SDK holds them (made text where the attributes are built: once
    # per connection, not per request).
    protocol_version: Any
    session_id: str | None
    http_request: Any  # the Starlette request on HTTP transports, else None
    server_name: Any
    server_version: Any
    write_stream: Any  # the connection's write stream (the transport registry's key)
    # A 2026-07-28 round's answers to the previous round's input requests (mcp 2.x; 1.x has none).
    input_responses: Any = None
    # What the connection's messages share, where the owner is not one per connection (mcp 2.x on
    # 2026-07-28: a runner per message): what a cancel's request id is matched in. None: the owner.
    connection: Any = None


# The longest propagation value read from params._meta: W3C baggage's own limit (traceparent is 55
# characters). A peer's longer value is not read at all.
MAX_CARRIER_VALUE = 8192


def meta_entries(meta: Any) -> Mapping[str, Any] | None:
    """``params._meta``'s entries as the SDK holds them (a dict, a 1.x pydantic model's extras, a
    mapping), or ``None``."""
    if meta is None or meta.__class__ is dict:
        return meta
    # mcp 1.x RequestParams.Meta keeps extras in a dict (read without the ``model_extra``
    # property and the ABC check below: each a Python call, for every request).
    extra = getattr(meta, "__pydantic_extra__", None)
    if extra.__class__ is dict:
        return extra
    return meta if isinstance(meta, Mapping) else None


def meta_carrier(entries: Mapping[str, Any], fields: Collection[str]) -> dict[str, str]:
    """The entries of ``params._meta`` (:func:`meta_entries`) a propagator reads (its ``fields``):
    strings of bounded length only. A peer's ``_meta`` can be anything, any size, with any number
    of keys."""
    carrier = {}
    for key in fields:
        value = entries.get(key)
        if isinstance(value, str) and len(value) <= MAX_CARRIER_VALUE:
            carrier[key] = value
    return carrier


def http_peer(http_request: Any) -> tuple[str | None, int | None]:
    """Client address and port of a Starlette request."""
    client = getattr(http_request, "client", None)
    host, port = getattr(client, "host", None), getattr(client, "port", None)
    return str_or_none(host), port if isinstance(port, int) else None


def rpc_error_of(exc: BaseException) -> RpcError | None:
    """Code and message when ``exc`` is the SDK's MCP error (1.x McpError, 2.x MCPError)."""
    if not isinstance(exc, _mcp_error_classes()):
        return None
    return rpc_error_from(getattr(exc, "error", None))


def rpc_error_from(error: Any) -> RpcError | None:
    """Code and message of an ``ErrorData``."""
    code = field(error, "code")
    if not isinstance(code, int):
        return None
    message = field(error, "message")
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
    return HttpEndpoint(parts.hostname, port, lambda: str_or_none(getattr(transport, "session_id", None)))


def transport_streams(yielded: Any) -> Any:
    """The write stream in what a client transport context manager yields: ``(read, write, ...)``."""
    if isinstance(yielded, tuple) and len(yielded) >= 2:
        return yielded[1]
    return None


def task_id_of(result: Any) -> str | None:
    """The id of the task an SDK's ``CreateTaskResult`` answered with (mcp 1.x's experimental
    tasks, which that SDK lets its client follow); ``None`` for any other result."""
    kind = type(result)
    if kind.__name__ != "CreateTaskResult" or not kind.__module__.startswith("mcp."):
        return None
    return str_or_none(getattr(getattr(result, "task", None), "taskId", None))


@lru_cache(maxsize=1)
def _mcp_error_classes() -> tuple[type[BaseException], ...]:
    try:
        from mcp.shared import exceptions
    except ImportError:
        return ()
    names = ("McpError", "MCPError")  # 1.x, 2.x (2.x has no McpError alias)
    return tuple(cls for name in names if isinstance(cls := getattr(exceptions, name, None), type))


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
