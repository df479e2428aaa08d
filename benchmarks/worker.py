"""One benchmark variant in its own process: ``python worker.py VARIANT TRANSPORT OPERATION [CALLS]``.

Sets the variant up, opens a session to the benchmark server (in memory: in this process; stdio:
a subprocess set up the same way) and warms up. Then, timed: answers each line "N" on stdin with
the mean time of N sequential requests (``tools/call ok``, or ``resources/read bench://ok``) in
nanoseconds, until stdin closes. Counted (CALLS given, run under cachegrind): makes CALLS requests
and exits, so two runs differing only in CALLS differ by exactly those requests' instructions.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio

from benchmarks.server import pause_gc, tool_names
from benchmarks.variants import RESOURCE, set_up

WARM_UP = 100


@asynccontextmanager
async def session(transport: str, variant: str, server: Any = None) -> AsyncIterator[Any]:
    """A client session to the benchmark server (in memory: ``server``, by default a new one)."""
    from benchmarks.server import build

    server = build() if server is None else server
    major = int(version("mcp").split(".")[0])
    if transport == "stdio":
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        server = Path(__file__).with_name("server.py")
        parameters = StdioServerParameters(command=sys.executable, args=[str(server), variant], env=dict(os.environ))
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as client_session:
            await client_session.initialize()
            yield client_session
    elif major == 1:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server) as client_session:
            yield client_session
    else:
        from mcp import Client

        async with Client(server, mode="legacy") as client:
            yield client.session


async def main(variant: str, transport: str, operation: str, counted: int | None) -> None:
    wrap = set_up(variant, transport, operation)
    async with session(transport, variant) as client_session:
        await client_session.list_tools()
        names = itertools.cycle(tool_names())
        if operation == "resources/read":
            call = wrap(lambda: client_session.read_resource(RESOURCE))
        else:
            call = wrap(lambda **options: client_session.call_tool(next(names), {}, **options))
        for _ in range(WARM_UP):
            await call()
        if counted is not None:
            pause_gc()
            for _ in range(counted):
                await call()
            return
        print(json.dumps({"ready": True, "versions": versions()}), flush=True)
        while line := await anyio.to_thread.run_sync(sys.stdin.readline):
            count = int(line)
            started = time.perf_counter_ns()
            for _ in range(count):
                await call()
            print(json.dumps({"ns_per_call": (time.perf_counter_ns() - started) / count}), flush=True)


def versions() -> dict[str, str]:
    names = [
        "mcp",
        "opentelemetry-sdk",
        "opentelemetry-instrumentation-mcp",
        "logfire",
        "openinference-instrumentation-mcp",
    ]
    found = {}
    for name in names:
        with suppress(PackageNotFoundError):
            found[name] = version(name)
    return found


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else None)
