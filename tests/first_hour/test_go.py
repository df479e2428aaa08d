"""A new user's first hour with Go, from docs/go.md alone: in an empty folder, the page's commands
as written (a clone of this checkout, a module of the user's own with a ``replace``), its example
program saved from the page's snippets, built and run. The agent and the server it starts write
their spans and points with OpenTelemetry Go's stdout exporters to JSON files; this test reads them:
each call is one trace, and every span, status and duration point is exactly what the page says.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from tests.first_hour.docs_commands import REPO_ROOT, run
from tests.processes import needs

PAGE = REPO_ROOT / "docs" / "go.md"
CLIENT, SERVER = 3, 2  # OpenTelemetry Go's SpanKind values, as its stdout exporter writes them
PROTOCOL = "2026-07-28"
SERVER_NAME, SERVER_VERSION = "weather", "2.1.0"

pytestmark = needs("go is not installed" if shutil.which("go") is None else None)


def attributes(pairs: list[dict[str, Any]] | None) -> dict[str, str]:
    return {pair["Key"]: pair["Value"]["Value"] for pair in pairs or []}


def spans(path: Path) -> list[dict[str, Any]]:
    """The spans the stdout exporter wrote, one JSON object a line."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def points(path: Path) -> Counter[tuple[str, frozenset[tuple[str, str]]]]:
    """Each duration point's (metric, attributes) and its count, from the exporter's last export."""
    *_, last = path.read_text().splitlines()
    found: Counter[tuple[str, frozenset[tuple[str, str]]]] = Counter()
    for scope in json.loads(last)["ScopeMetrics"]:
        for metric in scope["Metrics"]:
            for point in metric["Data"]["DataPoints"]:
                found[(metric["Name"], frozenset(attributes(point["Attributes"]).items()))] += point["Count"]
    return found


def tool_call(tool: str, **outcome: str) -> dict[str, str]:
    return {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "mcp.protocol.version": PROTOCOL,
        "mcp.server.name": SERVER_NAME,
        "mcp.server.version": SERVER_VERSION,
    } | outcome


OK = {"mcp.request.outcome": "ok", "tool.outcome": "ok"}
TOOL_ERROR = {"mcp.request.outcome": "failed", "tool.outcome": "failed", "error.type": "tool_error"}
TIMEOUT = {"mcp.request.outcome": "failed", "tool.outcome": "failed", "error.type": "timeout"}


def cancelled(reason: str) -> dict[str, str]:
    return {
        "mcp.request.outcome": "cancelled",
        "tool.outcome": "cancelled",
        "mcp.request.cancel.reason": reason,
        "tool.cancel.reason": reason,
    }


DISCOVER = {"mcp.method.name": "server/discover", "mcp.server.name": SERVER_NAME, "mcp.server.version": SERVER_VERSION}
FORECAST, RADAR = "tools/call forecast", "tools/call radar"
# Each request of the agent: its span name, its CLIENT span's attributes and status, its SERVER
# span's.
CALLS = [
    ("server/discover", DISCOVER | {"mcp.request.outcome": "ok"}, "Unset",
     DISCOVER | {"mcp.protocol.version": PROTOCOL, "mcp.request.outcome": "ok"}, "Unset"),
    (FORECAST, tool_call("forecast", **OK), "Unset", tool_call("forecast", **OK), "Unset"),
    (FORECAST, tool_call("forecast", **TOOL_ERROR), "Error", tool_call("forecast", **TOOL_ERROR), "Error"),
    (RADAR, tool_call("radar", **cancelled("caller")), "Unset", tool_call("radar", **cancelled("client")), "Unset"),
    (RADAR, tool_call("radar", **TIMEOUT), "Error", tool_call("radar", **cancelled("client")), "Unset"),
]  # fmt: skip


def expected_points(metric: str, said: list[dict[str, str]]) -> Counter[tuple[str, frozenset[tuple[str, str]]]]:
    """One point per request, with its span's attributes but the server's version (no point has
    it): the same strings as the span's."""
    return Counter((metric, frozenset((k, v) for k, v in a.items() if k != "mcp.server.version")) for a in said)


def test_the_pages_agent_and_server_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "user"
    folder.mkdir()
    completed = run([PAGE], "go", folder)
    assert completed.stdout.splitlines() == [
        "forecast: sunny in Paris (isError false)",
        "forecast: which city? (isError true)",
        "radar: context canceled",
        "radar: context deadline exceeded",
    ]
    weather = folder / "weather"
    agent, server = spans(weather / "agent-spans.json"), spans(weather / "server-spans.json")

    # The agent's spans, in the order they ended: one CLIENT span per request, each a root.
    assert [(s["Name"], s["SpanKind"], attributes(s["Attributes"]), s["Status"]["Code"]) for s in agent] == [
        (name, CLIENT, said, status) for name, said, status, *_ in CALLS
    ]
    assert {s["Parent"]["SpanID"] for s in agent} == {"0" * 16}
    # The server's: each request's SERVER span the child of the agent's CLIENT span, in its trace.
    by_parent = {s["Parent"]["SpanID"]: s for s in server}
    for (name, _, _, said, status), client in zip(CALLS, agent, strict=True):
        received = by_parent[client["SpanContext"]["SpanID"]]
        assert (received["Name"], received["SpanKind"]) == (name, SERVER)
        assert received["SpanContext"]["TraceID"] == client["SpanContext"]["TraceID"]
        assert (attributes(received["Attributes"]), received["Status"]["Code"]) == (said, status)
    # And the two notifications/cancelled the SDK sends past the middleware (no trace context):
    # roots of their own on the server (docs/go.md, what the Go SDK keeps from middleware).
    others = [s for s in server if s["Parent"]["SpanID"] == "0" * 16]
    assert [(s["Name"], s["SpanKind"], attributes(s["Attributes"])) for s in others] == [
        (
            "notifications/cancelled",
            SERVER,
            {
                "mcp.method.name": "notifications/cancelled",
                "mcp.protocol.version": PROTOCOL,
                "mcp.server.name": SERVER_NAME,
                "mcp.server.version": SERVER_VERSION,
            },
        )
    ] * 2
    assert len(server) == len(CALLS) + 2

    assert points(weather / "agent-metrics.json") == expected_points(
        "mcp.client.operation.duration", [said for _, said, *_ in CALLS]
    )
    assert points(weather / "server-metrics.json") == expected_points(
        "mcp.server.operation.duration", [said for *_, said, _ in CALLS]
    )
