"""``mcp-otel proxy --listen --upstream`` per request over streamable HTTP, side by side in one run
(issues 29 and 43).

A client calls an upstream server directly and through reverse proxies on 127.0.0.1, one
session and one keep-alive connection each, rounds interleaved in shuffled order. The client is
aiohttp POSTing ``tools/call`` and reading the whole answer (a handshake-era session each), so
that a sample is one HTTP exchange and nothing of an SDK client's own work. The paths:

* ``Go reverse proxy``: the control, what ToolHive's proxy is built on: Go's
  ``net/http/httputil`` reverse proxy, answers flushed as they come (``benchmarks/goproxy``,
  standard library only; ``make goproxy``);
* the proxy's own relay with nothing observed (``--unobserved`` below): what serving and
  forwarding cost, the proxy's floor;
* ``mcp-otel proxy``: the same relay, each message observed and each request a SERVER span and a
  point, exported to its OTLP JSON lines file;
* ``mcp-otel proxy`` on asyncio's own event loop (uvloop hidden from it): what uvloop, the
  proxy's loop where it is installed, buys;
* the same relay made of what the SDK itself serves and calls with (starlette on uvicorn,
  forwarding with httpx2, mcp 2.x's HTTP client; ``--starlette`` below), observing nothing.

Two upstreams: the Python high-level test server (uvicorn) and ``server-everything``, the
TypeScript SDK's (Node), in their streamable HTTP modes. Measured: latency added per request over
direct (p50, p99), and each process's CPU time per request (user + system, from ``/proc``, over
the measured rounds); the targets are ``mcp-otel proxy`` at most twice the Go reverse proxy in
both (:func:`ratios`).

    python benchmarks/http_proxy.py --unobserved LISTEN UPSTREAM   (the unobserved relay)
    python benchmarks/http_proxy.py --starlette LISTEN UPSTREAM    (the other stack's relay)
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.proxy import CLI, CLI_ON_ASYNCIO, interleaved_rounds, percentiles  # noqa: E402
from tests.processes import LOOPBACK, free_port, running  # noqa: E402

GO_PROXY = ROOT / ".cache" / "bin" / "goproxy"
GO = "Go reverse proxy"
MCP_OTEL = "mcp-otel proxy"
_STARLETTE = "starlette/uvicorn/httpx2 relay, unobserved"
_ASYNCIO = "mcp-otel proxy, asyncio's loop"
PATHS = ("direct", GO, "relay, unobserved", MCP_OTEL, _ASYNCIO, _STARLETTE)
_THIRD_PARTY = ROOT / "tests" / "third_party"
EVERYTHING = _THIRD_PARTY / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
# Each upstream: how it is started on a port, and the tool called (it answers at once).
UPSTREAMS: dict[str, tuple[str, dict[str, Any]]] = {
    "Python (uvicorn)": ("ok", {}),
    "TypeScript (Node, server-everything)": ("echo", {"message": "hi"}),
}
_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
_WARM_UP = 50  # requests through each path before the measured rounds


def _upstream_command(upstream: str, python: str, port: int) -> tuple[list[str], Path]:
    if upstream.startswith("Python"):
        return [python, "-m", "tests.servers.highlevel_server", "http", str(port)], ROOT
    if not EVERYTHING.exists() or not shutil.which("node"):
        raise SystemExit("bench: server-everything is not installed: `make third-party` installs it")
    return ["node", "--import", str(_THIRD_PARTY / "loopback.mjs"), str(EVERYTHING), "streamableHttp"], _THIRD_PARTY


def _command(path: str, python: str, listen: str, upstream: str, output: Path) -> list[str]:
    proxy = ["proxy", "--name", "bench", "--output", str(output), "--listen", listen, "--upstream", upstream]
    if path == GO:
        if not GO_PROXY.exists():
            raise SystemExit(f"bench: {GO_PROXY} is missing: `make goproxy` builds it")
        origin = upstream.rsplit("/", 1)[0]
        return [str(GO_PROXY), "-listen", listen, "-upstream", origin]
    if path == "relay, unobserved":
        return [python, str(Path(__file__)), "--unobserved", listen, upstream]
    if path == _STARLETTE:
        return [python, str(Path(__file__)), "--starlette", listen, upstream]
    if path == _ASYNCIO:
        return [python, "-c", CLI_ON_ASYNCIO, *proxy]
    return [python, "-c", CLI, *proxy]


@contextmanager
def _serving(
    python: str, upstream: str, directory: Path, paths: tuple[str, ...]
) -> Iterator[dict[str, tuple[str, int]]]:
    """The upstream and each proxy; their URLs and PIDs."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT)
    upstream_port = free_port()
    url = f"http://{LOOPBACK}:{upstream_port}/mcp"
    found: dict[str, tuple[str, int]] = {}
    with ExitStack() as stack:
        server, cwd = _upstream_command(upstream, python, upstream_port)
        process = stack.enter_context(
            running(server, ports=[upstream_port], env={**env, "PORT": str(upstream_port)}, cwd=cwd)
        )
        found["direct"] = (url, process.pid)
        for n, path in enumerate(paths[1:]):
            port = free_port()
            command = _command(path, python, f"{LOOPBACK}:{port}", url, directory / f"proxy{n}.jsonl")
            process = stack.enter_context(
                running(command, ports=[port], env=env, cwd=ROOT, log=directory / f"proxy{n}.log")
            )
            found[path] = (f"http://{LOOPBACK}:{port}/mcp", process.pid)
        yield found


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


class _Client:
    """One session through one path, on one keep-alive connection: POSTs and whole answers."""

    def __init__(self, url: str) -> None:
        import aiohttp

        self._url = url
        self._http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
        self._headers = dict(_HEADERS)
        self._id = 0

    async def post(self, message: dict[str, Any]) -> tuple[int, bytes]:
        async with self._http.post(self._url, data=json.dumps(message), headers=self._headers) as answer:
            if session_id := answer.headers.get("mcp-session-id"):
                self._headers["mcp-session-id"] = session_id
            return answer.status, await answer.read()

    async def open(self) -> None:
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        await self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        self._headers["mcp-protocol-version"] = "2025-06-18"
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str, arguments: dict[str, Any]) -> None:
        """One ``tools/call``, its whole answer read (a failed one fails the run)."""
        self._id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self._id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        status, body = await self.post(message)
        if status != 200 or b'"result"' not in body:
            raise RuntimeError(f"bench: {self._url} answered {status}: {body[:200]!r}")

    async def close(self) -> None:
        await self._http.close()


async def _measure(
    servers: dict[str, tuple[str, int]], tool: str, arguments: dict[str, Any], rounds: int, calls: int
) -> dict[str, Any]:
    clients = {path: _Client(url) for path, (url, _) in servers.items()}
    try:
        for client in clients.values():
            await client.open()
            for _ in range(_WARM_UP):
                await client.call(tool, arguments)
        started = {path: _cpu_seconds(pid) for path, (_, pid) in servers.items()}
        calling = {path: partial(client.call, tool, arguments) for path, client in clients.items()}
        samples = await interleaved_rounds(calling, rounds, calls)
        cpu = {path: _cpu_seconds(pid) - started[path] for path, (_, pid) in servers.items()}
    finally:
        for client in clients.values():
            await client.close()
    return {"samples": samples, "cpu": cpu}


def run(python: str, rounds: int = 25, calls: int = 40) -> dict[str, Any]:
    """Every path this environment can run (httpx2's only where installed), against
    each upstream."""
    optional = ("httpx2",)  # modules a path runs on, named in it, not always installed
    paths = tuple(p for p in PATHS if all(module not in p or importlib.util.find_spec(module) for module in optional))
    measured: dict[str, Any] = {}
    for upstream, (tool, arguments) in UPSTREAMS.items():
        print(f"bench: http proxy: latency and CPU, {upstream} ...", file=sys.stderr)
        with (
            tempfile.TemporaryDirectory(prefix="mcp-otel-http-bench-") as name,
            _serving(python, upstream, Path(name), paths) as servers,
        ):
            figures = asyncio.run(_measure(servers, tool, arguments, rounds, calls))
        requests = rounds * calls  # through each path; the upstream serves them all
        served = {path: requests * (len(paths) if path == "direct" else 1) for path in paths}
        measured[upstream] = {
            "latency_us": {path: percentiles(values) for path, values in figures["samples"].items()},
            "cpu_us": {path: seconds * 1e6 / served[path] for path, seconds in figures["cpu"].items()},
        }
    return {"upstreams": measured, "rounds": rounds, "calls": calls}


def ratios(figures: dict[str, Any]) -> tuple[float, float]:
    """``mcp-otel proxy`` over the Go reverse proxy, for one upstream: added p50, CPU per request."""
    latency, cpu = figures["latency_us"], figures["cpu_us"]
    direct = latency["direct"][0]
    return _ratio(latency[MCP_OTEL][0] - direct, latency[GO][0] - direct), _ratio(cpu[MCP_OTEL], cpu[GO])


def _ratio(value: float, control: float) -> float:
    return value / control if control > 0 else math.nan  # a run too short to count the control's CPU


def markdown(result: dict[str, Any]) -> list[str]:
    lines = [
        "## `mcp-otel proxy` (streamable HTTP)",
        "",
        "A client (aiohttp, one keep-alive connection and one handshake-era session per path) POSTs",
        "`tools/call` and reads the whole answer, directly and through reverse proxies on 127.0.0.1,",
        f"{result['rounds']} rounds of {result['calls']} calls each, interleaved in shuffled order: Go's",
        "`net/http/httputil` reverse proxy (the control: what ToolHive's proxy is built on), the",
        "proxy's relay observing nothing (its floor), `mcp-otel proxy` (each message observed, each",
        "request a SERVER span and a point in its OTLP JSON lines file; on uvloop's event loop, as",
        "installed), the same on asyncio's own loop, and a relay of the SDK's own stack (starlette on",
        "uvicorn, forwarding with httpx2) observing nothing. Latency is wall clock on a shared",
        "machine; CPU is each process's user and system time over the rounds, per request (in the",
        "direct row the upstream's, over every request it served). The target: `mcp-otel proxy` at",
        "most 2.0x the Go reverse proxy in added p50 and in CPU per request.",
        "",
    ]
    for upstream, figures in result["upstreams"].items():
        latency, cpu = figures["latency_us"], figures["cpu_us"]
        direct_p50, direct_p99 = latency["direct"]
        added, per_request = ratios(figures)
        lines += [
            f"### {upstream} upstream",
            "",
            f"`mcp-otel proxy` / Go reverse proxy: **{added:.2f}x** in added p50, "
            f"**{per_request:.2f}x** in CPU per request.",
            "",
            "| path | p50 µs | p99 µs | added p50 | added p99 | process CPU µs / request |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for path, (p50, p99) in latency.items():
            shown = "- | -" if path == "direct" else f"{p50 - direct_p50:+,.0f} | {p99 - direct_p99:+,.0f}"
            lines.append(f"| {path} | {p50:,.0f} | {p99:,.0f} | {shown} | {cpu[path]:,.0f} |")
        lines.append("")
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
        from mcp_otel.proxy.main import _run

        _run(_unobserved(sys.argv[2], sys.argv[3]))  # on the proxy's own event loop
    elif sys.argv[1] == "--starlette":
        _starlette(sys.argv[2], sys.argv[3])
    else:
        result = run(sys.executable, int(sys.argv[1]) if len(sys.argv) > 1 else 5, 20)
        print("\n".join(markdown(result)))
