"""fastmcp internals: its own switch that turns its spans off."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from typing import Any


def spans_suppressed() -> Any:
    """fastmcp's own scoped switch that turns its spans off (``suppress_fastmcp_telemetry``), or a
    no-op where fastmcp is not loaded (then it makes no spans)."""
    telemetry = sys.modules.get("fastmcp.telemetry")
    suppress = getattr(telemetry, "suppress_fastmcp_telemetry", None)
    return suppress() if suppress is not None else nullcontext()
