"""Soak of ``mcp-otel proxy --listen --upstream``: 50 concurrent clients (half on 2026-07-28, half
on the handshake era with a session each) through one proxy to this major's high-level server,
60% ``ok``, 10% ``isError``, 30% cancelled by the client once the server said it started
(closing the request's stream on 2026-07-28, ``notifications/cancelled`` before). Every answer
is what a direct connection answers, every request's span ends once with the planned outcome,
and the proxy's resident memory grows by less than :data:`RSS_LIMIT` after warm-up.
MCP_OTEL_HTTP_SOAK_REQUESTS sets the size: ``make test`` runs 1,000, ``make bench`` 20,000.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.harness import MCP_MAJOR, open_http_session
from tests.proxy.test_http_proxy import proxied, resident_memory

pytestmark = [pytest.mark.anyio, pytest.mark.mcp2]  # mcp 1.x clients never cancel by themselves

REQUESTS = int(os.environ.get("MCP_OTEL_HTTP_SOAK_REQUESTS", "1000"))
CLIENTS = 50
WARM_UP = 200  # requests before the proxy's memory is first read
RSS_LIMIT = 20 * 1024 * 1024
# (what a client does, the proxy's span: outcome, error.type, cancel reason by era)
PLAN = [("ok", 60), ("fails", 10), ("cancel", 30)]


@asynccontextmanager
async def _client(url: str, modern: bool) -> AsyncIterator[Any]:
    if modern:
        from mcp import Client
        from mcp_types.version import LATEST_MODERN_VERSION

        # The era pinned, not probed: under load a `server/discover` slower than the SDK's 10 s
        # probe timeout falls back to the handshake (seen: 43 answers without the modern `_meta`),
        # and the soak would test the fallback, not the era it plans.
        async with Client(url, mode=LATEST_MODERN_VERSION) as client:
            yield client
    else:
        async with open_http_session(url) as session:
            yield session


async def _cancel_once_working(client: Any) -> None:
    """Call ``working`` and give it up once the server says it started (not on a timer: a call
    given up before it was sent is no request, and has no span)."""
    with anyio.CancelScope() as scope:

        async def started(progress: float, total: float | None, message: str | None) -> None:
            scope.cancel()

        await client.call_tool("working", {}, progress_callback=started)
    assert scope.cancelled_caught


async def test_soak_through_the_http_proxy(tmp_path: Path) -> None:
    assert MCP_MAJOR == 2
    rng = random.Random(7)
    steps = rng.choices([step for step, _ in PLAN], weights=[weight for _, weight in PLAN], k=REQUESTS)
    with proxied(tmp_path) as setup:
        expected = {}
        for modern in (False, True):  # a 2026-07-28 answer's _meta names the server
            async with _client(setup.upstream, modern) as direct:
                for tool in ("ok", "fails"):
                    expected[modern, tool] = (await direct.call_tool(tool, {})).model_dump()
        assert expected[False, "ok"]["meta"] is None  # the eras' answers differ
        assert expected[True, "ok"]["meta"] is not None
        wrong: list[Any] = []
        done = 0
        rss: dict[str, int] = {}

        async def run(client_number: int, mine: list[str]) -> None:
            nonlocal done
            modern = client_number % 2 == 0
            async with _client(setup.url, modern) as client:
                for step in mine:
                    if step == "cancel":
                        await _cancel_once_working(client)
                    else:
                        answer = (await client.call_tool(step, {})).model_dump()
                        if answer != expected[modern, step]:
                            wrong.append(answer)
                    done += 1
                    if done == WARM_UP:
                        rss["warm"] = resident_memory(setup.proxy.pid)

        async with anyio.create_task_group() as group:
            for number in range(CLIENTS):
                group.start_soon(run, number, steps[number::CLIENTS])
        await anyio.sleep(1)  # the cancelled requests' last bytes
        rss["end"] = resident_memory(setup.proxy.pid)
        spans = setup.stop()
    assert wrong == []
    calls = [s for s in spans if s["attributes"].get("mcp.method.name") == "tools/call"]
    assert len({s["context"]["span_id"] for s in calls}) == len(calls)  # each ended once
    outcomes = Counter(
        (s["name"], s["attributes"]["mcp.request.outcome"], s["attributes"].get("error.type")) for s in calls
    )
    planned = Counter(steps)
    assert outcomes[("tools/call ok", "ok", None)] == planned["ok"]
    assert outcomes[("tools/call fails", "failed", "tool_error")] == planned["fails"]
    cancelled = Counter(
        s["attributes"].get("mcp.request.cancel.reason") for s in calls if s["name"] == "tools/call working"
    )
    # A 2026-07-28 client gives a request up by closing its stream, a handshake-era one by
    # notifications/cancelled: each era's clients kept their era.
    modern_cancels = sum(steps[number::CLIENTS].count("cancel") for number in range(0, CLIENTS, 2))
    assert cancelled == {"disconnect": modern_cancels, "client": planned["cancel"] - modern_cancels}, cancelled
    assert {s["attributes"]["mcp.request.outcome"] for s in calls if s["name"] == "tools/call working"} == {"cancelled"}
    grown = rss["end"] - rss["warm"]
    warm, end = (rss[key] / 2**20 for key in ("warm", "end"))
    print(f"proxy RSS: {warm:.1f} MiB after {WARM_UP} requests, {end:.1f} MiB after {REQUESTS}")
    assert grown < RSS_LIMIT, rss
