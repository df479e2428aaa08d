"""The fastmcp front end: its patch table, which turns fastmcp's own spans off.

fastmcp makes CLIENT and SERVER spans of its own for the requests we trace, with the context
managers ``client_span`` (its client's mixins, its proxy provider) and ``server_span`` (its
server). fastmcp 4.x has a scoped switch that turns them off (``suppress_fastmcp_telemetry``);
fastmcp 3.x has none, so there the context manager is replaced by one that yields a
non-recording span: fastmcp's own code checks ``is_recording()`` before it writes to the span it
is given, and a non-recording span ignores everything else.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from opentelemetry.trace import INVALID_SPAN

from mcp_otel.instrumentation.patching import Patch
from mcp_otel.model.config import SdkSpans, Settings


def _switch() -> Callable[[], AbstractContextManager[Any]] | None:
    """fastmcp 4.x's ``suppress_fastmcp_telemetry`` (``None``: fastmcp 3.x, or not loaded)."""
    telemetry = sys.modules.get("fastmcp.telemetry")
    switch: Callable[[], AbstractContextManager[Any]] | None = getattr(telemetry, "suppress_fastmcp_telemetry", None)
    return switch


def spans_suppressed() -> AbstractContextManager[Any]:
    """fastmcp's own scoped switch that turns its spans off, or a no-op where it has none (3.x,
    whose span functions are replaced one by one: :func:`without_own_span`) or is not loaded."""
    switch = _switch()
    return switch() if switch is not None else nullcontext()


def without_own_span(
    wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> AbstractContextManager[Any]:
    """The wrapper of fastmcp's ``client_span`` / ``server_span``: the call, its span suppressed."""
    switch = _switch()
    if switch is None:
        return nullcontext(INVALID_SPAN)
    return _switched(switch, wrapped, args, kwargs)


@contextmanager
def _switched(
    switch: Callable[[], AbstractContextManager[Any]], wrapped: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Iterator[Any]:
    with switch(), wrapped(*args, **kwargs) as span:
        yield span


def patches(settings: Settings) -> list[Patch]:
    """fastmcp 3.x's and 4.x's own span functions, replaced unless its spans are wanted
    (setting ``sdk_spans``): its client's calls and a proxy server's calls to its backend
    (``client_span``), its server's handling (``server_span``). The 4.x switch is also turned,
    around each handler, by the mcp 2.x front end."""
    if settings.sdk_spans is not SdkSpans.SUPPRESS:
        return []
    client_modules = (
        "client.mixins.tools",
        "client.mixins.resources",
        "client.mixins.prompts",
        "server.providers.proxy",
    )
    return [
        *(Patch(f"fastmcp.{module}", "client_span", without_own_span, optional=True) for module in client_modules),
        Patch("fastmcp.server.server", "server_span", without_own_span, optional=True),
    ]
