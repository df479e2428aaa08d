"""Protocol transparency: the MCP conformance suite (npm ``@modelcontextprotocol/conformance``,
its server scenarios) run against a reference Python server (mcp 2.x, streamable HTTP) gives
the same verdict for every check with mcp-otel instrumenting the server as without it.

The suite's client scenarios need a client program of the suite's own shape (it drives the
client by command line per scenario); they are not run here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel
from tests.processes import LOOPBACK, free_port, running
from tests.servers.span_file import SPAN_FILE_ENV

if MCP_MAJOR != 2:
    pytest.skip("the reference server is mcp 2.x MCPServer", allow_module_level=True)

HERE = Path(__file__).parent
SUITE = HERE / "node_modules" / ".bin" / "conformance"
# Verdicts of the uninstrumented reference server with this suite (0.1.16): the scenarios it does
# not serve fail, whoever runs them.
EXPECTED_PASSED = 19


def _verdicts(directory: Path, span_file: Path | None) -> dict[str, list[tuple[str, str]]]:
    """Every scenario's checks, (id, status), with the server instrumented when ``span_file``."""
    port = free_port()
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT), **({SPAN_FILE_ENV: str(span_file)} if span_file else {}))
    server = [sys.executable, "-m", "tests.servers.conformance_server", str(port)]
    with running(server, ports=[port], env=env, cwd=REPO_ROOT, log=directory / "server.log"):
        suite_env = {**os.environ, "PATH": f"{SUITE.parent}{os.pathsep}{os.environ['PATH']}"}
        url = f"http://{LOOPBACK}:{port}/mcp"
        subprocess.run(
            [str(SUITE), "server", "--url", url, "-o", str(directory / "results")],
            env=suite_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    verdicts: dict[str, list[tuple[str, str]]] = {}
    for checks in sorted((directory / "results").glob("*/checks.json")):
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks.parent.name)  # without its timestamp
        verdicts[scenario] = [(check["id"], check["status"]) for check in json.loads(checks.read_text())]
    return verdicts


def test_the_suite_gives_the_same_verdicts_with_mcp_otel(tmp_path: Path) -> None:
    if not SUITE.exists():
        message = "the conformance suite is missing: `make conformance` installs it"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    (tmp_path / "plain").mkdir()
    (tmp_path / "traced").mkdir()
    plain = _verdicts(tmp_path / "plain", None)
    span_file = tmp_path / "spans.jsonl"
    traced = _verdicts(tmp_path / "traced", span_file)
    assert len(plain) == 30  # the suite's server scenarios
    assert traced == plain
    statuses = Counter(status for checks in plain.values() for _, status in checks)
    assert statuses["SUCCESS"] == EXPECTED_PASSED, statuses
    # And the server was traced: one SERVER span per tool call the suite made, with its outcome.
    spans: list[dict[str, Any]] = [json.loads(line) for line in span_file.read_text().splitlines()]
    outcomes = {
        span["attributes"]["gen_ai.tool.name"]: span["attributes"]["tool.outcome"]
        for span in spans
        if span["attributes"].get("mcp.method.name") == "tools/call" and "gen_ai.tool.name" in span["attributes"]
    }
    assert outcomes["test_simple_text"] == "ok"
    assert outcomes["test_error_handling"] == "failed"
    assert len(outcomes) >= 8
