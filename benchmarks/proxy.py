"""``mcp-otel proxy`` per request over stdio, side by side in one run (issue 27).

A Python mcp 2.x client calls the benchmark server (``server.py``, uninstrumented) directly and
through four relays, sessions open side by side and rounds interleaved in shuffled order:

* the bare relay (``bare_relay.py``): the proxy's floor, a relay that observes nothing, written
  the fastest way found in Python (two threads of blocking reads and writes);
* the proxy's own relay with nothing observed (``--unobserved`` below): what its relay (on uvloop)
  and line splitting cost;
* ``mcp-otel proxy``: the same relay, each message observed and each request a SERVER span
  and a point, exported to its OTLP JSON lines file;
* ``mcp-otel proxy`` on asyncio's own event loop, as where uvloop is not installed.

Measured: latency added per ``tools/call`` over direct (p50, p99); the relay process's own
instructions per request under cachegrind (the client and server run natively; FEW and MANY
calls, as :mod:`benchmarks.instructions` counts, the collector off); against the floor's one
span and one point (the same SDK, exporters and attributes, made by hand: ``span-floor``); a
10 MB tool result's added latency; the proxy's memory after more and more requests.

    python benchmarks/proxy.py --unobserved -- COMMAND...   (the unobserved relay)
    python benchmarks/proxy.py span-floor CALLS              (the floor's spans and points)
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.instructions import FEW, MANY  # noqa: E402

HERE = Path(__file__).resolve().parent
# The relays, as commands put before the server's.
PATHS = ("direct", "bare relay", "relay, unobserved", "mcp-otel proxy", "mcp-otel proxy, asyncio's loop")
BIG = "big"  # server.py's tool that answers 10 MB of text
# Telemetry exported at exit, not when a timer fires (timing would move the counts).
_QUIET_EXPORT = {
    "OTEL_BSP_SCHEDULE_DELAY": "3600000",
    "OTEL_BSP_MAX_QUEUE_SIZE": "8192",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "8192",
    "OTEL_METRIC_EXPORT_INTERVAL": "3600000",
}
# Where valgrind's and the servers' own words go.
_QUIET = open(os.devnull, "w")  # noqa: SIM115 (open for the life of the process)
# mcp-otel's command line, as ``python -c`` runs it (under valgrind too); and on asyncio's own
# event loop, as where uvloop is not installed (hidden from it: its import fails).
CLI = "import sys; from mcp_otel.cli.main import main; sys.exit(main())"
CLI_ON_ASYNCIO = "import sys; sys.modules['uvloop'] = None; " + CLI


def command(path: str, python: str, output: Path) -> list[str]:
    """The benchmark server's command, behind the relay of ``path`` (its telemetry to ``output``)."""
    server = [python, str(HERE / "server.py"), "baseline"]
    if path == "bare relay":
        return [python, str(HERE / "bare_relay.py"), *server]
    if path == "relay, unobserved":
        return [python, str(Path(__file__)), "--unobserved", "--", *server]
    if path.startswith("mcp-otel proxy"):
        cli = CLI_ON_ASYNCIO if path.endswith("asyncio's loop") else CLI
        return [python, "-c", cli, "proxy", "--name", "bench", "--output", str(output), "--", *server]
    return server


async def _open(stack: AsyncExitStack, command: list[str], environment: dict[str, str]) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    # The SDK's client warns at each call of the tool its server does not list (``big``).
    logging.getLogger("mcp").setLevel(logging.ERROR)
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=environment)
    read, write = await stack.enter_async_context(stdio_client(parameters, errlog=_QUIET))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def _latencies(python: str, rounds: int, calls: int, directory: Path) -> dict[str, Any]:
    environment = dict(os.environ)
    big: dict[str, list[float]] = {path: [] for path in PATHS}
    async with AsyncExitStack() as stack:
        output = directory / "latency.jsonl"
        sessions = {path: await _open(stack, command(path, python, output), environment) for path in PATHS}
        for session in sessions.values():
            for _ in range(50):
                await session.call_tool("ok", {})
        samples = await interleaved_rounds(
            {path: partial(session.call_tool, "ok", {}) for path, session in sessions.items()}, rounds, calls
        )
        for _ in range(5):
            for path in PATHS:
                started = time.perf_counter_ns()
                await sessions[path].call_tool(BIG, {})
                big[path].append((time.perf_counter_ns() - started) / 1000)
    return {"samples": samples, "big": big}


async def interleaved_rounds(
    call: Mapping[str, Callable[[], Awaitable[Any]]], rounds: int, calls: int
) -> dict[str, list[float]]:
    """Microseconds of each call through each path (``call[path]()``: one ``tools/call``):
    ``rounds`` rounds of ``calls`` each, the paths' order shuffled every round (so that a noisy
    moment on a shared machine falls on all of them alike)."""
    samples: dict[str, list[float]] = {path: [] for path in call}
    for _ in range(rounds):
        order = list(call)
        random.shuffle(order)
        for path in order:
            for _ in range(calls):
                started = time.perf_counter_ns()
                await call[path]()
                samples[path].append((time.perf_counter_ns() - started) / 1000)
    return samples


def percentiles(values: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[98]


async def _calls_through(relayed: list[str], environment: dict[str, str], calls: int) -> None:
    async with AsyncExitStack() as stack:
        session = await _open(stack, relayed, environment)
        for _ in range(calls):
            await session.call_tool("ok", {})


def _per_request(program: list[str], out: Path, *, as_relay: bool) -> float:
    """Instructions per request of ``program`` alone (its children and the client not counted),
    run with FEW and then MANY requests: as a relay the client's calls, else ``program CALLS``."""
    environment = {
        **os.environ,
        **_QUIET_EXPORT,
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": os.pathsep.join([str(HERE / "pause_gc"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    counts = []
    for calls in (FEW, MANY):
        counted = out.with_suffix(f".{calls}")
        valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=no"]
        valgrind.append(f"--cachegrind-out-file={counted}")
        if as_relay:
            asyncio.run(_calls_through([*valgrind, *program], environment, calls))
        else:
            subprocess.run([*valgrind, *program, str(calls)], env=environment, check=True, capture_output=True)
        summary = next(line for line in counted.read_text().splitlines() if line.startswith("summary:"))
        counts.append(int(summary.split()[1]))
    return (counts[1] - counts[0]) / (MANY - FEW)


def _span_floor(calls: int) -> None:
    """``calls`` SERVER spans and points with the proxy's attributes and exporters, by hand."""
    from opentelemetry.trace import SpanKind, set_span_in_context

    from benchmarks.variants import END_ATTRIBUTES, POINT_ATTRIBUTES, SPAN_ATTRIBUTES, SPAN_NAMES
    from mcp_otel.proxy.telemetry import ProxyTelemetry
    from mcp_otel.semconv import DURATION_BUCKETS, MCP_SERVER_OPERATION_DURATION

    with tempfile.TemporaryDirectory() as directory:
        telemetry = ProxyTelemetry(Path(directory) / "floor.jsonl", "bench")
        tracer = telemetry.tracer()
        histogram = telemetry.meter().create_histogram(
            MCP_SERVER_OPERATION_DURATION, unit="s", explicit_bucket_boundaries_advisory=DURATION_BUCKETS
        )
        # The in-process floor's data for a tool call (benchmarks.variants): the proxy's spans have it too.
        name, attributes = SPAN_NAMES["tools/call"], SPAN_ATTRIBUTES["tools/call"]
        end, point = END_ATTRIBUTES["tools/call"], POINT_ATTRIBUTES["tools/call"]
        for _ in range(calls):
            started = time.perf_counter()
            span = tracer.start_span(name, kind=SpanKind.SERVER, attributes=attributes)
            span.set_attributes(end)
            span.end()
            histogram.record(time.perf_counter() - started, point, context=set_span_in_context(span))
        telemetry.shutdown()


def _memory(python: str, directory: Path) -> list[tuple[int, int]]:
    """The proxy's resident memory (kB) after more and more calls."""
    pid_file = directory / "proxy.pid"
    shell = ["/bin/sh", "-c", f'echo $$ > {pid_file}; exec "$@"', "sh"]

    def resident() -> int:
        status = Path(f"/proc/{pid_file.read_text().strip()}/status").read_text()
        return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))

    async def run() -> list[tuple[int, int]]:
        seen = []
        async with AsyncExitStack() as stack:
            relayed = [*shell, *command("mcp-otel proxy", python, directory / "memory.jsonl")]
            session = await _open(stack, relayed, dict(os.environ))
            made = 0
            for target in (1_000, 5_000, 10_000):
                while made < target:
                    await session.call_tool("ok", {})
                    made += 1
                seen.append((made, resident()))
        return seen

    return asyncio.run(run())


def run(python: str, rounds: int = 15, calls: int = 40) -> dict[str, Any]:
    """Every measurement, in this (mcp 2.x) environment."""
    with tempfile.TemporaryDirectory(prefix="mcp-otel-proxy-bench-") as name:
        directory = Path(name)
        print("bench: proxy: latency ...", file=sys.stderr)
        measured = asyncio.run(_latencies(python, rounds, calls, directory))
        latency = {path: percentiles(values) for path, values in measured["samples"].items()}
        big = {path: statistics.median(values) for path, values in measured["big"].items()}
        print("bench: proxy: instructions under cachegrind ...", file=sys.stderr)
        instructions = {
            path: _per_request(
                command(path, python, directory / "counted.jsonl"), directory / f"relay{n}", as_relay=True
            )
            for n, path in enumerate(PATHS[1:])
        }
        span_floor = _per_request([python, str(Path(__file__)), "span-floor"], directory / "floor", as_relay=False)
        print("bench: proxy: memory ...", file=sys.stderr)
        memory = _memory(python, directory)
    return {
        "latency_us": {path: list(values) for path, values in latency.items()},
        "big_us": big,
        "instructions": instructions,
        "span_floor": span_floor,
        "memory_kb": memory,
        "rounds": rounds,
        "calls": calls,
    }


# Issue 27: the proxy's instructions per request within the bare relay's plus 1.2x the floor's span and point.
SPAN_FLOOR_TARGET = 1.2


def markdown(result: dict[str, Any]) -> list[str]:
    latency, instructions = result["latency_us"], result["instructions"]
    direct_p50, direct_p99 = latency["direct"]
    bare, proxy = instructions["bare relay"], instructions["mcp-otel proxy"]
    allowed = bare + SPAN_FLOOR_TARGET * result["span_floor"]
    ratio = (proxy - bare) / result["span_floor"]
    lines = [
        "## `mcp-otel proxy` (stdio)",
        "",
        "A Python mcp 2.x client calls the benchmark server directly and through four relays, the",
        f"sessions open side by side, {result['rounds']} rounds of {result['calls']} `tools/call` each, interleaved",
        "in shuffled order: the bare relay (the proxy's floor: two threads of blocking reads and",
        "writes, observing nothing), the proxy's own relay (on uvloop) with nothing observed, and",
        "`mcp-otel proxy` (each message observed, each request a SERVER span and a point in its",
        "OTLP JSON lines file), on uvloop and on asyncio's own loop (as where uvloop is not",
        "installed). Latency is wall clock on a shared machine (orders of magnitude);",
        "instructions are the relay process's own under cachegrind (client and server native;",
        f"{FEW} and {MANY} calls, the collector off, telemetry exported at exit). The floor's span and",
        "point: the same SDK, exporters and attributes, by hand, counted the same way.",
        "",
        "| path | p50 µs | p99 µs | added p50 | added p99 | relay instructions / request | 10 MB result, median ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for path in (path for path in PATHS if path in latency):  # an earlier run may lack one
        p50, p99 = latency[path]
        counted = f"{instructions[path]:,.0f}" if path in instructions else "-"
        added = "- | -" if path == "direct" else f"{p50 - direct_p50:+,.0f} | {p99 - direct_p99:+,.0f}"
        lines.append(
            f"| {path} | {p50:,.0f} | {p99:,.0f} | {added} | {counted} | {result['big_us'][path] / 1000:,.1f} |"
        )
    verdict = "met" if proxy <= allowed else "MISSED"
    memory = result["memory_kb"]
    unobserved = instructions["relay, unobserved"]
    lines += [
        "",
        f"- The floor's span and point: {result['span_floor']:,.0f} instructions. The proxy's per request "
        f"over the bare relay's: {proxy - bare:,.0f} = {ratio:.2f}x the floor's span and point (target "
        f"<= {SPAN_FLOOR_TARGET}: {verdict}); of that, the relay (its event loop and line splitting) "
        f"{unobserved - bare:,.0f}, observing and recording {proxy - unobserved:,.0f}.",
    ]
    if (on_asyncio := instructions.get(PATHS[-1])) is not None:
        lines.append(
            f"- On asyncio's own loop, where uvloop is not installed: {on_asyncio - bare:,.0f} over the bare "
            f"relay's = {(on_asyncio - bare) / result['span_floor']:.2f}x the floor's span and point."
        )
    lines += [
        "- The proxy's resident memory after "
        + ", ".join(f"{made:,} calls: {rss / 1024:,.1f} MiB" for made, rss in memory)
        + f" ({(memory[-1][1] - memory[0][1]) / 1024:+,.1f} MiB over the last {memory[-1][0] - memory[0][0]:,}).",
        "",
    ]
    return lines


async def _unobserved(command: list[str]) -> int:
    from mcp_otel.proxy.stdio import relay

    class Unobserved:
        as_client = False

        def from_client(self, line: bytes) -> None:
            return None

        def from_server(self, line: bytes) -> None:
            return None

        def end(self, **_: Any) -> None:
            return None

    return await relay(command, Unobserved())  # type: ignore[arg-type]


if __name__ == "__main__":
    if sys.argv[1] == "--unobserved":
        from mcp_otel.proxy.main import _run

        sys.exit(_run(_unobserved(sys.argv[3:])))  # on the proxy's own event loop
    if sys.argv[1] == "span-floor":
        _span_floor(int(sys.argv[2]))
