"""``mcp-otel proxy --listen --upstream`` per request over streamable HTTP, side by side in one run
(issue 29).

A Python mcp 2.x client calls the high-level test server (uninstrumented, uvicorn) directly and
through three reverse proxies on 127.0.0.1, sessions open side by side and rounds interleaved in
shuffled order:

* the proxy's own relay with nothing observed (``--unobserved`` below): what aiohttp's serving
  and forwarding cost, the proxy's floor;
* ``mcp-otel proxy``: the same relay, each message observed and each request a SERVER span and a
  point, exported to its OTLP JSON lines file;
* ``mcp-otel proxy`` on uvloop's event loop (when uvloop is installed): what a faster loop buys;
* the same relay made of what the SDK itself serves and calls with (starlette on uvicorn,
  forwarding with httpx2, mcp 2.x's HTTP client; ``--starlette`` below), observing nothing: the
  stack the proxy did not choose, against the one it did.

Measured: latency added per ``tools/call`` over direct (p50, p99), and each proxy process's CPU
time per request (user + system, from ``/proc``, over the measured rounds).

    python benchmarks/http_proxy.py --unobserved LISTEN UPSTREAM   (the unobserved relay)
    python benchmarks/http_proxy.py --starlette LISTEN UPSTREAM    (the other stack's relay)
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.proxy import interleaved_rounds, percentiles  # noqa: E402
from tests.processes import LOOPBACK, free_port, running  # noqa: E402

PATHS = (
    "direct",
    "relay, unobserved",
    "mcp-otel proxy",
    "mcp-otel proxy, uvloop",
    "starlette/uvicorn/httpx2 relay, unobserved",
)
_STARLETTE = "starlette/uvicorn/httpx2 relay, unobserved"
_CLI = "import sys; from mcp_otel.cli import main; sys.exit(main())"
_UVLOOP = "import asyncio, uvloop; asyncio.set_event_loop_policy(uvloop.EventLoopPolicy()); " + _CLI


def _command(path: str, python: str, listen: str, upstream: str, output: Path) -> list[str]:
    proxy = ["proxy", "--name", "bench", "--output", str(output), "--listen", listen, "--upstream", upstream]
    if path == "relay, unobserved":
        return [python, str(Path(__file__)), "--unobserved", listen, upstream]
    if path == _STARLETTE:
        return [python, str(Path(__file__)), "--starlette", listen, upstream]
    if path == "mcp-otel proxy, uvloop":
        return [python, "-c", _UVLOOP, *proxy]
    return [python, "-c", _CLI, *proxy]


@contextmanager
def _serving(python: str, directory: Path, paths: tuple[str, ...]) -> Iterator[dict[str, tuple[str, int]]]:
    """The upstream and each proxy; their URLs and (for the proxies) PIDs."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT)
    upstream_port = free_port()
    upstream = f"http://{LOOPBACK}:{upstream_port}/mcp"
    found: dict[str, tuple[str, int]] = {}
    with ExitStack() as stack:
        server = [python, "-m", "tests.servers.highlevel_server", "http", str(upstream_port)]
        process = stack.enter_context(running(server, ports=[upstream_port], env=env, cwd=ROOT))
        found["direct"] = (upstream, process.pid)
        for n, path in enumerate(paths[1:]):
            port = free_port()
            command = _command(path, python, f"{LOOPBACK}:{port}", upstream, directory / f"proxy{n}.jsonl")
            process = stack.enter_context(running(command, ports=[port], env=env, cwd=ROOT))
            found[path] = (f"http://{LOOPBACK}:{port}/mcp", process.pid)
        yield found


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def _measure(servers: dict[str, tuple[str, int]], rounds: int, calls: int) -> dict[str, Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    logging.getLogger("mcp").setLevel(logging.ERROR)
    async with AsyncExitStack() as stack:
        sessions = {}
        for path, (url, _) in servers.items():
            read, write, *_ = await stack.enter_async_context(streamable_http_client(url))
            sessions[path] = await stack.enter_async_context(ClientSession(read, write))
            await sessions[path].initialize()
            for _ in range(50):
                await sessions[path].call_tool("ok", {})
        started = {path: _cpu_seconds(pid) for path, (_, pid) in servers.items()}
        samples = await interleaved_rounds(sessions, rounds, calls)
        cpu = {path: _cpu_seconds(pid) - started[path] for path, (_, pid) in servers.items()}
    return {"samples": samples, "cpu": cpu}


def run(python: str, rounds: int = 15, calls: int = 40) -> dict[str, Any]:
    """Every path this environment can run (uvloop's and httpx2's only where installed)."""
    optional = ("uvloop", "httpx2")  # modules a path runs on, named in it, not always installed
    paths = tuple(p for p in PATHS if all(module not in p or importlib.util.find_spec(module) for module in optional))
    print("bench: http proxy: latency and CPU ...", file=sys.stderr)
    with (
        tempfile.TemporaryDirectory(prefix="mcp-otel-http-bench-") as name,
        _serving(python, Path(name), paths) as servers,
    ):
        measured = asyncio.run(_measure(servers, rounds, calls))
    requests = rounds * calls  # through each path; the upstream serves them all
    served = {path: requests * (len(paths) if path == "direct" else 1) for path in paths}
    return {
        "latency_us": {path: percentiles(values) for path, values in measured["samples"].items()},
        "cpu_us": {path: seconds * 1e6 / served[path] for path, seconds in measured["cpu"].items()},
        "rounds": rounds,
        "calls": calls,
    }


def markdown(result: dict[str, Any]) -> list[str]:
    latency, cpu = result["latency_us"], result["cpu_us"]
    direct_p50, direct_p99 = latency["direct"]
    lines = [
        "## `mcp-otel proxy` (streamable HTTP)",
        "",
        "A Python mcp 2.x client (a handshake-era session each) calls the high-level test server",
        "(uvicorn, uninstrumented) directly and through reverse proxies on 127.0.0.1, sessions open",
        f"side by side, {result['rounds']} rounds of {result['calls']} `tools/call` each, interleaved in shuffled",
        "order: the proxy's relay observing nothing (aiohttp serving and forwarding: its floor),",
        "`mcp-otel proxy` (each message observed, each request a SERVER span and a point in its OTLP",
        "JSON lines file), the same on uvloop's event loop, and a relay of the SDK's own stack",
        "(starlette on uvicorn, forwarding with httpx2) observing nothing. Latency is wall clock on a shared",
        "machine (orders of magnitude); CPU is each process's user and system time over the rounds,",
        "per request (in the direct row the upstream's, over every request it served).",
        "",
        "| path | p50 µs | p99 µs | added p50 | added p99 | process CPU µs / request |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for path, (p50, p99) in latency.items():
        added = "- | -" if path == "direct" else f"{p50 - direct_p50:+,.0f} | {p99 - direct_p99:+,.0f}"
        lines.append(f"| {path} | {p50:,.0f} | {p99:,.0f} | {added} | {cpu[path]:,.0f} |")
    lines += [
        "",
        "ToolHive's proxy is not measured beside it: the Go module proxy this project builds from",
        "refuses modules that `thv` needs (v0.63.0: `github.com/stacklok/toolhive-core/redisconn`,",
        "`github.com/jwx-go/jwkfetch/v4`, `golang.org/x/exp/jsonrpc2` at the versions it pins, and",
        "three more; v0.50.0 and v0.40.0 likewise).",
        "",
    ]
    return lines


async def _unobserved(listen: str, upstream: str) -> None:
    """The proxy's relay, served as ``mcp-otel proxy`` serves it, with sessions that observe
    nothing, until SIGTERM."""
    from mcp_otel.proxy.main import serve_http

    class Unobserved:
        session_id = None
        protocol_version = None

        def __getattr__(self, name: str) -> Any:
            return lambda *args, **kwargs: []

    host, _, port = listen.rpartition(":")
    await serve_http(host, int(port), upstream, Unobserved)  # type: ignore[arg-type]


def _starlette(listen: str, upstream: str) -> None:
    """A reverse proxy made of the SDK's own stack, observing nothing: starlette on uvicorn
    serves, httpx2 (mcp 2.x's client) forwards over pooled connections, answers streamed chunk by
    chunk, until SIGTERM."""
    import httpx2
    import uvicorn
    from starlette.applications import Starlette
    from starlette.background import BackgroundTask
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    from mcp_otel.proxy.http import _HOP_BY_HOP  # the headers the proxy does not relay either

    client = httpx2.AsyncClient(timeout=None)

    async def relay(request: Request) -> StreamingResponse:
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP]
        outgoing = client.build_request(request.method, upstream, headers=headers, content=await request.body())
        answer = await client.send(outgoing, stream=True)
        kept = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_BY_HOP}
        return StreamingResponse(
            answer.aiter_raw(), status_code=answer.status_code, headers=kept, background=BackgroundTask(answer.aclose)
        )

    app = Starlette(routes=[Route("/{path:path}", relay, methods=["GET", "POST", "DELETE"])])
    host, _, port = listen.rpartition(":")
    uvicorn.run(app, host=host, port=int(port), log_level="warning")


if __name__ == "__main__":
    if sys.argv[1] == "--unobserved":
        asyncio.run(_unobserved(sys.argv[2], sys.argv[3]))
    elif sys.argv[1] == "--starlette":
        _starlette(sys.argv[2], sys.argv[3])
    else:
        result = run(sys.executable, int(sys.argv[1]) if len(sys.argv) > 1 else 5, 20)
        print("\n".join(markdown(result)))
