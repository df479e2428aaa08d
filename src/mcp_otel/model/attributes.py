"""The attributes CLIENT and SERVER spans of a request share, built the same way on both sides.

What depends on the method lives in :data:`METHODS`: which parameter names the span's target
(tool or prompt name, never a URI) and which attribute holds it, whether the request carries a
resource URI. Methods not listed there (extensions, ``tasks/*``) are handled by name alone.

Names come from peers (method and tool names from whoever sends, server names from whoever
answers), so every such value is cut to the configured ``max_name_length`` here, once.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, NamedTuple

from mcp_otel.model.config import Settings
from mcp_otel.model.fields import field
from mcp_otel.model.messages import SessionFacts
from mcp_otel.model.outcome import bounded
from mcp_otel.semconv import (
    FREQUENT_NOTIFICATIONS,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROMPT_NAME,
    GEN_AI_TOOL_NAME,
    KNOWN_METHODS,
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_REQUEST_INPUT_RESPONSES,
    MCP_RESOURCE_URI,
    MCP_SERVER_NAME,
    MCP_SERVER_VERSION,
    MCP_SESSION_ID,
    METHOD_PROMPTS_GET,
    METHOD_TOOLS_CALL,
    NOTIFICATION_PREFIX,
    OPERATION_EXECUTE_TOOL,
    RESOURCE_URI_METHODS,
)


@dataclass(frozen=True)
class MethodShape:
    """What one MCP method contributes to its spans (semantic-conventions-genai mcp.md)."""

    target_attribute: str | None = None  # names the target; its value is params.name
    operation: str | None = None  # gen_ai.operation.name
    has_uri: bool = False  # params.uri is mcp.resource.uri


METHODS: Mapping[str, MethodShape] = {
    METHOD_TOOLS_CALL: MethodShape(GEN_AI_TOOL_NAME, OPERATION_EXECUTE_TOOL),
    METHOD_PROMPTS_GET: MethodShape(GEN_AI_PROMPT_NAME),
    **{method: MethodShape(has_uri=True) for method in RESOURCE_URI_METHODS},
}
_GENERIC = MethodShape()


def shape(method: str) -> MethodShape:
    return METHODS.get(method, _GENERIC)


class Request(NamedTuple):
    """One request as both sides describe it: its method and what its parameters name."""

    method: str
    target: str | None = None  # tool or prompt name (bounded)
    uri: str | None = None  # mcp.resource.uri (bounded)
    # Its spans' name, made once with the request (``of``, ``named``); see span_name.
    name: str | None = None

    @classmethod
    def of(cls, method: Any, params: Any, settings: Settings) -> Request:
        """The request of ``method`` with ``params`` (a wire dict, a model of either major)."""
        # Not a str: a peer's odd method, which no known method equals.
        method_shape = METHODS.get(method, _GENERIC) if method.__class__ is str else _GENERIC
        target = None
        if method_shape.target_attribute:
            # field(params, "name"), inline for a model's own field (a tool call's, every one).
            fields = getattr(params, "__dict__", None)
            target = fields["name"] if fields.__class__ is dict and "name" in fields else field(params, "name")
        uri = field(params, "uri") if method_shape.has_uri else None
        return cls.named(method, target, uri, settings)

    @staticmethod
    def named(method: Any, target: Any, uri: Any, settings: Settings) -> Request:
        """The request of ``method`` naming ``target`` (a tool or prompt) and ``uri``, as a peer sent
        them (bounded here). Every request needs one, and requests repeat: built once per (method,
        names), but for a peer's huge or odd names (built each time, never held)."""
        limit, content_limit = settings.max_name_length, settings.max_content_length
        key = (method, target, uri, limit, content_limit)
        try:
            found = _REQUESTS.get(key)
        except TypeError:  # an unhashable name: a peer's odd one
            return _request(method, target, uri, limit, content_limit)
        if found is not None:
            return found
        request = _request(method, target, uri, limit, content_limit)
        if (
            (method is None or (method.__class__ is str and len(method) <= limit))
            and (target is None or (target.__class__ is str and len(target) <= limit))
            and (uri is None or (uri.__class__ is str and len(uri) <= content_limit))
        ):
            if len(_REQUESTS) >= _MAX_REQUESTS:
                _REQUESTS.clear()
            _REQUESTS[key] = request
        return request

    def span_name(self) -> str:
        """``{mcp.method.name} {target}``, or the method alone (semconv: no URI in the name)."""
        return self.name or _span_name(self.method, self.target)

    @property
    def is_tool_call(self) -> bool:
        return self.method == METHOD_TOOLS_CALL


# (method, target, uri, name limit, content limit) -> its Request: names a peer sent within the limits.
_REQUESTS: dict[tuple[Any, ...], Request] = {}
_MAX_REQUESTS = 1024


def _request(method: Any, target: Any, uri: Any, name_limit: int, content_limit: int) -> Request:
    method = str(method) if method else "unknown"
    if method not in KNOWN_METHODS:  # a peer's own method name
        method = bounded(method, name_limit)
    target = None if target is None else bounded(str(target), name_limit)
    uri = None if uri is None else bounded(str(uri), content_limit)
    return Request(method, target, uri, _span_name(method, target))


def server_identity(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The server's name and version among ``attributes``: what a span that opened without them
    learns later."""
    return {key: attributes[key] for key in (MCP_SERVER_NAME, MCP_SERVER_VERSION) if key in attributes}


def traced_notification(method: Any, settings: Settings) -> bool:
    """Whether a notification of ``method`` gets a span: every one, but progress and log messages
    only with ``trace_progress_and_logs`` (they come by the hundred)."""
    return (
        method.__class__ is str
        and method.startswith(NOTIFICATION_PREFIX)
        and (method not in FREQUENT_NOTIFICATIONS or settings.trace_progress_and_logs)
    )


def _span_name(method: str, target: str | None) -> str:
    return f"{method} {target}" if target else method


def request_attributes(
    request: Request,
    settings: Settings,
    *,
    server_name: str | None,
    server_version: str | None,
    protocol_version: str | None,
    session_id: str | None,
) -> dict[str, Any]:
    """The attributes of a request's span that do not depend on the side or transport.
    ``server_name``/``server_version``: what the server says it is; the settings override them."""
    limit = settings.max_name_length
    method_shape = shape(request.method)
    attributes: dict[str, Any] = {MCP_METHOD_NAME: request.method}
    if method_shape.operation:
        attributes[GEN_AI_OPERATION_NAME] = method_shape.operation
    if method_shape.target_attribute and request.target:
        attributes[method_shape.target_attribute] = request.target
    if request.uri:
        attributes[MCP_RESOURCE_URI] = request.uri
    optional = {
        MCP_PROTOCOL_VERSION: protocol_version,
        MCP_SESSION_ID: session_id,
        MCP_SERVER_NAME: settings.server_name or server_name,
        MCP_SERVER_VERSION: settings.server_version or server_version,
    }
    for key, value in optional.items():
        if value:
            attributes[key] = bounded(value, limit)
    return attributes


def session_attributes(
    request: Request, settings: Settings, facts: SessionFacts, session_id: str | None = None
) -> dict[str, Any]:
    """:func:`request_attributes` with what a session knows of its server."""
    return request_attributes(
        request,
        settings,
        server_name=facts.server_name,
        server_version=facts.server_version,
        protocol_version=facts.protocol_version,
        session_id=session_id,
    )


def round_attributes(input_responses: Any) -> dict[str, Any]:
    """A round of a multi-round call (2026-07-28) carries the answers to the previous round's
    input requests: how many (never their content); only a map of answers counts."""
    if isinstance(input_responses, Mapping) and input_responses:
        return {MCP_REQUEST_INPUT_RESPONSES: len(input_responses)}
    return {}


# A request's span and metric attributes, shared with alike requests: read-only.
Attributes = tuple[Mapping[str, Any], Mapping[str, Any]]


class AttributeCache:
    """A request's span and metric attributes, but for its id, built once per set of facts.

    They are a pure function of the request (method, target, URI) and its connection's facts
    (server, protocol version, session, transport), and building them (names bounded, metric
    names admitted) was the largest share of a wrapper's cost (docs/benchmarks.md). At most
    ``limit`` keys are kept (targets are the caller's names, sessions and ports come and go): when
    full it starts over, so a long-running process keeps its current keys cached. Both are
    shared with every alike request, read-only: a caller that adds to them makes a new dict.
    """

    def __init__(self, limit: int = 1024) -> None:
        self._entries: dict[Hashable, Attributes] = {}
        self._limit = limit

    def get(self, key: Hashable) -> Attributes | None:
        """The attributes kept for ``key``, or ``None``."""
        try:
            return self._entries.get(key)
        except TypeError:  # a fact the SDK holds that cannot be a key: built each time
            return None

    def put(self, key: Hashable, entry: Attributes) -> Attributes:
        """Keep ``entry`` for ``key``; returns it."""
        if len(self._entries) >= self._limit:
            self._entries.clear()
        with suppress(TypeError):  # not a key (see get): not kept
            self._entries[key] = entry
        return entry


class SettledSessions:
    """The attributes of each settled session's requests, by request.

    A client session's facts (its server, protocol version, HTTP session id, transport) are
    settled once its handshake is answered (the SDKs change them only in a handshake); from
    then on, until the next one, its requests' attributes depend on the request alone, and are
    found with one lookup instead of the session's facts read again on every request (most of
    a client request's start). A session is settled anew at every handshake (what it knew is
    dropped), forgotten when it closes, and held weakly. At most ``limit`` sessions and
    ``limit`` requests in all are kept: when either is full, that starts over (as the attribute
    cache does), so memory stays bounded whatever the names and sessions.
    """

    def __init__(self, limit: int = 1024) -> None:
        self._sessions: dict[int, tuple[weakref.ref[Any], dict[Request, Attributes]]] = {}
        self._limit = limit
        self._kept = 0  # requests kept (those of sessions gone but not closed too)

    def settle(self, session: Any) -> None:
        """``session``'s handshake was answered: its facts stay as they are until the next one."""
        if len(self._sessions) >= self._limit:
            self._sessions.clear()
            self._kept = 0
        self.forget(session)
        with suppress(TypeError):  # not weakly referable: never settled
            self._sessions[id(session)] = (weakref.ref(session), {})

    def forget(self, session: Any) -> None:
        requests = self.requests(session)
        if requests is not None:
            self._kept -= len(requests)
            del self._sessions[id(session)]

    def requests(self, session: Any) -> dict[Request, Attributes] | None:
        """A settled session's requests' attributes (the caller keeps new ones with
        :meth:`keep`), or ``None``: not settled."""
        entry = self._sessions.get(id(session))
        return entry[1] if entry is not None and entry[0]() is session else None

    def keep(self, requests: dict[Request, Attributes], request: Request, attributes: Attributes) -> None:
        """Keep ``request``'s attributes in its session's ``requests`` (from :meth:`requests`)."""
        if self._kept >= self._limit:
            for _, kept in self._sessions.values():
                kept.clear()
            self._kept = 0
        requests[request] = attributes
        self._kept += 1
