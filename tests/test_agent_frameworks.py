"""The agents people run, auto-instrumented (``mcp-otel run``, i.e. ``opentelemetry-instrument``
with mcp-otel's entry point): each framework's agent makes an ok call, a tool error and a call it
stops waiting for, and the telemetry states exactly those outcomes, one span per call and side.

langchain-mcp-adapters and openai-agents (scripted model, no network) need mcp 1.x; fastmcp
(client and server in one process) runs on both: 3.x on mcp 1.x, 4.x on mcp 2.x."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.harness import REPO_ROOT, env_without_otel

MCP_OTEL = str(Path(sys.executable).with_name("mcp-otel"))
EXPECTED = {
    "ok": {"calls": 1, "ok": 1, "failed": 0, "cancelled": 0, "error_types": {}},
    "tool_error": {"calls": 1, "ok": 0, "failed": 1, "cancelled": 0, "error_types": {"tool_error": 1}},
    "slow": {"calls": 1, "ok": 0, "failed": 0, "cancelled": 1, "error_types": {}},
}


def _summary(output: Path, side: str) -> dict[str, dict[str, Any]]:
    command = [MCP_OTEL, "report", "--by", "tool", "--side", side, "--format", "json", str(output)]
    report = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60)
    keys = ("calls", "ok", "failed", "cancelled", "error_types")
    return {row["name"]: {key: row[key] for key in keys} for row in json.loads(report.stdout)}


def _run(agent: str, tmp_path: Path) -> Path:
    output = tmp_path / "telemetry.jsonl"
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT), OPENAI_API_KEY="not-used")
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    command = [MCP_OTEL, "run", "--output", str(output), "--", sys.executable, "-m", f"tests.agents.{agent}"]
    completed = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return output


@pytest.mark.mcp1
@pytest.mark.parametrize("agent", ["langchain_agent", "openai_agents_agent"])
def test_framework_tool_calls_state_their_outcomes(agent: str, tmp_path: Path) -> None:
    output = _run(agent, tmp_path)
    assert _summary(output, "client") == EXPECTED


def test_fastmcp_client_and_server_state_their_outcomes(tmp_path: Path) -> None:
    output = _run("fastmcp_agent", tmp_path)
    expected = {("fails" if name == "tool_error" else name): row for name, row in EXPECTED.items()}
    assert _summary(output, "client") == expected
    assert _summary(output, "server") == expected
