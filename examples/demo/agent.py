"""The demo agent: a scripted agent (no LLM, no network) using four MCP servers over stdio.

It knows nothing about OpenTelemetry: run it under ``mcp-otel run`` to get the per-server table.
It reports progress on stderr. When OTEL_EXPORTER_OTLP_ENDPOINT is set (the full stack), the
servers are instrumented too (``mcp-otel run``'s auto-instrumentation reaches every Python child)
and export their spans and metrics there, as services ``mcp-demo-<role>``.

MCP_OTEL_DEMO_ROUNDS (default 1) repeats the script; with MCP_OTEL_DEMO_GATE naming a file, each
later round waits until that file exists (the stack test lets Prometheus see one round at a time).
MCP_OTEL_DEMO_PROXIED names servers (comma-separated roles) that run uninstrumented behind
``mcp-otel proxy`` instead, which makes their spans and metrics from the wire (the stack test
proxies one: its figures must not change).

healthy  20 lookups.
flaky    20 fetches; the server fails a seeded share of them.
slow     10 crunches: 6 finish, 2 the agent cancels (it stops waiting after 0.2 s), 2 hit the
         SDK's read timeout (0.2 s). Cancels are not failures; timeouts are.
careful  4 removals, each confirmed by the person first: the person declines 2. A person's no is
         a cancel (input_declined), not the server's failure.
"""

from __future__ import annotations

import os
import sys
from contextlib import AsyncExitStack, suppress
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import ElicitResult

SERVERS = Path(__file__).with_name("servers.py")
LOOKUPS, FETCHES, CRUNCHES = 20, 20, 10
SLOW_CALL, FAST_CALL, PATIENCE = 2.0, 0.05, 0.2
CANCELLED_CRUNCHES, TIMED_OUT_CRUNCHES = (2, 5), (3, 7)
REMOVALS, DECLINED_REMOVALS = 4, (1, 3)


SERVER_LOG = open(os.devnull, "w")  # noqa: SIM115 (the servers log tool errors' tracebacks)


def server_command(role: str) -> tuple[str, list[str], dict[str, str]]:
    """How to start a server: plain, or (a stack to export to) instrumented and exporting there."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "MCP_OTEL_"))}
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return sys.executable, [str(SERVERS), role], env
    exported = ("OTEL_EXPORTER_OTLP_", "OTEL_BSP_", "OTEL_METRIC_EXPORT_", "OTEL_INSTRUMENTATION_MCP_")
    env.update({key: value for key, value in os.environ.items() if key.startswith(exported)})
    env.update(
        OTEL_SERVICE_NAME=f"mcp-demo-{role}",
        OTEL_TRACES_EXPORTER="otlp_proto_http",
        OTEL_METRICS_EXPORTER="otlp_proto_http",
        OTEL_LOGS_EXPORTER="none",
    )
    server = [sys.executable, str(SERVERS), role]
    if role in os.environ.get("MCP_OTEL_DEMO_PROXIED", "").split(","):
        # Uninstrumented: the agent's auto-instrumentation (mcp-otel run) reaches every Python
        # child through PYTHONPATH (its sitecustomize), so the server's goes without it.
        env["PYTHONPATH"] = os.pathsep.join(
            path for path in env.get("PYTHONPATH", "").split(os.pathsep) if not path.endswith("auto_instrumentation")
        )
        proxy = str(Path(sys.executable).with_name("mcp-otel"))
        return proxy, ["proxy", "--name", f"mcp-demo-{role}", "--", *server], env
    # Instrumented as the agent is: mcp-otel run's sitecustomize, on the PYTHONPATH the server
    # inherits, configures the SDK from the variables above (no configurator to install).
    return server[0], server[1:], env


async def person(context: Any, params: Any) -> ElicitResult:
    """The person at the keyboard: confirms removing r0 and r2, declines r1 and r3."""
    declined = {f"Remove r{index}?" for index in DECLINED_REMOVALS}
    if params.message in declined:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content={"sure": True})


async def connect(stack: AsyncExitStack, role: str) -> ClientSession:
    command, args, env = server_command(role)
    parameters = StdioServerParameters(command=command, args=args, env=env)
    read, write = await stack.enter_async_context(stdio_client(parameters, errlog=SERVER_LOG))
    session = await stack.enter_async_context(ClientSession(read, write, elicitation_callback=person))
    await session.initialize()
    await session.list_tools()
    return session


async def main() -> None:
    async with AsyncExitStack() as stack:
        print("demo: starting the healthy, flaky, slow and careful servers ...", file=sys.stderr, flush=True)
        healthy, flaky, slow, careful = [await connect(stack, role) for role in ("healthy", "flaky", "slow", "careful")]

        rounds = int(os.environ.get("MCP_OTEL_DEMO_ROUNDS", "1"))
        gate = os.environ.get("MCP_OTEL_DEMO_GATE")
        for number in range(1, rounds + 1):
            if number > 1 and gate:
                print(f"demo: round {number} waits for {gate}", file=sys.stderr, flush=True)
                while not await anyio.Path(gate).exists():  # noqa: ASYNC110 (another process makes it)
                    await anyio.sleep(0.1)
            await one_round(healthy, flaky, slow, careful)
            print(f"demo: round {number} done", file=sys.stderr, flush=True)
        print("demo: done", file=sys.stderr, flush=True)


async def one_round(healthy: ClientSession, flaky: ClientSession, slow: ClientSession, careful: ClientSession) -> None:
    print(f"demo: {LOOKUPS} lookups on healthy ...", file=sys.stderr, flush=True)
    for key in range(LOOKUPS):
        await healthy.call_tool("lookup", {"key": f"k{key}"})

    print(f"demo: {FETCHES} fetches on flaky ...", file=sys.stderr, flush=True)
    for item in range(FETCHES):
        with suppress(Exception):  # a JSON-RPC error: the agent carries on
            await flaky.call_tool("fetch", {"item": item})

    print(f"demo: {CRUNCHES} crunches on slow (some cancelled, some timing out) ...", file=sys.stderr, flush=True)
    for index in range(CRUNCHES):
        if index in CANCELLED_CRUNCHES:  # the agent gives up waiting: a cancel
            with anyio.move_on_after(PATIENCE):
                await slow.call_tool("crunch", {"seconds": SLOW_CALL})
        elif index in TIMED_OUT_CRUNCHES:  # the SDK's read timeout expires: a failure
            with suppress(Exception):
                await slow.call_tool("crunch", {"seconds": SLOW_CALL}, read_timeout_seconds=PATIENCE)
        else:
            await slow.call_tool("crunch", {"seconds": FAST_CALL})

    print(
        f"demo: {REMOVALS} removals on careful (the person declines {len(DECLINED_REMOVALS)}) ...",
        file=sys.stderr,
        flush=True,
    )
    for index in range(REMOVALS):
        await careful.call_tool("remove", {"key": f"r{index}"})


if __name__ == "__main__":
    anyio.run(main)
