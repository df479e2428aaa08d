"""A new user's first hour with Rust, from docs/rust.md alone: in an empty folder, the page's
commands as written (a clone of this checkout, a crate of the user's own with `cargo add --path`),
its example program saved from the page's snippets, built and run. The agent and the server it
starts write their spans as JSON lines (the page's own exporter); this test reads them: each call
is one trace, and every span and status is exactly what the page's table says.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.first_hour.docs_commands import REPO_ROOT, run
from tests.processes import needs

PAGE = REPO_ROOT / "docs" / "rust.md"
PROTOCOL = "2025-11-25"  # what rmcp 3.11's server agrees with its own client
# Every span's session: the server, the protocol, and the transport (both sides wrap stdio).
SERVER = {
    "mcp.server.name": "weather",
    "mcp.server.version": "2.1.0",
    "mcp.protocol.version": PROTOCOL,
    "network.transport": "pipe",
}
ROOT = "0" * 16

pytestmark = needs("cargo is not installed" if shutil.which("cargo") is None else None)


def spans(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def tool_call(tool: str, **outcome: str) -> dict[str, str]:
    return (
        {"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
        | SERVER
        | outcome
    )


OK = {"mcp.request.outcome": "ok", "tool.outcome": "ok"}
TOOL_ERROR = {"mcp.request.outcome": "failed", "tool.outcome": "failed", "error.type": "tool_error"}
TIMEOUT = {"mcp.request.outcome": "failed", "tool.outcome": "failed", "error.type": "timeout"}
ERROR, UNSET = 'Error { description: "" }', "Unset"


def cancelled(reason: str) -> dict[str, str]:
    return {
        "mcp.request.outcome": "cancelled",
        "tool.outcome": "cancelled",
        "mcp.request.cancel.reason": reason,
        "tool.cancel.reason": reason,
    }


BY_CALLER, BY_CLIENT = cancelled("caller"), cancelled("client")
HANDSHAKE = {"mcp.method.name": "initialize", "jsonrpc.request.id": "0", "mcp.request.outcome": "ok"} | SERVER
# Each call of the agent: its span name, its CLIENT span's attributes and status, its SERVER span's
# (both also have the request's id).
CALLS = [
    ("tools/call forecast", tool_call("forecast", **OK), UNSET, tool_call("forecast", **OK), UNSET),
    ("tools/call forecast", tool_call("forecast", **TOOL_ERROR), ERROR, tool_call("forecast", **TOOL_ERROR), ERROR),
    ("tools/call radar", tool_call("radar", **BY_CALLER), UNSET, tool_call("radar", **BY_CLIENT), UNSET),
    ("tools/call radar", tool_call("radar", **TIMEOUT), ERROR, tool_call("radar", **BY_CLIENT), UNSET),
]  # fmt: skip


def test_the_pages_agent_and_server_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "user"
    folder.mkdir()
    completed = run([PAGE], "rust", folder)
    assert completed.stdout.splitlines() == [
        "forecast: sunny in Paris (isError false)",
        "forecast: which city? (isError true)",
        "radar: deadline has elapsed",
        "radar: request timeout after PT0.2S",
    ]
    weather = folder / "weather"
    agent, server = spans(weather / "agent-spans.json"), spans(weather / "server-spans.json")

    # The agent's calls, in the order they ended: one CLIENT span each, a root, with its request id.
    calls = [s for s in agent if s["name"].startswith("tools/call")]
    assert [(s["name"], s["kind"], s["attributes"], s["status"]) for s in calls] == [
        (name, "Client", said | {"jsonrpc.request.id": str(index + 1)}, status)
        for index, (name, said, status, *_) in enumerate(CALLS)
    ]
    assert {s["parent"] for s in calls} == {ROOT}
    # The wrapped transport's: the handshake first, named by the server's answer, then rmcp's own
    # notifications, each cancel under the call it cancels.
    handshake, initialized = agent[0], agent[1]
    assert (handshake["name"], handshake["kind"], handshake["parent"], handshake["attributes"]) == (
        "initialize",
        "Client",
        ROOT,
        HANDSHAKE,
    )
    assert (initialized["name"], initialized["kind"], initialized["attributes"]) == (
        "notifications/initialized",
        "Client",
        {"mcp.method.name": "notifications/initialized"} | SERVER,
    )
    cancels = [s for s in agent if s["name"] == "notifications/cancelled"]
    assert [(s["kind"], s["parent"], s["attributes"]) for s in cancels] == [
        ("Client", call["span"], {"mcp.method.name": "notifications/cancelled"} | SERVER) for call in calls[2:]
    ]
    assert len(agent) == len(CALLS) + 4

    # The server's: each request's SERVER span the child of the agent's CLIENT span, in its trace.
    by_parent = {s["parent"]: s for s in server}
    for index, ((name, _, _, said, status), client) in enumerate(zip(CALLS, calls, strict=True)):
        received = by_parent[client["span"]]
        assert (received["name"], received["kind"], received["trace"]) == (name, "Server", client["trace"])
        assert (received["attributes"], received["status"]) == (said | {"jsonrpc.request.id": str(index + 1)}, status)
    received = by_parent[handshake["span"]]
    assert (received["name"], received["kind"], received["trace"]) == ("initialize", "Server", handshake["trace"])
    assert received["attributes"] == HANDSHAKE
    # The notifications: each the child of the agent's span of it, in its trace, stating the same.
    # The last cancel is sent as the agent exits: the server's serve loop may end on its closed input
    # before rmcp hands that notification to the service (seen once in a full run: the timed-out
    # call's SERVER span `cancelled`, so the cancel was read, and no span of the notification).
    last = cancels[-1]
    for sent in [initialized, *cancels]:
        received = by_parent.get(sent["span"])
        if received is None and sent is last:
            continue
        assert received is not None, sent
        assert (received["name"], received["kind"], received["trace"]) == (sent["name"], "Server", sent["trace"])
        assert received["attributes"] == sent["attributes"]
    assert [s for s in server if s["parent"] == ROOT] == []
    assert len(server) == len(CALLS) + (4 if last["span"] in by_parent else 3)
