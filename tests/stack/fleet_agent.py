"""One agent of the gateway-tier test's fleet (tests/stack/test_gateway_tier.py), and its server.

``python -m tests.stack.fleet_agent AGENT CALLS ROUNDS GATE [PACE]`` (run under ``mcp-otel run``)
starts its own server over stdio, ``fleet-AGENT``, instrumented too (``mcp-otel run``'s
auto-instrumentation reaches every Python child through PYTHONPATH; both export OTLP where
OTEL_EXPORTER_OTLP_ENDPOINT says), and makes CALLS tool calls per round, a seeded mix
(``plan``): ok, failures of four kinds (tool error, caller fault -32602, server fault -32603, a
crash), and calls it stops waiting for (cancelled). Calls come in tasks of TASK calls, each task a
trace of its own (a root span of the agent's, then each call's CLIENT span and its SERVER span
from the server's process), so a trace mixes outcomes as an agent's runs do. After each round but
the last it prints "round N done" and waits until GATE-N exists. PACE (seconds, default 0) is a
pause after each task, to spread the calls over time.

``python -m tests.stack.fleet_agent serve NAME`` is the server: the test tool set, named NAME.
"""

from __future__ import annotations

import os
import random
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio

# The mix each agent's plan draws from, in percent.
MIX = {"ok": 70, "tool_error": 3, "rpc_error": 2, "server_error": 3, "crash": 2, "cancelled": 20}
PATIENCE = 0.05  # seconds before the agent gives up on a cancelled call's slow tool
TASK = 2  # calls per task (per trace)


def plan(agent: int, calls: int) -> list[str]:
    """The calls one agent makes in one round, in order (the same every run)."""
    return random.Random(f"fleet-{agent}").choices(list(MIX), list(MIX.values()), k=calls)


def server_name(agent: int) -> str:
    return f"fleet-{agent}"


async def call(session: Any, kind: str) -> None:
    from mcp.shared.exceptions import MCPError

    if kind == "cancelled":
        with anyio.move_on_after(PATIENCE):
            await session.call_tool("slow", {"seconds": 30})
        return
    with suppress(MCPError):  # the JSON-RPC errors: the instrumentation records them
        await session.call_tool(kind, {})


async def run_agent(agent: int, calls: int, rounds: int, gate: Path, pace: float) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from opentelemetry import trace

    tracer = trace.get_tracer("fleet-agent")

    exported = ("OTEL_EXPORTER_OTLP_", "OTEL_BSP_", "OTEL_METRIC_EXPORT_", "OTEL_TRACES_", "OTEL_METRICS_")
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_") or key.startswith(exported)}
    env.update(OTEL_SERVICE_NAME=f"fleet-server-{agent}", OTEL_LOGS_EXPORTER="none")
    # Instrumented as the agent is: PYTHONPATH (kept above) leads to mcp-otel run's sitecustomize.
    module = ["-m", "tests.stack.fleet_agent", "serve", server_name(agent)]
    parameters = StdioServerParameters(command=sys.executable, args=module, env=env, cwd=os.getcwd())
    async with stdio_client(parameters) as streams, ClientSession(*streams) as session:
        await session.initialize()
        for round_ in range(1, rounds + 1):
            kinds = plan(agent, calls)
            for start in range(0, calls, TASK):
                with tracer.start_as_current_span("task"):
                    for kind in kinds[start : start + TASK]:
                        await call(session, kind)
                await anyio.sleep(pace)
            if round_ < rounds:
                print(f"round {round_} done", flush=True)
                while not await anyio.Path(f"{gate}-{round_}").exists():  # noqa: ASYNC110 (the test makes it)
                    await anyio.sleep(0.1)
    print("done", flush=True)


def serve(name: str) -> None:
    from tests.servers import v2_server
    from tests.servers.tools import serve_stdio

    server = v2_server.build_server(stdio=True)
    server.name = name
    anyio.run(serve_stdio, server)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        agent, calls, rounds = (int(value) for value in sys.argv[1:4])
        pace = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
        anyio.run(run_agent, agent, calls, rounds, Path(sys.argv[4]), pace)
