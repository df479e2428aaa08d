"""``mcp-otel proxy -- COMMAND``: the proxy's telemetry, its session and the relay, put together."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from mcp_otel.config import Settings
from mcp_otel.metrics import CallMetrics
from mcp_otel.proxy.stdio import relay
from mcp_otel.proxy.telemetry import ProxyTelemetry, default_output, server_name_of
from mcp_otel.proxy.wire import WireSession

EXIT_NOT_STARTED = 127  # as a shell says of a command it cannot run


def proxy(
    command: Sequence[str], *, name: str | None = None, output: Path | None = None, as_client: bool = False
) -> int:
    """Run ``command`` behind the relay, standing in for the server (or ``as_client``); its exit
    status. The settings are the in-process instrumentation's (``OTEL_INSTRUMENTATION_MCP_*``)."""
    # As the client, the spans are the client's view of that server.
    name = name or server_name_of(command) + ("-client" if as_client else "")
    output = output or default_output(name)
    settings = Settings.load()
    telemetry = ProxyTelemetry(output, name)
    session = WireSession(telemetry.tracer(), CallMetrics(telemetry.meter(), settings), settings, as_client=as_client)
    try:
        return asyncio.run(relay(command, session, telemetry.flush))
    except OSError as exc:  # the command could not be started
        print(f"mcp-otel proxy: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return EXIT_NOT_STARTED
    finally:
        telemetry.shutdown()
