"""The observability stack the tests run: where its programs and assets are, and how to start
Prometheus and query it. The programs are built or installed by `make stack` (the Makefile's
test target runs it first): the collector and Jaeger v2 from the Go module proxy, Prometheus
and promtool from Debian, the TraceQL grammar from npm."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from mcp_otel.semconv import CALLER_FAULT_STATUS_CODES, MCP_METHOD_NAME, NOTIFICATION_PREFIX, Outcome
from tests.harness import REPO_ROOT
from tests.processes import LOOPBACK, free_port, missing, running, wait_until

# `make stack` builds the tests' collector and Jaeger without optimizations (mk/stack.mk says why);
# `make collector` and `make jaeger` the optimized ones a benchmark runs.
OPTIMIZED_BIN = REPO_ROOT / ".cache" / "bin"
BIN = OPTIMIZED_BIN / "test"
COLLECTOR = BIN / "mcp-otelcol"
JAEGER = BIN / "jaeger"
COLLECTOR_CONFIG = REPO_ROOT / "collector-config" / "collector.yaml"
# The scaled topology: edge collectors, and gateways run as collector.yaml + gateway.yaml.
EDGE_CONFIG = REPO_ROOT / "collector-config" / "edge.yaml"
GATEWAY_CONFIG = REPO_ROOT / "collector-config" / "gateway.yaml"
GATEWAY_CONFIGS = (COLLECTOR_CONFIG, GATEWAY_CONFIG)
JAEGER_CONFIG = REPO_ROOT / "collector-config" / "jaeger.yaml"
GRAFANA = REPO_ROOT / "grafana"
RULES = GRAFANA / "rules" / "mcp-tool-calls.rules.yml"
PROMETHEUS_CONFIG = GRAFANA / "prometheus" / "prometheus.yml"
# The flags the shipped configuration needs (its header comment says so; docker-compose.yml passes them).
PROMETHEUS_FLAGS = ("--web.enable-remote-write-receiver", "--enable-feature=exemplar-storage")
RULE_TESTS = GRAFANA / "rules" / "tests" / "mcp-tool-calls.test.yml"
DASHBOARDS = sorted((GRAFANA / "dashboards").glob("*.json"))
TRACEQL = Path(__file__).with_name("traceql")


def program(path_or_name: Path | str) -> str:
    """The program's path; missing, the test fails in CI (it must be installed) or skips locally."""
    found = str(path_or_name) if Path(path_or_name).is_file() else shutil.which(str(path_or_name))
    if found:
        return found
    missing(str(path_or_name), "stack")


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def merged_yaml(*paths: Path) -> Any:
    """Configurations laid over each other as the collector's ``--config a --config b`` does:
    maps merge key by key, anything else (lists included) is replaced by the later file's."""

    def merge(base: Any, over: Any) -> Any:
        if isinstance(base, dict) and isinstance(over, dict):
            return {**base, **{key: merge(base.get(key), value) for key, value in over.items()}}
        return over

    merged: Any = {}
    for path in paths:
        merged = merge(merged, load_yaml(path))
    return merged


def dashboards() -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in DASHBOARDS]


def prometheus_targets(dashboard: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            if "expr" in target:
                yield panel, target


def promtool(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([program("promtool"), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


class Prometheus:
    """A Prometheus server on 127.0.0.1 and its HTTP API."""

    def __init__(self, port: int) -> None:
        self.url = f"http://{LOOPBACK}:{port}"

    def get(self, path: str, **params: str | float) -> Any:
        query = urllib.parse.urlencode({key: str(value) for key, value in params.items()})
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=30) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        data = self.get("/api/v1/query", query=expr, time=at)
        assert data["resultType"] == "vector", data
        result: list[dict[str, Any]] = data["result"]
        return result

    def wait_for_rule_evaluation(self, after: float, timeout: float = 60) -> None:
        """Until every rule group has started an evaluation later than ``after`` (epoch seconds)."""

        def evaluated() -> bool:
            groups = self.get("/api/v1/rules")["groups"]
            return bool(groups) and all(_epoch(group["lastEvaluation"]) > after for group in groups)

        wait_until(evaluated, timeout, f"a rule evaluation after {after}")


def _epoch(rfc3339: str) -> float:
    """Prometheus' (Go's) timestamps carry nanoseconds, which datetime does not parse."""
    match = re.fullmatch(r"([^.]+?)(\.\d+)?(Z|[+-]\d\d:\d\d)", rfc3339)
    assert match, rfc3339
    seconds, fraction, zone = match.groups()
    moment = datetime.fromisoformat(seconds + ("+00:00" if zone == "Z" else zone))
    return moment.timestamp() + float(fraction or 0)


@contextmanager
def prometheus(directory: Path, with_rules: bool = True) -> Iterator[Prometheus]:
    """Prometheus with the shipped configuration (PROMETHEUS_CONFIG), receiving remote writes;
    only its rule evaluation runs every second instead of every 15 s."""
    port = free_port()
    shipped = load_yaml(PROMETHEUS_CONFIG)
    rule_files = [str((PROMETHEUS_CONFIG.parent / path).resolve()) for path in shipped["rule_files"]]
    config = directory / "prometheus.yml"
    config.write_text(
        yaml.safe_dump(
            {**shipped, "global": {"evaluation_interval": "1s"}, "rule_files": rule_files if with_rules else []}
        )
    )
    command = [
        program("prometheus"),
        f"--config.file={config}",
        f"--storage.tsdb.path={directory / 'data'}",
        f"--web.listen-address={LOOPBACK}:{port}",
        *PROMETHEUS_FLAGS,
    ]
    with running(command, ports=[port], log=directory / "prometheus.log"):
        yield Prometheus(port)


@dataclass(frozen=True)
class Jaeger:
    otlp: str  # OTLP/gRPC address (host:port) the collector sends traces to
    url: str  # the query API's base URL


@contextmanager
def jaeger(directory: Path, prometheus_url: str, executable: Path = JAEGER) -> Iterator[Jaeger]:
    """Jaeger v2 (``executable``) with the shipped configuration (JAEGER_CONFIG) on free ports: OTLP
    in, the query API, its Monitor data read from the Prometheus at ``prometheus_url``."""
    ports = {name: free_port() for name in ("otlp", "http", "grpc")}
    env = {
        **os.environ,
        "MCP_OTEL_JAEGER_OTLP_GRPC": f"{LOOPBACK}:{ports['otlp']}",
        "MCP_OTEL_JAEGER_QUERY_HTTP": f"{LOOPBACK}:{ports['http']}",
        "MCP_OTEL_JAEGER_QUERY_GRPC": f"{LOOPBACK}:{ports['grpc']}",
        "MCP_OTEL_PROMETHEUS_URL": prometheus_url,
    }
    command = [program(executable), "--config", str(JAEGER_CONFIG)]
    with running(command, ports=[ports["otlp"], ports["http"]], env=env, log=directory / "jaeger.log"):
        yield Jaeger(f"{LOOPBACK}:{ports['otlp']}", f"http://{LOOPBACK}:{ports['http']}")


def jaeger_api(url: str, path: str, **params: Any) -> Any:
    """What Jaeger's query API at ``url`` answers (its ``data``)."""
    with urllib.request.urlopen(f"{url}{path}?{urllib.parse.urlencode(params)}", timeout=60) as response:
        return json.load(response)["data"]


def span_tags(span: dict[str, Any]) -> dict[str, Any]:
    """A span's tags as Jaeger's API gives them, by key."""
    return {tag["key"]: tag["value"] for tag in span["tags"]}


# How MCP's notification methods begin (notifications/cancelled, notifications/initialized ...).
NOTIFICATIONS = NOTIFICATION_PREFIX


def is_notification(span: dict[str, Any]) -> bool:
    """A notification's span (Jaeger's API): no answer, no outcome; the tests' request counts and
    trace shapes leave them out."""
    return str(span_tags(span).get(MCP_METHOD_NAME, "")).startswith(NOTIFICATIONS)


@dataclass(frozen=True)
class Span:
    trace_id: str
    name: str
    client: bool  # a CLIENT span
    start: float  # epoch seconds
    end: float
    attributes: dict[str, Any]


def agent_spans(path: Path) -> list[Span]:
    """An agent's own spans, from the OTLP JSON lines `mcp-otel run` wrote."""
    spans = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line).get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attributes = {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}
                    start, end = (int(span[f"{edge}TimeUnixNano"]) / 1e9 for edge in ("start", "end"))
                    client = span.get("kind") in (3, "SPAN_KIND_CLIENT")
                    spans.append(Span(span["traceId"], span["name"], client, start, end, attributes))
    return spans


def substitute(expr: str, *, source: str, side: str, window: str, min_calls: int = 1) -> str:
    """A panel's query as Grafana sends it: variables replaced (all servers, tools and methods)."""
    values = {
        "source": source,
        "side": side,
        "server": ".*",
        "tool": ".*",
        "method": ".*",
        "__rate_interval": window,
        "__range": window,
        "min_calls": str(min_calls),
    }
    for name, value in values.items():
        expr = expr.replace(f"${{{name}}}", value).replace(f"${name}", value)
    assert "$" not in expr, expr
    return expr


# The recording rules, by name: what each records.
RECORDS = {
    rule["record"]: rule["expr"] for group in load_yaml(RULES)["groups"] for rule in group["rules"] if "record" in rule
}


RECORD_REFERENCE = re.compile(
    "(" + "|".join(map(re.escape, sorted(RECORDS, key=len, reverse=True))) + r")(?![\w:])(?:\{([^{}]*)\})?"
)


def inlined(expr: str, window: str) -> str:
    """A rule's expression with the records it reads replaced by their own expressions (a record's
    label matchers moved onto the raw series it sums by those labels), and every range replaced by
    ``window``: the same figures, over the window a test chose."""

    def inline(reference: re.Match[str]) -> str:
        name, matchers = reference.groups()
        inner = inlined(RECORDS[name], window)
        if matchers:
            inner = re.sub(r"\{([^{}]*)\}\[", lambda selector: f"{{{selector.group(1)}, {matchers}}}[", inner)
        return f"({inner})"

    return re.sub(r"\[\d+[mhd]\]", f"[{window}]", RECORD_REFERENCE.sub(inline, expr))


# --- What the rules count, per call (the test's expected figures) ---

# A tool call as the stack tests count it: (server, outcome, error type or "", cancel reason or "",
# the JSON-RPC code the peer answered or "").
ServerCall = tuple[str, str, str, str, str]


def valid(call: ServerCall) -> bool:
    """In a failure rate's denominator: ok or failed (cancels count in neither)."""
    return call[1] in (Outcome.OK.value, Outcome.FAILED.value)


def failed(call: ServerCall) -> bool:
    return call[1] == Outcome.FAILED.value


def server_fault(call: ServerCall) -> bool:
    """A failure that is not the caller's own fault (the alerts' SLI): told by the code the
    server answered, which a server's own span gives without an error type."""
    return failed(call) and call[4] not in CALLER_FAULT_STATUS_CODES


def caller_fault(call: ServerCall) -> bool:
    """A failure the server put down to the request (the "Callers' faults" panel)."""
    return failed(call) and call[4] in CALLER_FAULT_STATUS_CODES
