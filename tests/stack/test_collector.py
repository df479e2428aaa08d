"""The collector configurations: accepted by the collector they were written for (`validate`):
the single collector, and the scaled topology's edge and gateway (collector.yaml + gateway.yaml);
built with exactly the components they use, and saying what the dashboards and rules rely on
(names, unit, buckets, flush interval, dimensions) and what the gateway tier promises (span metrics
of every span before sampling; sampling on the stated outcome). Jaeger v2 accepts its
configuration too; they run end to end in test_end_to_end.py and test_gateway_tier.py."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_otel.semconv import (
    ERROR_TYPE,
    GATEWAY_NAME,
    GEN_AI_TOOL_NAME,
    INSTRUMENTATION_SCOPE,
    MCP_METHOD_NAME,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_OUTCOME,
    MCP_REQUEST_RESULT_TYPE,
    MCP_SERVER_NAME,
    RPC_RESPONSE_STATUS_CODE,
    TOOL_OUTCOME,
    Outcome,
)
from tests.stack.stack import (
    COLLECTOR,
    COLLECTOR_CONFIG,
    EDGE_CONFIG,
    GATEWAY_CONFIGS,
    JAEGER,
    JAEGER_CONFIG,
    NOTIFICATIONS,
    load_yaml,
    merged_yaml,
    program,
)

# The stack's assets do not depend on the SDK major: checked once, in the mcp 2.x run.
pytestmark = pytest.mark.mcp2

CONFIG: dict[str, Any] = load_yaml(COLLECTOR_CONFIG)
GATEWAY: dict[str, Any] = merged_yaml(*GATEWAY_CONFIGS)
EDGE: dict[str, Any] = load_yaml(EDGE_CONFIG)
CONFIGURATIONS = {"collector": (COLLECTOR_CONFIG,), "gateway": GATEWAY_CONFIGS, "edge": (EDGE_CONFIG,)}


def _validate(binary: Path, *configs: Path) -> subprocess.CompletedProcess[str]:
    flags = [flag for config in configs for flag in ("--config", str(config))]
    return subprocess.run([program(binary), "validate", *flags], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("binary", "configs"),
    [*((COLLECTOR, configs) for configs in CONFIGURATIONS.values()), (JAEGER, (JAEGER_CONFIG,))],
    ids=[*CONFIGURATIONS, "jaeger"],
)
def test_the_program_accepts_its_configuration(binary: Path, configs: tuple[Path, ...]) -> None:
    validated = _validate(binary, *configs)
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_validate_rejects_a_misspelt_component(tmp_path: Path) -> None:
    broken = tmp_path / "collector.yaml"
    broken.write_text(COLLECTOR_CONFIG.read_text().replace("span_metrics:", "span_metric:", 1))
    validated = _validate(COLLECTOR, broken)
    assert validated.returncode != 0
    assert "span_metric" in validated.stderr


def test_the_collector_is_built_with_exactly_the_components_the_config_uses() -> None:
    listed = yaml.safe_load(
        subprocess.run(
            [program(COLLECTOR), "components"], capture_output=True, text=True, check=True, timeout=60
        ).stdout
    )
    for kind in ("receivers", "processors", "exporters", "connectors"):
        built = {component["name"] for component in listed[kind]}
        used = {name.split("/")[0] for config in (CONFIG, GATEWAY, EDGE) for name in config.get(kind, {})}
        assert built == used, kind
    assert listed["buildinfo"]["version"] == "0.161.0"


def test_go_modules_are_pinned_to_one_collector_release() -> None:
    go_mod = (COLLECTOR_CONFIG.parent / "build" / "otelcol" / "go.mod").read_text()
    versions = {
        line.split()[1]
        for line in go_mod.splitlines()
        if line.strip().startswith(
            ("go.opentelemetry.io/collector/", "github.com/open-telemetry/opentelemetry-collector-contrib/")
        )
    }
    assert versions == {"v0.161.0", "v1.67.0"}  # v0.161.0 and its stable modules


def test_span_metrics_make_the_dashboards_series() -> None:
    connector = CONFIG["connectors"]["span_metrics"]
    assert connector["namespace"] == "traces.span.metrics"
    assert connector["histogram"]["unit"] == "s"
    assert connector["histogram"]["explicit"]["buckets"][-1] == "120s"
    assert connector["metrics_flush_interval"] == "15s"
    assert connector["exemplars"]["enabled"] is True
    assert connector["aggregation_cardinality_limit"] > 0
    assert [d["name"] for d in connector["dimensions"]] == [
        MCP_SERVER_NAME,
        MCP_METHOD_NAME,
        MCP_REQUEST_OUTCOME,
        GEN_AI_TOOL_NAME,
        TOOL_OUTCOME,
    ]
    # On calls only: the error breakdown, the peer's JSON-RPC code (callers' faults kept out of
    # server faults by it), and the cancel reason (a person's declines shown apart).
    assert [d["name"] for d in connector["calls_dimensions"]] == [
        ERROR_TYPE,
        RPC_RESPONSE_STATUS_CODE,
        MCP_REQUEST_CANCEL_REASON,
    ]


def test_only_our_request_spans_become_span_metrics_and_every_trace_is_kept() -> None:
    pipelines = CONFIG["service"]["pipelines"]
    assert "span_metrics" in pipelines["traces/requests"]["exporters"]
    assert pipelines["metrics/spans"]["receivers"] == ["span_metrics"]
    # Span metrics write no target_info: the service's own metrics do (one writer per series).
    (spans_exporter,) = pipelines["metrics/spans"]["exporters"]
    assert CONFIG["exporters"][spans_exporter]["target_info"] == {"enabled": False}
    assert "target_info" not in CONFIG["exporters"][pipelines["metrics/sdk"]["exporters"][0]]
    assert "filter/requests" in pipelines["traces/requests"]["processors"]
    assert pipelines["traces/store"]["processors"] == ["memory_limiter", "batch"]  # nothing dropped
    conditions = CONFIG["processors"]["filter/requests"]["traces"]["span"]
    assert conditions == [
        f'instrumentation_scope.name != "{INSTRUMENTATION_SCOPE}"',
        f'attributes["{MCP_METHOD_NAME}"] == nil',
        # A notification has no answer and no outcome: not a request (docs/decisions.md rule 5 would make it ok).
        f'IsMatch(attributes["{MCP_METHOD_NAME}"], "^{NOTIFICATIONS}")',
        # An input round or a task creation has no outcome: not a call to count (or derive one for).
        f'attributes["{MCP_REQUEST_RESULT_TYPE}"] != nil',
    ]


# --- The scaled topology (docs/stack.md, "Past one machine") ---


def test_the_edge_routes_every_span_of_a_trace_to_one_gateway() -> None:
    exporter = EDGE["exporters"]["load_balancing"]
    assert exporter["routing_key"] == "traceID"
    assert set(exporter["resolver"]) == {"static"}
    pipelines = EDGE["service"]["pipelines"]
    assert pipelines["traces"]["exporters"] == ["load_balancing"]
    # The in-process metrics need no sampling: straight to Prometheus, never through a gateway.
    assert pipelines["metrics"]["exporters"] == ["prometheus_remote_write"]
    assert set(pipelines) == {"traces", "metrics"}  # no span metrics at the edge: counted once


def test_the_gateway_counts_every_span_before_sampling() -> None:
    pipelines = GATEWAY["service"]["pipelines"]
    # Both trace pipelines take the receiver's spans side by side: sampling cannot reach metrics.
    assert pipelines["traces/requests"] == CONFIG["service"]["pipelines"]["traces/requests"]
    assert pipelines["traces/requests"]["receivers"] == pipelines["traces/store"]["receivers"] == ["otlp"]
    assert pipelines["traces/store"]["processors"] == ["memory_limiter", "tail_sampling", "batch"]
    assert "tail_sampling" not in pipelines["traces/requests"]["processors"]
    # Each gateway's span metrics are its own series.
    assert pipelines["metrics/spans"]["processors"] == ["transform/gateway", "batch"]
    (statement,) = GATEWAY["processors"]["transform/gateway"]["metric_statements"][0]["statements"]
    assert statement.startswith(f'set(attributes["{GATEWAY_NAME}"], ')


def _policies(policies: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {policy["name"]: policy for policy in policies}


def test_sampling_keeps_every_failure_and_decides_on_the_stated_outcome() -> None:
    policies = _policies(GATEWAY["processors"]["tail_sampling"]["policies"])
    failed, cancelled = Outcome.FAILED.value, Outcome.CANCELLED.value
    assert policies["failed-requests"]["string_attribute"] == {"key": MCP_REQUEST_OUTCOME, "values": [failed]}
    assert policies["failed-tool-calls"]["string_attribute"] == {"key": TOOL_OUTCOME, "values": [failed]}
    # A status policy only for ERROR, which never means cancelled (docs/decisions.md rule 5's older spans).
    assert policies["errors-without-outcome"]["status_code"] == {"status_codes": ["ERROR"]}
    has_cancel, share = _policies(policies["cancelled-requests"]["and"]["and_sub_policy"]).values()
    assert has_cancel["string_attribute"] == {"key": MCP_REQUEST_OUTCOME, "values": [cancelled]}
    assert share["type"] == policies["ok-share"]["type"] == "probabilistic"
    # Nothing else decides: no policy keeps or drops on a status of UNSET or OK.
    assert set(policies) == {
        "failed-requests",
        "failed-tool-calls",
        "errors-without-outcome",
        "cancelled-requests",
        "ok-share",
    }
