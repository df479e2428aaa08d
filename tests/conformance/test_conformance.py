"""Protocol transparency: the MCP conformance suite (npm ``@modelcontextprotocol/conformance``,
its server scenarios) run against a reference Python server (mcp 2.x, streamable HTTP) gives
the same verdict for every check with mcp-otel instrumenting the server as without it, and with
the server uninstrumented behind ``mcp-otel proxy --listen --upstream``.

Its client scenarios drive a Python client program (``conformance_client.py``, mcp 2.x) by
command line, plain and under ``mcp-otel run``: the deterministic ones (initialize, tools_call,
and SEP-1034 elicitation defaults, which the client does not play) give the same verdicts too.
The auth scenarios (no OAuth client here) and SSE retry timing are not compared.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel
from tests.processes import LOOPBACK, free_port, missing, running
from tests.servers.span_file import SPAN_FILE_ENV

if MCP_MAJOR != 2:
    pytest.skip("the reference server is mcp 2.x MCPServer", allow_module_level=True)

HERE = Path(__file__).parent
SUITE = HERE / "node_modules" / ".bin" / "conformance"
# Verdicts of the uninstrumented reference server with this suite (0.1.16): the scenarios it does
# not serve fail, whoever runs them.
EXPECTED_PASSED = 19


def _verdicts(
    directory: Path, span_file: Path | None, proxy_output: Path | None = None
) -> dict[str, list[tuple[str, str]]]:
    """Every scenario's checks, (id, status), with the server instrumented when ``span_file``,
    and behind ``mcp-otel proxy`` (writing to ``proxy_output``) when that is given."""
    port = free_port()
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT), **({SPAN_FILE_ENV: str(span_file)} if span_file else {}))
    server = [sys.executable, "-m", "tests.servers.conformance_server", str(port)]
    with ExitStack() as stack:
        stack.enter_context(running(server, ports=[port], env=env, cwd=REPO_ROOT, log=directory / "server.log"))
        url = f"http://{LOOPBACK}:{port}/mcp"
        if proxy_output is not None:
            proxy_port = free_port()
            proxy = [str(Path(sys.executable).with_name("mcp-otel")), "proxy", "--output", str(proxy_output)]
            proxy += ["--listen", f"{LOOPBACK}:{proxy_port}", "--upstream", url]
            stack.enter_context(running(proxy, ports=[proxy_port], env=env, cwd=REPO_ROOT, log=directory / "proxy.log"))
            url = f"http://{LOOPBACK}:{proxy_port}/mcp"
        command = [str(SUITE), "server", "--url", url, "-o", str(directory / "results")]
        subprocess.run(command, env=_suite_env(), capture_output=True, text=True, timeout=600)
    return _read_verdicts(directory / "results")


def _require_suite() -> None:
    if not SUITE.exists():
        missing("the conformance suite", "conformance")


def _suite_env() -> dict[str, str]:
    return {**env_without_otel(PYTHONPATH=str(REPO_ROOT)), "PATH": f"{SUITE.parent}{os.pathsep}{os.environ['PATH']}"}


def _read_verdicts(results: Path) -> dict[str, list[tuple[str, str]]]:
    verdicts: dict[str, list[tuple[str, str]]] = {}
    for checks in sorted(results.rglob("checks.json")):
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks.parent.name)  # without its timestamp
        # INFO entries log the exchange as it happened (their order can vary): verdicts only.
        checked = [(check["id"], check["status"]) for check in json.loads(checks.read_text())]
        verdicts[scenario] = [(name, status) for name, status in checked if status != "INFO"]
    return verdicts


def test_the_suite_gives_the_same_verdicts_with_mcp_otel(tmp_path: Path) -> None:
    _require_suite()
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
    _assert_tool_calls_traced(spans)
    # Every request the suite made has its SERVER span, each stating one of the three outcomes.
    # (The SDK's own spans of notifications, which mcp-otel leaves alone, have no outcome.)
    requests = [
        span
        for span in spans
        if not span["attributes"].get("mcp.method.name", "notifications/").startswith("notifications/")
    ]
    methods = Counter(span["attributes"]["mcp.method.name"] for span in requests)
    assert set(methods) >= {"initialize", "tools/list", "tools/call", "resources/list", "resources/read", "prompts/get"}
    assert methods["initialize"] >= len(plain), methods  # a session per scenario at least
    for span in requests:
        assert span["kind"] == "SpanKind.SERVER"
        assert span["attributes"]["mcp.request.outcome"] in ("ok", "failed", "cancelled"), span
        assert ("tool.outcome" in span["attributes"]) == (span["attributes"]["mcp.method.name"] == "tools/call")


def _assert_tool_calls_traced(spans: list[dict[str, Any]]) -> None:
    """The suite's tool calls each have a SERVER span stating the outcome they had."""
    outcomes = {
        span["attributes"]["gen_ai.tool.name"]: span["attributes"]["tool.outcome"]
        for span in spans
        if span["attributes"].get("mcp.method.name") == "tools/call" and "gen_ai.tool.name" in span["attributes"]
    }
    assert outcomes["test_simple_text"] == "ok"
    assert outcomes["test_error_handling"] == "failed"
    assert len(outcomes) >= 8


def test_the_suite_gives_the_same_verdicts_through_the_http_proxy(tmp_path: Path) -> None:
    """The reference server uninstrumented behind ``mcp-otel proxy --listen --upstream``: every
    check as without the proxy, and every request the suite made has the proxy's SERVER span."""
    _require_suite()
    (tmp_path / "plain").mkdir()
    (tmp_path / "proxied").mkdir()
    plain = _verdicts(tmp_path / "plain", None)
    output = tmp_path / "proxy.jsonl"
    proxied = _verdicts(tmp_path / "proxied", None, output)
    assert proxied == plain
    from tests.proxy import otlp

    spans = otlp.spans(output)
    _assert_tool_calls_traced(spans)
    # The requests' spans (a notification's span has no outcome: tests/test_notifications.py).
    requests = otlp.requests(spans)
    methods = Counter(span["attributes"]["mcp.method.name"] for span in requests)
    assert set(methods) >= {"initialize", "tools/list", "tools/call", "resources/list", "resources/read", "prompts/get"}
    assert methods["initialize"] >= len(plain), methods
    for span in requests:
        assert span["kind"] == "SpanKind.SERVER"
        assert span["attributes"]["network.transport"] == "tcp"
        assert span["attributes"]["mcp.request.outcome"] in ("ok", "failed", "cancelled"), span


CLIENT_SCENARIOS = ("initialize", "tools_call", "elicitation-sep1034-client-defaults")


def _client_verdicts(directory: Path, telemetry: Path | None) -> dict[str, list[tuple[str, str]]]:
    """Each client scenario's verdicts; with ``telemetry`` (a folder), the client runs under
    ``mcp-otel run`` and writes each scenario's telemetry there."""
    for scenario in CLIENT_SCENARIOS:
        client = f"{sys.executable} {HERE / 'conformance_client.py'}"
        if telemetry is not None:
            output = telemetry / f"{scenario}.jsonl"
            client = f"{Path(sys.executable).with_name('mcp-otel')} run --output {output} -- {client}"
        command = [str(SUITE), "client", "--command", client, "--scenario", scenario, "-o", str(directory)]
        subprocess.run(command, env=_suite_env(), capture_output=True, text=True, timeout=300)
    return _read_verdicts(directory)


def test_client_scenarios_give_the_same_verdicts_with_mcp_otel(tmp_path: Path) -> None:
    _require_suite()
    plain = _client_verdicts(tmp_path / "plain", None)
    telemetry = tmp_path / "telemetry"
    telemetry.mkdir()
    traced = _client_verdicts(tmp_path / "traced", telemetry)
    assert set(plain) == set(CLIENT_SCENARIOS)
    assert traced == plain
    assert all(status == "SUCCESS" for scenario in ("initialize", "tools_call") for _, status in plain[scenario])
    # And the client was traced: its add_numbers call (tools_call) is an ok CLIENT span.
    from mcp_otel.run.calls import read_calls

    calls, problems = read_calls([telemetry / "tools_call.jsonl"])
    assert problems == []
    assert [(call.tool, call.outcome.value) for call in calls] == [("add_numbers", "ok")]
