"""``mcp-otel run``: a stdio server its agent starts the commonest way, with the MCP SDK's default
environment (``StdioServerParameters`` without ``env``, both majors' ``stdio_client``), is
instrumented as the agent is, in the agent's trace, and is given the run's variables only, never
the agent's other environment (:mod:`mcp_otel.run.servers`). Without ``run``, nothing changes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from mcp_otel.model.config import FILE_EXPORTER, RUN_FILE_ENV
from mcp_otel.run.configurator import AUTO_INSTRUMENTATION
from tests.harness import REPO_ROOT, env_without_otel
from tests.proxy import otlp

MCP_OTEL = str(Path(sys.executable).with_name("mcp-otel"))
AGENT = ["-m", "tests.agents.default_environment_agent"]
TOOL_CALL = "tools/call environment"
# A variable of the agent's own (not the run's), and the PYTHONPATH it was given.
AGENTS_OWN = {"MCP_OTEL_TEST_AGENTS_OWN": "not for its servers", "PYTHONPATH": str(REPO_ROOT)}


def started_with(told: Path) -> tuple[dict[str, str], dict[str, str]]:
    """What the server was started with: the SDK's default variables, and the others."""
    environment: dict[str, str] = json.loads(told.read_text())
    default = {name: value for name, value in environment.items() if name in DEFAULT_INHERITED_ENV_VARS}
    return default, {name: value for name, value in environment.items() if name not in default}


def test_a_server_started_with_the_default_environment_is_instrumented_in_the_agents_trace(tmp_path: Path) -> None:
    output, told = tmp_path / "telemetry.jsonl", tmp_path / "server-environment.json"
    command = [MCP_OTEL, "run", "--output", str(output), "--", "python", *AGENT, str(told)]
    env = env_without_otel(**AGENTS_OWN)
    completed = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    # The run's variables, and nothing else of the agent's (its own variable, its PYTHONPATH,
    # the service name run gave it).
    _, beyond_the_default = started_with(told)
    assert beyond_the_default == {
        RUN_FILE_ENV: str(output),
        "OTEL_TRACES_EXPORTER": FILE_EXPORTER,
        "OTEL_METRICS_EXPORTER": FILE_EXPORTER,
        "OTEL_LOGS_EXPORTER": "none",
        "PYTHONPATH": str(AUTO_INSTRUMENTATION),
        "OTEL_SERVICE_NAME": "environment_server",  # its own program's name, as run names the agent
    }
    # One trace: the server's SERVER span is the child of the agent's CLIENT span.
    calls = {span["kind"]: span for span in otlp.spans(output) if span["name"] == TOOL_CALL}
    assert sorted(calls) == ["SpanKind.CLIENT", "SpanKind.SERVER"]
    client, server = calls["SpanKind.CLIENT"], calls["SpanKind.SERVER"]
    assert server["context"]["trace_id"] == client["context"]["trace_id"]
    assert server["parent_id"] == client["context"]["span_id"]
    assert client["service"] == "tests.agents.default_environment_agent"
    assert server["service"] == "environment_server"
    assert (client["attributes"]["mcp.request.outcome"], server["attributes"]["mcp.request.outcome"]) == ("ok", "ok")


def test_a_server_given_env_gets_what_the_agent_gave(tmp_path: Path) -> None:
    """An agent that passes ``env`` says what its server gets: that, over the SDK's default."""
    output, told = tmp_path / "telemetry.jsonl", tmp_path / "server-environment.json"
    command = [MCP_OTEL, "run", "--output", str(output), "--", "python", *AGENT, str(told), "GIVEN=by the agent"]
    env = env_without_otel(**AGENTS_OWN)
    completed = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert started_with(told)[1] == {"GIVEN": "by the agent"}


def test_without_run_the_server_gets_the_sdks_default_environment_only(tmp_path: Path) -> None:
    told = tmp_path / "server-environment.json"
    env = env_without_otel(**AGENTS_OWN)
    completed = subprocess.run(
        [sys.executable, *AGENT, str(told)], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    default, beyond_the_default = started_with(told)
    assert beyond_the_default == {}
    assert default == {name: env[name] for name in DEFAULT_INHERITED_ENV_VARS if name in env}
