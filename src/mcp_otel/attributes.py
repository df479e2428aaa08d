"""The attributes CLIENT and SERVER spans of a tool call share, built the same way on both sides.

Names come from peers (tool names from whoever calls, server names from whoever answers), so
every such value is cut to the configured ``max_name_length`` here, once.
"""

from __future__ import annotations

from typing import Any

from mcp_otel.config import Settings
from mcp_otel.outcome import bounded
from mcp_otel.semconv import (
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_NAME,
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_SERVER_NAME,
    MCP_SERVER_VERSION,
    MCP_SESSION_ID,
    METHOD_TOOLS_CALL,
    OPERATION_EXECUTE_TOOL,
)


def tool_name(raw: Any, settings: Settings) -> str | None:
    return None if raw is None else bounded(str(raw), settings.max_name_length)


def span_name(tool: str | None) -> str:
    """``tools/call {gen_ai.tool.name}``, or the method alone when there is no name (semconv)."""
    return f"{METHOD_TOOLS_CALL} {tool}" if tool else METHOD_TOOLS_CALL


def call_attributes(
    tool: str | None,
    settings: Settings,
    *,
    server_name: str | None,
    server_version: str | None,
    protocol_version: str | None,
    session_id: str | None,
) -> dict[str, Any]:
    """The attributes of a ``tools/call`` span that do not depend on the side or transport.
    ``server_name``/``server_version``: what the server says it is; the settings override them."""
    limit = settings.max_name_length
    attributes: dict[str, Any] = {MCP_METHOD_NAME: METHOD_TOOLS_CALL, GEN_AI_OPERATION_NAME: OPERATION_EXECUTE_TOOL}
    optional = {
        GEN_AI_TOOL_NAME: tool,
        MCP_PROTOCOL_VERSION: protocol_version,
        MCP_SESSION_ID: session_id,
        MCP_SERVER_NAME: settings.server_name or server_name,
        MCP_SERVER_VERSION: settings.server_version or server_version,
    }
    for key, value in optional.items():
        if value:
            attributes[key] = bounded(value, limit)
    return attributes
