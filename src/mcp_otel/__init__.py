"""mcp-otel: OpenTelemetry instrumentation for MCP requests (tool calls first) that tells cancelled from failed.

Public API: :class:`McpInstrumentor`, the outcome values :class:`ToolOutcome` and
:class:`CancelReason`, and ``__version__``.
"""

from mcp_otel.instrumentation.instrumentor import McpInstrumentor
from mcp_otel.semconv import CancelReason, ToolOutcome
from mcp_otel.version import __version__

__all__ = ["CancelReason", "McpInstrumentor", "ToolOutcome", "__version__"]
