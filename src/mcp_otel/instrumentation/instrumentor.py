"""``McpInstrumentor``: the OpenTelemetry instrumentor that applies and removes every patch.

Registered as entry point ``mcp_otel`` in group ``opentelemetry_instrumentor`` so that
``opentelemetry-instrument python agent.py`` picks it up. ``instrument()`` never raises and
works whether ``mcp`` is imported before or after it; ``uninstrument()`` restores every target.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.metrics import get_meter
from opentelemetry.trace import get_tracer

from mcp_otel.instrumentation.client import ClientSide
from mcp_otel.instrumentation.frontends import fastmcp, mcp1, mcp2
from mcp_otel.instrumentation.patching import Patcher
from mcp_otel.instrumentation.server import ServerSide
from mcp_otel.instrumentation.sessions import Sessions
from mcp_otel.instrumentation.transport import TransportRegistry
from mcp_otel.model.config import Settings
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.model.safety import report_once
from mcp_otel.semconv import INSTRUMENTATION_SCOPE
from mcp_otel.version import __version__

# The SDK versions the patches target (mcp 1.19 added call_tool's meta argument).
_INSTRUMENTS = ("mcp >= 1.19, < 3",)


class McpInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Instrument MCP requests: ``McpInstrumentor().instrument(tracer_provider=..., **settings)``."""

    _patcher: Patcher | None = None

    def instrumentation_dependencies(self) -> Collection[str]:
        return _INSTRUMENTS

    def _instrument(self, **kwargs: Any) -> None:
        """``tracer_provider``, ``meter_provider`` (default: the global ones), and the settings."""
        try:
            tracer_provider = kwargs.pop("tracer_provider", None)
            meter_provider = kwargs.pop("meter_provider", None)
            settings = Settings.load(**kwargs)
            tracer = get_tracer(INSTRUMENTATION_SCOPE, __version__, tracer_provider=tracer_provider)
            meter = get_meter(INSTRUMENTATION_SCOPE, __version__, meter_provider=meter_provider)
            metrics = CallMetrics(meter, settings)
            # One registry: sessions of both sides look their transport up by their write stream.
            transports = TransportRegistry()
            abandoned = mcp1.courtesy_cancel if settings.send_cancel else None
            client = ClientSide(tracer, metrics, settings, transports, abandoned)
            # The client side learns from the other two: an agent's answer to its server's input
            # request (the person's no), and a client session's end (tasks it still follows).
            server = ServerSide(tracer, metrics, settings, transports, client.input_declined, client.sent_span)
            sessions = Sessions(metrics, settings, client.session_closed)
            # Each front end patches where its SDK sends and handles requests; the sides patch
            # what both majors share. The other major's targets are missing, and skipped.
            self._patcher = Patcher(
                [
                    *client.patches(),
                    *server.patches(),
                    *mcp1.Mcp1FrontEnd(client, server, sessions).patches(),
                    *mcp2.Mcp2FrontEnd(client, server, sessions).patches(),
                    *fastmcp.patches(settings),
                ]
            )
            self._patcher.start()
        except Exception as exc:
            report_once("instrument() failed; MCP calls are not traced", exc)

    def _uninstrument(self, **kwargs: Any) -> None:
        patcher, self._patcher = self._patcher, None
        if patcher is not None:
            patcher.stop()
