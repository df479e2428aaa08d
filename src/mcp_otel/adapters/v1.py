"""mcp 1.x internals: ``BaseSession``'s request ids and sending, ``RequestResponder`` (what was
answered, whether the peer cancelled), the typed requests' ``.root`` and ``params._meta``, and the
sessions' read stream (the peer hung up)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from mcp_otel.adapters.common import ServerRequest, SessionFacts, header, rpc_error_of, session_facts, str_or_none
from mcp_otel.classify import RpcError


def next_request_id(session: Any) -> int | None:
    """mcp 1.x: the id ``send_request`` will take, read just before ``call_tool`` runs.

    ``call_tool`` reaches the id allocation without awaiting, so this is the call's id. mcp 2.x
    allocates inside its dispatcher; the client patch reads the id there instead.
    """
    if getattr(session, "_dispatcher", None) is not None:
        return None
    value = getattr(session, "_request_id", None)
    return value if isinstance(value, int) else None


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


def server_request(server: Any, responder: Any, request: Any, session: Any) -> ServerRequest:
    """mcp 1.x ``Server._handle_request``: a request a server handles."""
    client_params = getattr(session, "client_params", None)
    return _received(
        request,
        responder,
        session,
        protocol_version=getattr(client_params, "protocolVersion", None),
        server_name=getattr(server, "name", None),
        server_version=getattr(server, "version", None),
    )


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
        protocol_version=getattr(getattr(request, "params", None), "protocolVersion", None),
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
    request: Any, responder: Any, session: Any, *, protocol_version: Any, server_name: Any, server_version: Any
) -> ServerRequest:
    metadata = getattr(responder, "message_metadata", None)
    http_request = getattr(metadata, "request_context", None)
    return ServerRequest(
        method=getattr(request, "method", None),
        params=getattr(request, "params", None),
        request_id=getattr(responder, "request_id", None),
        meta=getattr(responder, "request_meta", None),
        protocol_version=str_or_none(protocol_version),
        session_id=None if http_request is None else header(http_request, "mcp-session-id"),
        http_request=http_request,
        server_name=str_or_none(server_name),
        server_version=str_or_none(server_version),
        write_stream=getattr(session, "_write_stream", None),
    )


def peer_cancelled(responder: Any) -> bool:
    """mcp 1.x: the client's notifications/cancelled reached this request before its answer."""
    return getattr(responder, "cancelled", False) is True


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


def server_session_facts(session: Any) -> SessionFacts | None:
    """A ``ServerSession``'s server and negotiated protocol (``None`` for anything else)."""
    options = getattr(session, "_init_options", None)
    if options is None:
        return None
    client_params = getattr(session, "client_params", None)
    return SessionFacts(
        protocol_version=str_or_none(getattr(client_params, "protocolVersion", None)),
        server_name=str_or_none(getattr(options, "server_name", None)),
        server_version=str_or_none(getattr(options, "server_version", None)),
    )


def task_id_of(result: Any) -> str | None:
    """mcp 1.x experimental tasks: the id of the task a ``CreateTaskResult`` answered with (this
    SDK lets its client follow it); ``None`` for any other result."""
    kind = type(result)
    if kind.__name__ != "CreateTaskResult" or not kind.__module__.startswith("mcp."):
        return None
    return str_or_none(getattr(getattr(result, "task", None), "taskId", None))
