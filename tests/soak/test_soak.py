"""Soak and leak check: many calls, 200 in flight, with cancels and failures mixed in.

Every started span ends exactly once with the planned outcome, metric counts equal the calls
per outcome, and memory after warm-up grows by less than 2 MB (tracemalloc), bookkeeping
included. MCP_OTEL_SOAK_CALLS sets the size: CI runs a few thousand, ``make bench`` 100,000.
"""

from __future__ import annotations

import gc
import os
import random
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from tests.conftest import EXPORTER
from tests.harness import MCP_MAJOR, open_session
from tests.metrics.test_metrics import counts, tool_call_points

pytestmark = pytest.mark.anyio

CALLS = int(os.environ.get("MCP_OTEL_SOAK_CALLS", "3000"))
IN_FLIGHT = 200
MEMORY_LIMIT = 2 * 1024 * 1024


class CountingProcessor(SpanProcessor):
    """Counts tools/call spans as they start and end, keeping only the open ones."""

    def __init__(self) -> None:
        self.open: set[tuple[str, int]] = set()
        self.started: Counter[str] = Counter()  # per kind
        self.ended_twice = 0
        self.ended: Counter[tuple[str, str]] = Counter()  # (kind, outcome)

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        if (span.attributes or {}).get("mcp.method.name") == "tools/call":
            self.started[span.kind.name] += 1
            self.open.add((span.kind.name, span.context.span_id))

    def on_end(self, span: ReadableSpan) -> None:
        if (span.attributes or {}).get("mcp.method.name") != "tools/call":
            return
        key = (span.kind.name, span.context.span_id)
        if key not in self.open:
            self.ended_twice += 1
            return
        self.open.remove(key)
        self.ended[(span.kind.name, str(span.attributes.get("tool.outcome")))] += 1


def plan(calls: int) -> list[str]:
    """What each call is meant to do: 60% ok, 10% tool error, 30% cancelled by the caller."""
    generator = random.Random(11)
    return [generator.choices(["ok", "tool_error", "cancel"], weights=[6, 1, 3])[0] for _ in range(calls)]


async def run_calls(session: Any, modes: list[str], seed: int) -> None:
    """The calls, IN_FLIGHT at a time: that many workers take the next call as they finish one
    (spawning every call up front would make the test's own containers grow with the count)."""
    generator = random.Random(seed)
    pending = iter(modes)

    async def worker() -> None:
        for mode in pending:
            if mode == "cancel":
                with anyio.move_on_after(generator.uniform(0, 0.02)):
                    await session.call_tool("slow", {"seconds": 0.05})
            else:
                await session.call_tool(mode, {})

    async with anyio.create_task_group() as group:
        for _ in range(IN_FLIGHT):
            group.start_soon(worker)


@pytest.fixture
def quiet_global_exporter() -> Iterator[None]:
    """mcp 2.x makes spans of its own (e.g. one per notifications/cancelled) with the global
    provider; the tests' in-memory exporter would keep them all."""
    EXPORTER.paused = True
    yield
    EXPORTER.paused = False


@pytest.mark.usefixtures("quiet_global_exporter")
async def test_soak(instrument: Callable[..., Any]) -> None:
    processor = CountingProcessor()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(processor)
    reader = InMemoryMetricReader()
    instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader]))
    modes = plan(CALLS)
    warm_up = max(CALLS // 10, 500)

    async with open_session("memory") as session:
        await session.list_tools()
        await run_calls(session, modes[:warm_up], seed=1)
        gc.collect()
        tracemalloc.start(3)
        try:
            await run_calls(session, modes[warm_up:], seed=2)
            await anyio.sleep(0.3)  # cancelled handlers finish on the server
            gc.collect()
            grown, _peak = tracemalloc.get_traced_memory()
            # Where it grew, should it have: the largest allocation sites still alive.
            growth = "\n".join(str(stat) for stat in tracemalloc.take_snapshot().statistics("traceback")[:3])
        finally:
            tracemalloc.stop()

    planned = Counter({"ok": 0, "failed": 0, "cancelled": 0})
    planned.update({"ok": "ok", "tool_error": "failed", "cancel": "cancelled"}[mode] for mode in modes)
    client = Counter({outcome: processor.ended[("CLIENT", outcome)] for outcome in planned})
    assert client == planned
    assert processor.ended_twice == 0
    assert processor.open == set()  # every started span ended
    assert processor.started["CLIENT"] == CALLS
    # A call cancelled before its request went out never reaches the server.
    assert CALLS // 2 < processor.started["SERVER"] <= CALLS
    assert sum(processor.ended.values()) == processor.started.total()

    # Metric counts equal span counts, per side and outcome.
    for kind, name in (("CLIENT", "mcp.client.operation.duration"), ("SERVER", "mcp.server.operation.duration")):
        by_outcome: Counter[str] = Counter()
        for (_tool, outcome, _error, _code), count in counts(tool_call_points(reader, name)).items():
            by_outcome[outcome] += count
        spans = Counter({outcome: count for (side, outcome), count in processor.ended.items() if side == kind})
        assert by_outcome == spans, kind

    # mcp 1.x servers are not told about cancels: they finish those calls (ok).
    server_cancelled = processor.ended[("SERVER", "cancelled")]
    if MCP_MAJOR == 1:
        assert server_cancelled == 0
    assert grown < MEMORY_LIMIT, f"memory grew by {grown / 1024:.0f} KiB over {CALLS - warm_up} calls:\n{growth}"
