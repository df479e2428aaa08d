"""One string end to end (docs/decisions.md rule 3) across the shipped assets, and docker-compose.yml
mounting exactly the tested files at the tested versions.

Every outcome value, attribute, label and metric name the collector configuration, Jaeger's
configuration, the rules, the dashboards, the Grafana provisioning and docker-compose.yml use
must come from mcp_otel.semconv: a stray spelling (``tool_outcomes``, ``"canceled"``) fails here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mcp_otel import semconv
from mcp_otel.semconv import CALLER_FAULT_STATUS_CODES, Outcome, prometheus_histogram, prometheus_label
from tests.harness import REPO_ROOT
from tests.stack.stack import (
    COLLECTOR,
    COLLECTOR_CONFIG,
    DASHBOARDS,
    EDGE_CONFIG,
    GATEWAY_CONFIG,
    GRAFANA,
    JAEGER_CONFIG,
    PROMETHEUS_CONFIG,
    PROMETHEUS_FLAGS,
    RULES,
    load_yaml,
    program,
)

# The stack's assets do not depend on the SDK major: checked once, in the mcp 2.x run.
pytestmark = pytest.mark.mcp2

COMPOSE = REPO_ROOT / "docker-compose.yml"
TEMPO_CONFIG = COLLECTOR_CONFIG.parent / "tempo.yaml"  # untested (Tempo is not run here)
ASSETS = [
    COLLECTOR_CONFIG,
    EDGE_CONFIG,
    GATEWAY_CONFIG,
    JAEGER_CONFIG,
    RULES,
    PROMETHEUS_CONFIG,
    COMPOSE,
    *sorted((GRAFANA / "dashboards").glob("*.json")),
    *sorted((GRAFANA / "provisioning").rglob("*.yaml")),
]

OUTCOMES = {outcome.value for outcome in Outcome}
STRINGS = [value for name, value in vars(semconv).items() if name.isupper() and isinstance(value, str)]
ATTRIBUTES = {value for value in STRINGS if re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", value)}
LABELS = {prometheus_label(attribute) for attribute in ATTRIBUTES}
METRICS = {
    *semconv.SPAN_METRICS_CALLS,
    *semconv.SPAN_METRICS_DURATION_BUCKETS,
    *(
        prometheus_histogram(metric, suffix)
        for metric in (semconv.MCP_CLIENT_OPERATION_DURATION, semconv.MCP_SERVER_OPERATION_DURATION)
        for suffix in ("bucket", "count", "sum")
    ),
}
RECORDS = {rule["record"] for group in load_yaml(RULES)["groups"] for rule in group["rules"] if "record" in rule}
# Our names' shapes: anything looking like one must be one of the known strings.
OURS = re.compile(r"(?<![\w.:$-])((?:mcp|gen_ai|tool|error)[._:][\w.:]*[a-z0-9])(?![\w-])")
# Words of the assets' own formats and the collector's component ids, which share the shapes.
COLLECTOR_SPECS = [load_yaml(config) for config in (COLLECTOR_CONFIG, EDGE_CONFIG, GATEWAY_CONFIG)]
VOCABULARY = {
    "error_mode",  # the filter/transform processors' key
    "mcp_otel.semconv",  # the module named in generated files' headers
    *(
        part
        for spec in COLLECTOR_SPECS
        for kind in ("processors", "connectors", "exporters")
        for name in spec.get(kind, {})
        for part in name.split("/")
    ),
    *(part for spec in COLLECTOR_SPECS for name in spec["service"]["pipelines"] for part in name.split("/")),
}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", ASSETS, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_every_name_of_ours_comes_from_the_constants_module(path: Path) -> None:
    values = {
        *(reason.value for reason in semconv.CancelReason),
        *(v for k, v in vars(semconv.ErrorType).items() if k.isupper()),
    }
    known = ATTRIBUTES | LABELS | METRICS | RECORDS | values | VOCABULARY | {semconv.INSTRUMENTATION_SCOPE}
    # The SDK histograms' names as the dashboard picks them by side: mcp_${side}_operation_...
    known |= {name.replace("client", "").replace("__", "_") for name in METRICS}
    names = {match.group(1) for match in OURS.finditer(_text(path))}
    stray = names - known
    assert stray == set(), f"not in mcp_otel.semconv: {stray}"


@pytest.mark.parametrize("path", ASSETS, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_every_outcome_value_is_one_of_the_three(path: Path) -> None:
    text = _text(path)
    values = []
    for name in (semconv.TOOL_OUTCOME, semconv.MCP_REQUEST_OUTCOME):  # the same values in both
        label, attribute = prometheus_label(name), re.escape(name)
        values += [
            *(v for m in re.finditer(rf'{label}\s*=~?\s*\\?"([^"\\]*)', text) for v in m.group(1).split("|")),
            *re.findall(rf'span\.{attribute}\s*=\s*\\?"(\w+)', text),  # TraceQL
            *re.findall(rf'"{attribute}=(\w+)', text),  # Jaeger tags
            *re.findall(rf'attributes\["{attribute}"\],\s*"(\w+)"', text),  # OTTL
            *(
                v.strip()
                for m in re.finditer(rf"key: {attribute}, values: \[([^\]]*)", text)
                for v in m.group(1).split(",")
            ),  # tail sampling
        ]
    assert set(values) <= OUTCOMES, path
    if path in (RULES, COLLECTOR_CONFIG, GATEWAY_CONFIG) or path.suffix == ".json":
        assert values, f"{path.name} names no outcome: the pattern above no longer reads it"


@pytest.mark.parametrize("path", [RULES, *DASHBOARDS], ids=lambda path: path.name)
def test_caller_fault_codes_in_the_rules_and_dashboards_are_the_classifiers(path: Path) -> None:
    codes = "|".join(CALLER_FAULT_STATUS_CODES)
    assert {int(code) for code in CALLER_FAULT_STATUS_CODES} == semconv.CALLER_FAULT_CODES
    text = _text(path)
    # The code the server answered tells a caller's fault: out of server faults (!~), in its panel (=~).
    status_code = prometheus_label(semconv.RPC_RESPONSE_STATUS_CODE)
    found = re.findall(rf'{status_code}(!~|=~)\\?"([^"\\]+)', text)
    assert {regex for _, regex in found} == {codes}
    assert {operator for operator, _ in found} == ({"!~"} if path == RULES else {"!~", "=~"})
    # error.type, only ever excluding the same codes (mcp-otel 0.1's points carry them there alone).
    error_type = prometheus_label(semconv.ERROR_TYPE)
    assert set(re.findall(rf'{error_type}(?:!~|=~|=|!=)\\?"([^"\\]*)', text)) == {codes}
    if path == RULES:  # every window's server-fault ratio excludes them
        rules = [rule for group in load_yaml(RULES)["groups"] for rule in group["rules"]]
        faults = [rule["expr"] for rule in rules if "server_fault_ratio" in rule.get("record", "")]
        assert len(faults) == 7
        assert all(f'{status_code}!~"{codes}", {error_type}!~"{codes}"' in expr for expr in faults)


def test_the_check_finds_a_stray_spelling() -> None:
    text = 'rate({__name__="traces_span_metrics_calls_total", tool_outcomes="failed", tool_outcome="canceled"}[5m])'
    names = {match.group(1) for match in OURS.finditer(text)}
    assert "tool_outcomes" in names
    assert "tool_outcomes" not in LABELS
    assert "canceled" not in OUTCOMES


# --- docker-compose.yml ---

COMPOSE_SPEC = load_yaml(COMPOSE)
TESTED_FILES = {
    COLLECTOR_CONFIG,
    JAEGER_CONFIG,
    PROMETHEUS_CONFIG,
    RULES,
    *ASSETS,
    GRAFANA / "dashboards",
    TEMPO_CONFIG,
}


def _mounts(service: str) -> dict[Path, str]:
    return {
        (REPO_ROOT / host).resolve(): inside
        for host, inside, *_ in (volume.split(":") for volume in COMPOSE_SPEC["services"][service].get("volumes", []))
    }


def test_compose_mounts_only_files_the_tests_run() -> None:
    for service in COMPOSE_SPEC["services"]:
        for host in _mounts(service):
            assert host.exists(), host
            assert host in TESTED_FILES or host.parent == GRAFANA / "provisioning", host


def test_compose_runs_the_tested_versions() -> None:
    images = {name: spec["image"].split(":")[1] for name, spec in COMPOSE_SPEC["services"].items()}
    built = subprocess.run([program(COLLECTOR), "--version"], capture_output=True, text=True, check=True).stdout
    assert images["collector"] in built
    assert images["edge"] == images["gateway-1"] == images["gateway-2"] == images["collector"]
    jaeger_go_mod = _text(COLLECTOR_CONFIG.parent / "build" / "jaeger" / "go.mod")
    assert "github.com/jaegertracing/jaeger v1.75.0" in jaeger_go_mod
    assert images["jaeger"] == "2.12.0"  # the v2 tag of the same release (its RELEASE.md at v1.75.0: 2.12.0 next)
    version = subprocess.run([program("prometheus"), "--version"], capture_output=True, text=True, check=True)
    assert f"version {images['prometheus'].lstrip('v')}" in version.stdout + version.stderr


def test_compose_passes_what_the_configurations_ask_for() -> None:
    services = COMPOSE_SPEC["services"]
    collector, jaeger = (COLLECTOR_CONFIG,), (JAEGER_CONFIG,)
    edge, gateway = (EDGE_CONFIG,), (COLLECTOR_CONFIG, GATEWAY_CONFIG)
    every = {"collector": collector, "jaeger": jaeger, "edge": edge, "gateway-1": gateway, "gateway-2": gateway}
    for service, configs in every.items():
        wanted = {name for config in configs for name in re.findall(r"\$\{env:(\w+)", _text(config))}
        given = set(services[service]["environment"])
        # The gateways' sampling knobs keep their defaults unless a user sets them.
        assert given <= wanted, service
        assert wanted - given <= {
            name for name in wanted if name.startswith(("MCP_OTEL_SAMPLE_", "MCP_OTEL_DECISION", "MCP_OTEL_NUM_"))
        }, service
        inside = [f"--config=/etc/mcp-otel/{config.relative_to(REPO_ROOT)}" for config in configs]
        assert services[service]["command"] == inside, service
        assert _mounts(service) == {config: f"/etc/mcp-otel/{config.relative_to(REPO_ROOT)}" for config in configs}
    assert services["gateway-1"]["environment"]["MCP_OTEL_GATEWAY_NAME"] == "gateway-1"
    assert services["gateway-2"]["environment"]["MCP_OTEL_GATEWAY_NAME"] == "gateway-2"
    assert services["edge"]["environment"]["MCP_OTEL_GATEWAYS"] == "[gateway-1:4317, gateway-2:4317]"
    prometheus = services["prometheus"]["command"]
    assert prometheus[0] == f"--config.file=/etc/mcp-otel/{PROMETHEUS_CONFIG.relative_to(REPO_ROOT)}"
    assert tuple(prometheus[1:]) == PROMETHEUS_FLAGS
    # The rules sit where the shipped configuration's relative path finds them.
    inside = _mounts("prometheus")
    for rule_file in load_yaml(PROMETHEUS_CONFIG)["rule_files"]:
        assert (PROMETHEUS_CONFIG.parent / rule_file).resolve() in inside
