"""The benchmark's own programs still run (``make bench`` is not part of ``make test``): a counted
worker per variant, and the in-flight memory measurement, on the installed SDK major."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from benchmarks import proxy as proxy_bench
from benchmarks.server import BIG_RESULT
from benchmarks.variants import VARIANTS
from tests.processes import missing

ROOT = Path(__file__).resolve().parent.parent
MAJOR = int(version("mcp").split(".")[0])
OURS = [
    variant
    for variant in VARIANTS[MAJOR]
    if variant in ("baseline", "floor", "floor-context", "floor-propagated", "mcp-otel", "mcp-otel-local")
]


@pytest.mark.parametrize("variant", OURS)
@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_a_counted_worker_makes_its_calls_and_exits(variant: str, transport: str) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "worker.py"), variant, transport, "tools/call", "5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""


# floor-propagated's spans, recorded in memory: (kind, trace id, span id, parent span id) per span.
_PROPAGATED_SPANS = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from benchmarks import variants
from benchmarks.worker import session

exporter = InMemorySpanExporter()
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
variants._floor_propagated("tools/call", "memory", (tracer_provider, MeterProvider()))

async def main():
    async with session("memory", "floor-propagated") as client_session:
        await client_session.call_tool("ok", {})

asyncio.run(main())
print(json.dumps([
    [span.kind.name, span.context.trace_id, span.context.span_id, span.parent.span_id if span.parent else None]
    for span in exporter.get_finished_spans()
]))
"""


@pytest.mark.skipif(MAJOR != 1, reason="floor-propagated is an mcp 1.x variant")
def test_floor_propagated_makes_one_trace_of_two_spans() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _PROPAGATED_SPANS, str(ROOT)], capture_output=True, text=True, timeout=120, check=True
    )
    # The call's SERVER span ends first; then, before the call returns, the SDK's client lists the
    # tools (output schemas): a SERVER span in a trace of its own (nothing is injected); then the
    # call's CLIENT span.
    served, listed, called = json.loads(completed.stdout)
    assert [listed[0], served[0], called[0]] == ["SERVER", "SERVER", "CLIENT"]
    assert listed[3] is None
    assert listed[1] != called[1]
    assert served[1] == called[1]  # one trace
    assert served[3] == called[2]  # the SERVER span is the CLIENT span's child


# mcp-otel's span and point of one tool call on one side (argv: root, transport, CLIENT or SERVER):
# their attributes.
_RECORDED = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from mcp_otel import McpInstrumentor
from benchmarks.worker import session

exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
McpInstrumentor().instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader]))

async def main():
    async with session(sys.argv[2], "baseline") as client_session:  # over stdio, a server without spans
        await client_session.call_tool("ok", {})

asyncio.run(main())
(span,) = [s for s in exporter.get_finished_spans() if s.kind.name == sys.argv[3] and s.name == "tools/call ok"]
points = [
    point.attributes
    for metric in reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics
    if metric.name == f"mcp.{sys.argv[3].lower()}.operation.duration"
    for point in metric.data.data_points
    if point.attributes.get("gen_ai.tool.name") == "ok"
]
print(json.dumps([dict(span.attributes), *map(dict, points)]))
"""


# Over stdio the server is another process, started without spans.
@pytest.mark.parametrize(("transport", "side"), [("memory", "CLIENT"), ("memory", "SERVER"), ("stdio", "CLIENT")])
def test_the_floors_record_what_mcp_otel_records(transport: str, side: str) -> None:
    """The floors are only a floor if they record the data mcp-otel does: the same attributes on a
    span and a point, on each transport (in memory there is no network.transport)."""
    from benchmarks.variants import recorded

    completed = subprocess.run(
        [sys.executable, "-c", _RECORDED, str(ROOT), transport, side],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    span, point = json.loads(completed.stdout)
    started, ended, pointed = recorded("tools/call", transport)
    assert sorted(span) == sorted(started | ended)
    assert sorted(point) == sorted(pointed)
    unchanging = {key: value for key, value in (started | ended).items() if key != "jsonrpc.request.id"}
    assert {key: span[key] for key in unchanging} == unchanging


def test_calls_in_flight_are_held_and_their_memory_attributed() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "in-flight", "mcp-otel", "200"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    measured = json.loads(completed.stdout)
    # Every held call has a CLIENT and a SERVER span of ours: both sides allocated for each.
    assert measured["client_bytes"] > 200 * 500
    assert measured["server_bytes"] > 200 * 500
    assert measured["bytes"] > measured["client_bytes"] + measured["server_bytes"]


@pytest.mark.anyio
@pytest.mark.parametrize("path", proxy_bench.PATHS)
async def test_each_proxy_benchmark_path_relays_a_call_and_a_large_result(path: str, tmp_path: Path) -> None:
    """The proxy benchmark's relays (direct, the bare relay, the unobserved relay, the proxy on
    uvloop and on asyncio's loop) answer as the server does, the 10 MB result whole."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = proxy_bench.command(path, sys.executable, tmp_path / "telemetry.jsonl")
    parameters = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert [block.text for block in (await session.call_tool("ok", {})).content] == ["ok"]
        big = await session.call_tool(proxy_bench.BIG, {})
        assert [len(block.text) for block in big.content] == [BIG_RESULT]
    assert (tmp_path / "telemetry.jsonl").exists() is path.startswith("mcp-otel proxy")


def test_the_span_floor_program_runs() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "proxy.py"), "span-floor", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr


@pytest.mark.mcp2  # the benchmark's client is mcp 2.x's
def test_the_http_proxy_benchmark_measures_every_path() -> None:
    from benchmarks import http_proxy

    if not http_proxy.GO_PROXY.exists():
        missing("the Go reverse proxy", "goproxy")
    if not http_proxy.EVERYTHING.exists():
        missing("server-everything", "third-party")
    result = http_proxy.run(sys.executable, rounds=1, calls=5)
    assert list(result["upstreams"]) == list(http_proxy.UPSTREAMS)
    for figures in result["upstreams"].values():
        assert set(figures["latency_us"]) == set(http_proxy.PATHS)  # httpx2 comes with mcp 2.x
        for p50, p99 in figures["latency_us"].values():
            assert 0 < p50 <= p99
        assert set(figures["cpu_us"]) == set(http_proxy.PATHS)
    document = "\n".join(http_proxy.markdown(result))
    assert "| mcp-otel proxy |" in document
    assert document.count("/ Go reverse proxy: **") == len(http_proxy.UPSTREAMS)


def test_a_missing_process_count_is_counted_again_not_summed_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over stdio a worker's count is its own and its server's: a run that lost one (a process
    killed before valgrind wrote it) is run again, and a count never made whole is an error.
    Other processes a run starts (logfire runs git) are summed, not taken for a missing one."""
    from benchmarks import instructions

    worker = f"{sys.executable} {instructions.WORKER} mcp-otel stdio tools/call 100"
    server = f"{sys.executable} {instructions.WORKER.with_name('server.py')} mcp-otel"
    job = instructions.Job(sys.executable, "mcp-otel", "stdio", "tools/call")
    runs = iter([[(worker, 5), ("/usr/bin/git rev-parse HEAD", 3)], [(worker, 5), (server, 7), ("git", 3)]])
    monkeypatch.setattr(instructions, "_counts", lambda job, calls: next(runs))
    assert instructions.instructions(job, 100) == 15
    monkeypatch.setattr(instructions, "_counts", lambda job, calls: [(server, 7)])
    with pytest.raises(RuntimeError, match="missing 3 times"):
        instructions.instructions(job, 100)
    memory = instructions.Job(sys.executable, "logfire", "memory", "tools/call")
    monkeypatch.setattr(instructions, "_counts", lambda job, calls: [(worker, 5), ("git", 3)])
    assert instructions.instructions(memory, 100) == 8
