"""mcp-otel: OpenTelemetry instrumentation for MCP requests (tool calls first) that tells cancelled from failed.

Public API: :class:`McpInstrumentor`, the outcome values :class:`Outcome` and
:class:`CancelReason`, and ``__version__``.

``ToolOutcome`` is deprecated: the name :class:`Outcome` had when only tool calls had an outcome,
the same class; it still imports, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from mcp_otel.instrumentation.instrumentor import McpInstrumentor
from mcp_otel.semconv import CancelReason, Outcome
from mcp_otel.version import __version__

if TYPE_CHECKING:  # type checkers see the alias; at run time __getattr__ warns first
    from mcp_otel.semconv import ToolOutcome as ToolOutcome

__all__ = ["CancelReason", "McpInstrumentor", "Outcome", "__version__"]


def __getattr__(name: str) -> object:
    if name == "ToolOutcome":
        warnings.warn("mcp_otel.ToolOutcome is deprecated: use mcp_otel.Outcome", DeprecationWarning, stacklevel=2)
        return Outcome
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
