"""``mcp-otel run`` end to end: the demo agent and its three servers, in subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.cli.distro import distro_path
from tests.harness import REPO_ROOT, env_without_otel
from tests.otlp_receiver import receiving

pytestmark = pytest.mark.mcp2  # the demo servers are mcp 2.x MCPServers

MCP_OTEL = str(Path(sys.executable).with_name("mcp-otel"))
AGENT = ["python", "examples/demo/agent.py"]


def expected_rows() -> dict[str, dict[str, Any]]:
    """What the seeded demo must report, derived from the demo's own rules."""
    sys.path.insert(0, str(REPO_ROOT / "examples" / "demo"))
    try:
        from agent import DECLINED_REMOVALS, REMOVALS  # type: ignore[import-not-found]
        from servers import flaky_verdict  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    declined = len(DECLINED_REMOVALS)
    verdicts = Counter(flaky_verdict(item) for item in range(20))
    flaky_failed = verdicts["tool_error"] + verdicts["rpc_error"]
    errors = {"tool_error": verdicts["tool_error"], "-32603": verdicts["rpc_error"]}
    return {
        "flaky": {
            "calls": 20,
            "ok": 20 - flaky_failed,
            "failed": flaky_failed,
            "cancelled": 0,
            "failure_rate": flaky_failed / 20,
            "error_types": {k: v for k, v in errors.items() if v},
        },
        "healthy": {"calls": 20, "ok": 20, "failed": 0, "cancelled": 0, "failure_rate": 0.0, "error_types": {}},
        # The person's two declines are cancels (input_declined), not the server's failures.
        "careful": {
            "calls": REMOVALS,
            "ok": REMOVALS - declined,
            "failed": 0,
            "cancelled": declined,
            "declined": declined,
            "failure_rate": 0.0,
            "error_types": {},
        },
        # 2 cancelled by the agent are in neither the numerator nor the denominator: 2 / (6 + 2).
        "slow": {
            "calls": 10,
            "ok": 6,
            "failed": 2,
            "cancelled": 2,
            "failure_rate": 0.25,
            "error_types": {"timeout": 2},
        },
    }


def run_demo(output: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [MCP_OTEL, "run", "--output", str(output), "--format", "json", "--", *AGENT]
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=180)


def test_run_the_demo(tmp_path: Path) -> None:
    output = tmp_path / "telemetry.jsonl"
    completed = run_demo(output, env_without_otel())
    assert completed.returncode == 0, completed.stderr
    rows = {row["name"]: row for row in json.loads(completed.stdout)}
    expected = expected_rows()
    assert {name: {key: row[key] for key in expected[name]} for name, row in rows.items()} == expected
    assert "mcp-otel: running python examples/demo/agent.py" in completed.stderr
    assert "demo: 20 fetches on flaky" in completed.stderr

    # Every line is OTLP JSON that the OpenTelemetry protobuf schema accepts.
    documents = [json.loads(line) for line in output.read_text().splitlines()]
    assert documents
    for document in documents:
        message = ExportTraceServiceRequest() if "resourceSpans" in document else ExportMetricsServiceRequest()
        Parse(json.dumps(document), message)

    # The metrics count the same calls as the spans (one outcome, one string).
    points: Counter[tuple[str, str]] = Counter()
    for document in documents:
        for resource in document.get("resourceMetrics", []):
            for scope in resource["scopeMetrics"]:
                for metric in scope["metrics"]:
                    if metric["name"] != "mcp.client.operation.duration":
                        continue
                    assert metric["unit"] == "s"
                    for point in metric["histogram"]["dataPoints"]:
                        attributes = {a["key"]: a["value"]["stringValue"] for a in point["attributes"]}
                        if attributes["mcp.method.name"] != "tools/call":  # the table counts tool calls
                            continue
                        key = (attributes["mcp.server.name"], attributes["tool.outcome"])
                        points[key] += int(point["count"])
    for name, row in expected_rows().items():
        for outcome in ("ok", "failed", "cancelled"):
            assert points[(name, outcome)] == row[outcome], (name, outcome)


@pytest.fixture
def otlp_receiver() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """A minimal OTLP/HTTP receiver on 127.0.0.1 that records what it is sent."""
    with receiving() as endpoint_and_received:
        yield endpoint_and_received


def test_run_exports_otlp_when_an_endpoint_is_set(
    tmp_path: Path, otlp_receiver: tuple[str, list[tuple[str, bytes]]]
) -> None:
    """The agent and the demo's servers (Python children, which inherit ``mcp-otel run``'s
    auto-instrumentation) export to the endpoint, configured by ``mcp-otel run``, with
    opentelemetry-distro installed beside it, as people install it: no configurator passed over."""
    endpoint, received = otlp_receiver
    env = env_without_otel(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, PYTHONPATH=str(distro_path()))
    completed = run_demo(tmp_path / "telemetry.jsonl", env)
    assert completed.returncode == 0, completed.stderr
    assert f"and to {endpoint}" in completed.stderr
    assert "Configuration of" not in completed.stderr  # no configurator passed over, or refused
    # The agent's CLIENT spans, and (the servers export to the endpoint too) their SERVER spans.
    spans: Counter[tuple[str, str, int]] = Counter()
    for path, body in received:
        if path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                service = next(a.value.string_value for a in resource.resource.attributes if a.key == "service.name")
                for scope in resource.scope_spans:
                    if scope.scope.name == "mcp_otel":
                        spans.update((service, span.name, span.kind) for span in scope.spans)
    client, server = 3, 2  # OTLP's SPAN_KIND_CLIENT, SPAN_KIND_SERVER
    # The agent's service is named after its script (python examples/demo/agent.py -> "agent").
    # Every request has its span: each session's handshake, once per side.
    for name in ("healthy", "flaky", "slow", "careful"):
        assert spans.pop((f"mcp-demo-{name}", "initialize", server)) == 1
    assert spans.pop(("agent", "initialize", client)) == 4
    # Each removal asks the person first: the server's request, and the agent's answer to it.
    assert spans.pop(("mcp-demo-careful", "elicitation/create", client)) == 4
    assert spans.pop(("agent", "elicitation/create", server)) == 4
    spans = Counter({key: n for key, n in spans.items() if key[1].startswith("tools/call")})
    assert spans == {
        ("agent", "tools/call lookup", client): 20,
        ("agent", "tools/call fetch", client): 20,
        ("agent", "tools/call crunch", client): 10,
        ("agent", "tools/call remove", client): 4,
        ("mcp-demo-healthy", "tools/call lookup", server): 20,
        ("mcp-demo-flaky", "tools/call fetch", server): 20,
        ("mcp-demo-slow", "tools/call crunch", server): 10,
        ("mcp-demo-careful", "tools/call remove", server): 4,
    }
    assert {path for path, _ in received} >= {"/v1/traces", "/v1/metrics"}
    # The local file and the summary still come too.
    assert {row["name"] for row in json.loads(completed.stdout)} == {"flaky", "healthy", "slow", "careful"}


def test_run_needs_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_otel.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["run"])
    assert exit_info.value.code == 2
    assert "give the agent's command after --" in capsys.readouterr().err


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_readme_and_getting_started_show_the_demo_numbers(page: str) -> None:
    text = (REPO_ROOT / page).read_text()
    table = text.split("```\nserver   calls", 1)[1].split("```", 1)[0]
    shown = {}
    for line in table.splitlines()[2:]:
        cells = line.split()
        if cells and cells[0] in ("flaky", "healthy", "slow", "careful"):
            shown[cells[0]] = [int(cell) for cell in cells[1:5]]
    expected = {name: [row[k] for k in ("calls", "ok", "failed", "cancelled")] for name, row in expected_rows().items()}
    assert shown == expected


def _service_names(output: Path) -> set[str]:
    names = set()
    for line in output.read_text().splitlines():
        for resource in json.loads(line).get("resourceSpans", []):
            attributes = {a["key"]: a["value"].get("stringValue") for a in resource["resource"]["attributes"]}
            names.add(attributes["service.name"])
    return names


@pytest.mark.parametrize(
    ("env", "service"),
    [
        ({}, "tests.agents.simple_agent"),  # python -m MODULE: the module's name
        ({"OTEL_SERVICE_NAME": "checkout-agent"}, "checkout-agent"),
        ({"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci, service.name=billing"}, "billing"),
    ],
    ids=["from-the-program", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"],
)
def test_run_names_the_service_unless_the_user_did(tmp_path: Path, env: dict[str, str], service: str) -> None:
    output = tmp_path / "telemetry.jsonl"
    agent = ["python", "-m", "tests.agents.simple_agent"]
    command = [MCP_OTEL, "run", "--output", str(output), "--", *agent]
    environment = env_without_otel(PYTHONPATH=str(REPO_ROOT), **env)
    completed = subprocess.run(command, cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert _service_names(output) == {service}
