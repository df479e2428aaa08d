"""mcp 2.x internals: the dispatch context (``cancel_requested``, the transport's kind), the
``ServerRunner``'s connection and server, the client session's own request handling, and how
the SDK answers a handler's exception per protocol era."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from mcp_otel.adapters.common import ServerRequest, SessionFacts, rpc_error_of, session_facts, str_or_none
from mcp_otel.classify import RpcError

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
    return ServerRequest(
        method=method,
        params=params,
        request_id=getattr(dctx, "request_id", None),
        meta=params.get("_meta"),
        protocol_version=str_or_none(protocol_version),
        session_id=str_or_none(session_id),
        http_request=http_request,
        server_name=str_or_none(server_name),
        server_version=str_or_none(server_version),
        write_stream=getattr(getattr(dctx, "_dispatcher", None), "_write_stream", None),
        input_responses=params.get("inputResponses"),
    )


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
