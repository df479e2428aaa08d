"""A new user's first hour with the Python package, as docs/instrument.md shows it: installed from a
clone into a new virtualenv, the page's server and agent saved as files, the agent run under
``mcp-otel run``. Every outcome the page promises is in the file, on both sides, one trace a call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.first_hour.docs_commands import REPO_ROOT, run
from tests.proxy.otlp import points, requests, spans

PAGE = REPO_ROOT / "docs" / "instrument.md"
OUTCOME, REASON, ERROR = "mcp.request.outcome", "mcp.request.cancel.reason", "error.type"


def _calls(found: list[dict[str, Any]], kind: str) -> list[tuple[str, str, Any, Any, Any]]:
    return [
        (
            span["name"],
            span["status"]["status_code"],
            *(span["attributes"].get(key) for key in (OUTCOME, REASON, ERROR)),
        )
        for span in sorted(requests(found), key=lambda span: span["start_time"])
        if span["kind"] == f"SpanKind.{kind}" and span["name"].startswith("tools/call")
    ]


def test_the_pages_agent_and_server_under_run(tmp_path: Path) -> None:
    folder = tmp_path / "my-agent"
    folder.mkdir()
    completed = run([PAGE], "python-first-hour", folder)

    # The summary the page describes: 4 calls, 1 ok, 2 failed, 1 cancelled, 66.7% (the cancel left out).
    (row,) = [line.split() for line in completed.stdout.splitlines() if line.startswith("weather")]
    assert row[:7] == ["weather", "4", "1", "2", "1", "0", "66.7%"]

    found = spans(folder / "mcp-otel.jsonl")
    assert _calls(found, "CLIENT") == [
        ("tools/call forecast", "UNSET", "ok", None, None),
        ("tools/call radar", "ERROR", "failed", None, "tool_error"),
        ("tools/call history", "UNSET", "cancelled", "caller", None),
        ("tools/call history", "ERROR", "failed", None, "timeout"),
    ]
    # The server, started by the agent with the SDK's default environment, is instrumented too:
    # the agent's cancel and the SDK's timeout both reach it as the client's cancel.
    assert _calls(found, "SERVER") == [
        ("tools/call forecast", "UNSET", "ok", None, None),
        ("tools/call radar", "ERROR", "failed", None, "tool_error"),
        ("tools/call history", "UNSET", "cancelled", "client", None),
        ("tools/call history", "UNSET", "cancelled", "client", None),
    ]
    services = {span["service"] for span in found}
    assert services == {"agent", "server"}
    # One trace a call: each SERVER span is the child of its CLIENT span.
    by_id = {span["context"]["span_id"]: span for span in found}
    for server in (span for span in requests(found) if span["kind"] == "SpanKind.SERVER"):
        client = by_id[server["parent_id"]]
        assert (client["kind"], client["name"], client["context"]["trace_id"]) == (
            "SpanKind.CLIENT",
            server["name"],
            server["context"]["trace_id"],
        )

    # The points a dashboard reads carry the same outcome strings as the spans.
    def tool_points(name: str) -> dict[tuple[Any, ...], int]:
        return {
            tuple(point["attributes"].get(key) for key in ("gen_ai.tool.name", OUTCOME, ERROR)): point["count"]
            for point in points(folder / "mcp-otel.jsonl", name)
            if point["attributes"].get("mcp.method.name") == "tools/call"
        }

    assert tool_points("mcp.client.operation.duration") == {
        ("forecast", "ok", None): 1,
        ("radar", "failed", "tool_error"): 1,
        ("history", "cancelled", None): 1,
        ("history", "failed", "timeout"): 1,
    }
    assert tool_points("mcp.server.operation.duration") == {
        ("forecast", "ok", None): 1,
        ("radar", "failed", "tool_error"): 1,
        ("history", "cancelled", None): 2,
    }
