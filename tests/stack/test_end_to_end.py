"""The whole stack on 127.0.0.1, with the real programs: the demo agent (instrumented, its three
servers too) exports OTLP to the built collector, which sends traces to Jaeger v2 and span
metrics plus the in-process metrics to Prometheus (remote write), which evaluates the generated
rules. The slow server runs uninstrumented behind ``mcp-otel proxy``: its spans and metrics come
off the wire, and every figure is the same as the in-process servers' would be.

The demo runs two identical rounds; Prometheus sees the first one settle before the second starts,
and every query covers the second round only. (A counter's first value is invisible to rate(), so
the first round only creates the series.) Ratios must then equal the seeded demo's exactly. Rates
are Prometheus' extrapolations over each series' own sample times, so they are compared as
proportions within one server (one process's or one flush's samples): exact too. Only "calls by
outcome" from the three server processes' own metrics adds series sampled at different times.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.semconv import (
    CALLER_FAULT_STATUS_CODES,
    DURATION_BUCKETS,
    ERROR_TYPE,
    MCP_CLIENT_OPERATION_DURATION,
    MCP_SERVER_NAME,
    MCP_SERVER_OPERATION_DURATION,
    RPC_RESPONSE_STATUS_CODE,
    SPAN_METRICS_CALLS,
    TOOL_OUTCOME,
    CancelReason,
    ErrorType,
    Outcome,
    prometheus_histogram,
    prometheus_label,
)
from tests.harness import MCP_MAJOR, REPO_ROOT
from tests.processes import LOOPBACK, free_port, running, wait_until
from tests.stack.generated import generate
from tests.stack.stack import (
    COLLECTOR,
    COLLECTOR_CONFIG,
    RECORDS,
    Prometheus,
    ServerCall,
    agent_spans,
    caller_fault,
    dashboards,
    failed,
    inlined,
    is_notification,
    jaeger,
    jaeger_api,
    program,
    prometheus,
    server_fault,
    span_tags,
    substitute,
    valid,
)

if MCP_MAJOR != 2:
    pytest.skip("the demo's servers are mcp 2.x MCPServer", allow_module_level=True)

DEMO = REPO_ROOT / "examples" / "demo"
AGENT_SERVICE = "mcp-demo-agent"
PROXIED = "slow"  # the server that runs behind the proxy (its cancels and timeouts come off the wire)
OK, FAILED, CANCELLED = Outcome.OK.value, Outcome.FAILED.value, Outcome.CANCELLED.value
Call = ServerCall
DECLINED = CancelReason.INPUT_DECLINED.value


def expected_calls(side: str) -> Counter[Call]:
    """One round of the demo, from its own definitions (examples/demo)."""
    sys.path.insert(0, str(DEMO))
    try:
        import agent  # type: ignore[import-not-found]
        import servers  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DEMO))
    calls: Counter[Call] = Counter({("healthy", OK, "", "", ""): agent.LOOKUPS})
    code = str(servers.BACKEND_UNAVAILABLE)
    # Both sides carry the code the server answered; on the server's side a caller's fault has no error type.
    error = "" if side == "server" and code in CALLER_FAULT_STATUS_CODES else code
    verdicts = {
        "ok": (OK, "", ""),
        "tool_error": (FAILED, ErrorType.TOOL_ERROR, ""),
        "rpc_error": (FAILED, error, code),
    }
    for item in range(agent.FETCHES):
        outcome, error_type, status_code = verdicts[servers.flaky_verdict(item)]
        calls["flaky", outcome, error_type, "", status_code] += 1
    cancelled, timed_out = len(agent.CANCELLED_CRUNCHES), len(agent.TIMED_OUT_CRUNCHES)
    calls["slow", OK, "", "", ""] = agent.CRUNCHES - cancelled - timed_out
    if side == "client":
        calls["slow", CANCELLED, "", CancelReason.CALLER.value, ""] = cancelled
        calls["slow", FAILED, ErrorType.TIMEOUT, "", ""] = timed_out  # the client's own timer: no code
    else:
        # When its read timeout expires, the client cancels the request (notifications/cancelled):
        # the server saw a cancel, not a failure.
        calls["slow", CANCELLED, "", CancelReason.CLIENT.value, ""] = cancelled + timed_out
    # The person declines some removals: a cancel on both sides, never a failure.
    declined = len(agent.DECLINED_REMOVALS)
    calls["careful", OK, "", "", ""] = agent.REMOVALS - declined
    calls["careful", CANCELLED, "", DECLINED, ""] = declined
    return calls


EXPECTED = {side: expected_calls(side) for side in ("client", "server")}


@dataclass
class Stack:
    prometheus: Prometheus
    jaeger_url: str
    at: float  # evaluation time: after the second round
    window: str  # covers the second round only
    directory: Path  # the programs' logs


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    program(COLLECTOR)
    directory = tmp_path_factory.mktemp("stack")
    ports = {name: free_port() for name in ("grpc", "http")}
    with prometheus(directory) as server, jaeger(directory, server.url) as traces:
        env = {
            **os.environ,
            "MCP_OTEL_COLLECTOR_GRPC": f"{LOOPBACK}:{ports['grpc']}",
            "MCP_OTEL_COLLECTOR_HTTP": f"{LOOPBACK}:{ports['http']}",
            "MCP_OTEL_PROMETHEUS_REMOTE_WRITE": f"{server.url}/api/v1/write",
            "MCP_OTEL_TRACES_OTLP": traces.otlp,
        }
        collector = [str(COLLECTOR), "--config", str(COLLECTOR_CONFIG)]
        with running(collector, ports=[ports["grpc"], ports["http"]], env=env, log=directory / "collector.log"):
            at, window = _run_demo(directory, server, f"http://{LOOPBACK}:{ports['http']}")
            yield Stack(server, traces.url, at, window, directory)


def _run_demo(directory: Path, server: Prometheus, otlp: str) -> tuple[float, str]:
    gate, log = directory / "gate", directory / "demo.log"
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("OTEL_")},
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp,
        "OTEL_SERVICE_NAME": AGENT_SERVICE,
        "OTEL_METRIC_EXPORT_INTERVAL": "200",  # each process samples often: see CROSS_PROCESS
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "MCP_OTEL_DEMO_ROUNDS": "2",
        "MCP_OTEL_DEMO_GATE": str(gate),
        # One server uninstrumented behind mcp-otel proxy: every figure below must be the same.
        "MCP_OTEL_DEMO_PROXIED": PROXIED,
        "XDG_STATE_HOME": str(directory / "state"),  # the proxy's own file
    }
    command = [str(Path(sys.executable).with_name("mcp-otel")), "run", "--output", str(directory / "demo.jsonl")]
    with open(log, "wb") as output:
        demo = subprocess.Popen(
            [*command, "--", sys.executable, str(DEMO / "agent.py")], env=env, stdout=output, stderr=subprocess.STDOUT
        )
        try:
            wait_until(lambda: "round 1 done" in log.read_text(), 120, "the first round", log)
            start = _wait_for_totals(server, rounds=1) - 0.5
            gate.touch()
            assert demo.wait(timeout=120) == 0, log.read_text()
            _wait_for_totals(server, rounds=2)
        finally:
            if demo.poll() is None:
                demo.kill()
    # The recorded series must have seen the settled data: a span-metrics series gets its second
    # sample (its first rate) only with the second round's flush.
    server.wait_for_rule_evaluation(after=time.time() + 1)
    at = time.time()
    return at, f"{math.floor((at - start) * 1000)}ms"


def _wait_for_totals(server: Prometheus, rounds: int) -> float:
    """Until every source's calls of both sides, as Prometheus has them, add up to ``rounds``;
    returns the oldest of those series' latest sample times (each holds the settled value)."""
    calls = sum(sum(EXPECTED[side].values()) for side in EXPECTED) * rounds
    sdk = [
        prometheus_histogram(metric, "count")
        for metric in (MCP_CLIENT_OPERATION_DURATION, MCP_SERVER_OPERATION_DURATION)
    ]
    # Tool calls only: the in-process histograms count every request, and only a tool call's
    # points carry tool.outcome.
    outcome = prometheus_label(TOOL_OUTCOME)
    selectors = [f'{{__name__=~"{"|".join(names)}", {outcome}!=""}}' for names in (SPAN_METRICS_CALLS, sdk)]

    def settled() -> bool:
        values = [server.query(f"sum({selector})", time.time()) for selector in selectors]
        return all(v and float(v[0]["value"][1]) == calls for v in values)

    wait_until(settled, 90, f"{calls} calls in Prometheus from both sources")
    now = time.time()
    return min(float(server.query(f"min(timestamp({selector}))", now)[0]["value"][1]) for selector in selectors)


# --- Expected figures ---


def _per_server(side: str, keep: Callable[[Call], bool], among: Callable[[Call], bool]) -> dict[tuple[str, ...], float]:
    calls = EXPECTED[side]
    ratios = {}
    for server in {call[0] for call in calls}:
        whole = sum(n for call, n in calls.items() if call[0] == server and among(call))
        if whole:
            part = sum(n for call, n in calls.items() if call[0] == server and among(call) and keep(call))
            ratios[(server,)] = part / whole
    return ratios


def _proportions(
    side: str, key: Callable[[Call], tuple[str, ...]], keep: Callable[[Call], bool] = bool
) -> dict[tuple[str, ...], float]:
    """Each key's share of the calls; (server, ...) keys: within that server."""
    counts: Counter[tuple[str, ...]] = Counter()
    for call, n in EXPECTED[side].items():
        if keep(call):
            counts[key(call)] += n
    return _as_proportions(counts)


def _vector(result: list[dict[str, Any]], labels: tuple[str, ...]) -> dict[tuple[str, ...], float]:
    return {tuple(sample["metric"].get(label, "") for label in labels): float(sample["value"][1]) for sample in result}


SERVERS = ("healthy", "flaky", "slow", "careful")
# The demo's tool on each server (examples/demo/servers.py).
TOOLS = {"healthy": "lookup", "flaky": "fetch", "slow": "crunch", "careful": "remove"}
# Each removal asks the person first: one elicitation/create request (careful's to the agent).
ELICITATION = "elicitation/create"
# Rates compared across the three server processes' own metrics: each process's samples (every
# 0.2 s, later under load) fall at other times, so Prometheus extrapolates each over a slightly
# different span of the ~16 s window (seen: 5% apart on a loaded machine).
CROSS_PROCESS = 0.15


def _as_proportions(values: Mapping[tuple[str, ...], float]) -> dict[tuple[str, ...], float]:
    def group(labels: tuple[str, ...]) -> str:
        return labels[0] if len(labels) > 1 and labels[0] in SERVERS else ""

    totals: Counter[str] = Counter()
    for labels, value in values.items():
        totals[group(labels)] += value
    return {labels: value / totals[group(labels)] for labels, value in values.items()}


def _assert_close(
    actual: dict[tuple[str, ...], float], expected: dict[tuple[str, ...], float], what: str, rel: float = 1e-9
) -> None:
    assert actual.keys() == expected.keys(), what
    for labels, value in expected.items():
        assert actual[labels] == pytest.approx(value, rel=rel, abs=1e-12), (what, labels, actual)


# --- Prometheus: every dashboard query and every recording rule ---

DASHBOARD = next(d for d in dashboards() if d["uid"] == generate.DASHBOARD_UID)
PANELS = {panel["title"]: panel for panel in DASHBOARD["panels"]}
SOURCES = list(generate.SOURCE_PATTERNS)
SIDES = ["client", "server"]


def test_every_panel_query_is_answered_by_a_test() -> None:
    checked = {
        "Failure rate by server (cancels excluded)",
        "Server-fault rate by server",
        "Cancel rate by server",
        "Calls by outcome",
        "Failures by error.type and JSON-RPC code",
        "Callers' faults by server",
        "Latency of ok calls (p50, p95)",
        "Worst tools",
        "Failed calls in Jaeger",
        "Failed calls in Tempo",  # Tempo is not run (AGPL): its query is parsed (test_dashboard)
        "Requests by method and outcome",
        "Failure rate by server and method (cancels excluded)",
    }
    assert set(PANELS) == checked


def _panel(stack: Stack, title: str, source: str, side: str, ref: str = "A") -> list[dict[str, Any]]:
    target = next(t for t in PANELS[title]["targets"] if t["refId"] == ref)
    expr = substitute(target["expr"], source=generate.SOURCE_PATTERNS[source], side=side, window=stack.window)
    return stack.prometheus.query(expr, stack.at)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("source", SOURCES)
def test_ratio_panels_give_the_demos_exact_figures(stack: Stack, source: str, side: str) -> None:
    server = ("mcp_server_name",)
    panels = {
        "Failure rate by server (cancels excluded)": _per_server(side, failed, valid),
        "Server-fault rate by server": _per_server(side, server_fault, valid),
    }
    for title, expected in panels.items():
        _assert_close(_vector(_panel(stack, title, source, side), server), expected, title)
    # Cancels: a person's declines (B) apart from the others (A), each among all calls.
    title = "Cancel rate by server"
    other_cancels = _per_server(side, lambda call: call[1] == CANCELLED and call[3] != DECLINED, bool)
    _assert_close(_vector(_panel(stack, title, source, side, "A"), server), other_cancels, f"{title} A")
    declines = _per_server(side, lambda call: call[3] == DECLINED, bool)
    _assert_close(_vector(_panel(stack, title, source, side, "B"), server), declines, f"{title} B")
    assert declines[("careful",)] == 0.5
    # Worst tools: each demo server has one tool, so its failure rate is its server's.
    failure = panels["Failure rate by server (cancels excluded)"]
    worst = _vector(_panel(stack, "Worst tools", source, side), ("mcp_server_name", "gen_ai_tool_name"))
    _assert_close(worst, {(name, TOOLS[name]): ratio for (name,), ratio in failure.items()}, "Worst tools")
    # Per method: in the window (the second round) the demo's sessions make tool calls only.
    title = "Failure rate by server and method (cancels excluded)"
    by_method = _vector(_panel(stack, title, source, side), ("mcp_server_name", "mcp_method_name"))
    expected = {(name, "tools/call"): ratio for (name,), ratio in failure.items()}
    expected["careful", ELICITATION] = 0.0  # accepted ones are ok, declined ones cancelled: no failure
    _assert_close(by_method, expected, title)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("source", SOURCES)
def test_rate_panels_are_in_the_demos_exact_proportions(stack: Stack, source: str, side: str) -> None:
    by_outcome = _vector(_panel(stack, "Calls by outcome", source, side), ("tool_outcome",))
    # Summed over the three server processes' own samples (taken at different times): close.
    rel = CROSS_PROCESS if (source, side) == ("sdk", "server") else 1e-9
    _assert_close(_as_proportions(by_outcome), _proportions(side, lambda call: (call[1],)), "Calls by outcome", rel)
    title = "Requests by method and outcome"
    by_method = _vector(_panel(stack, title, source, side), ("mcp_method_name", "mcp_request_outcome"))
    # The sessions' initialize and tools/list were in the first round: no rate in the window.
    assert {value for (method, _), value in by_method.items() if method not in ("tools/call", ELICITATION)} == {0.0}, (
        by_method
    )
    # The person's answers: as many accepted (ok) as declined (cancelled), in one process.
    asked = {(outcome,): value for (method, outcome), value in by_method.items() if method == ELICITATION}
    _assert_close(_as_proportions(asked), {(OK,): 0.5, (CANCELLED,): 0.5}, f"{title} {ELICITATION}")
    tool_calls = {(outcome,): value for (method, outcome), value in by_method.items() if method == "tools/call"}
    _assert_close(_as_proportions(tool_calls), _proportions(side, lambda call: (call[1],)), title, rel)
    server, error_type, code = "mcp_server_name", "error_type", "rpc_response_status_code"
    title = "Failures by error.type and JSON-RPC code"
    by_error = _vector(_panel(stack, title, source, side), (server, error_type, code))
    expected = _proportions(side, lambda call: (call[0], call[2], call[4]), failed)
    _assert_close(_as_proportions(by_error), expected, title)
    # Callers' faults apart, by the code the server answered (the demo's servers answer none).
    title = "Callers' faults by server"
    by_code = _vector(_panel(stack, title, source, side), (server, code))
    _assert_close(_as_proportions(by_code), _proportions(side, lambda call: (call[0], call[4]), caller_fault), title)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("source", SOURCES)
def test_latency_panel_places_each_server_in_its_bucket(stack: Stack, source: str, side: str) -> None:
    p50 = _vector(_panel(stack, "Latency of ok calls (p50, p95)", source, side, "A"), ("mcp_server_name",))
    p95 = _vector(_panel(stack, "Latency of ok calls (p50, p95)", source, side, "B"), ("mcp_server_name",))
    assert set(p50) == set(p95) == {(name,) for name in SERVERS}
    # slow's ok calls sleep 0.05 s: its median lies above that bucket boundary, whatever the load.
    assert p50[("slow",)] > 0.05
    # Each median in the bucket of the window's ok calls as the agent timed them (its CLIENT spans;
    # a server's own span lies within the agent's, so its median lies no higher). Not a fixed
    # bound: on a loaded machine careful's calls, a round trip to the agent's person each, took
    # 60 ms (seen).
    since = stack.at - int(stack.window.removesuffix("ms")) / 1000
    spans = agent_spans(stack.directory / "demo.jsonl")
    ok_calls = [span for span in spans if span.start >= since and span.attributes.get(TOOL_OUTCOME) == OK]
    for (name,), median in p50.items():
        durations = [span.end - span.start for span in ok_calls if span.attributes.get(MCP_SERVER_NAME) == name]
        assert durations, name
        lower, upper = _median_bucket(durations)
        assert (lower if side == "client" else 0) < median <= upper, (name, median, lower, upper)
    assert all(p50[name] <= p95[name] for name in p50)


def _median_bucket(durations: list[float]) -> tuple[float, float]:
    """Where ``histogram_quantile(0.5, ...)`` puts the median of ``durations``: in the first bucket
    whose count reaches half of them, or, when exactly half lie at or below its bound, just above
    it (Prometheus's extrapolated counts may tip either way). Widened by a millisecond each way:
    the SDK's histogram times a call apart from its span."""
    bounds, half = (0.0, *DURATION_BUCKETS), len(durations) / 2

    def below(bound: float, margin: float) -> int:
        return sum(duration + margin <= bound for duration in durations)

    lowest = next(i for i, bound in enumerate(bounds) if below(bound, -0.001) >= half)
    highest = next(i for i, bound in enumerate(bounds) if below(bound, 0.001) > half)
    return bounds[lowest - 1], bounds[highest]


# Each per-method record, and the tool-call record whose figures its tools/call rows must repeat
# (one string end to end: the same calls, whichever outcome label a rule reads).
REQUEST_TWINS = {
    "mcp:requests:rate5m": "mcp:tool_calls:rate5m",
    "mcp_server_method:requests_valid:rate5m": "mcp_server:tool_calls_valid:rate5m",
    "mcp_server_method:request_failure_ratio:rate5m": "mcp_server:tool_call_failure_ratio:rate5m",
}


def _by_call(result: list[dict[str, Any]]) -> dict[tuple[str, ...], float]:
    """(source, side, server, outcome, error type, code) -> value, summed over the other labels."""
    summed: Counter[tuple[str, ...]] = Counter()
    for sample in result:
        labels = sample["metric"]
        outcome = labels.get("mcp_request_outcome", labels.get("tool_outcome", ""))
        error = tuple(labels.get(label, "") for label in ("error_type", "rpc_response_status_code"))
        summed[(labels["source"], labels["side"], labels["mcp_server_name"], outcome, *error)] += float(
            sample["value"][1]
        )
    return dict(summed)


def _assert_twins(stack: Stack, record: str) -> None:
    rows = stack.prometheus.query(inlined(RECORDS[record], stack.window), stack.at)
    twin = stack.prometheus.query(inlined(RECORDS[REQUEST_TWINS[record]], stack.window), stack.at)
    tool_calls = [row for row in rows if row["metric"]["mcp_method_name"] == "tools/call"]
    _assert_close(_by_call(tool_calls), _by_call(twin), record)
    # The demo's sessions made their other requests (initialize, tools/list) in the first round;
    # careful asked the person in both (accepted: ok, declined: cancelled; never failed).
    asked = [row for row in rows if row["metric"]["mcp_method_name"] == ELICITATION]
    others = [row for row in rows if row["metric"]["mcp_method_name"] not in ("tools/call", ELICITATION)]
    assert {row["metric"]["mcp_server_name"] for row in asked} == {"careful"}, record
    assert {(row["metric"]["source"], row["metric"]["side"]) for row in asked} == {
        (source, side) for source in SOURCES for side in SIDES
    }, record
    if "ratio" in record:
        assert others == [], record  # no valid requests in the window: no ratio
        assert {float(row["value"][1]) for row in asked} == {0.0}, record
    else:
        assert {row["metric"]["mcp_method_name"] for row in others} == {"initialize", "tools/list"}, record
        assert {float(row["value"][1]) for row in others} == {0.0}, record
        outcomes = {row["metric"].get("mcp_request_outcome") for row in asked}
        assert outcomes == ({OK, CANCELLED} if record == "mcp:requests:rate5m" else {None}), record
        assert all(float(row["value"][1]) > 0 for row in asked), record


def test_every_recording_rule_gives_the_demos_figures(stack: Stack) -> None:
    groups = ("source", "side")
    for record, expr in RECORDS.items():
        if record in REQUEST_TWINS:
            _assert_twins(stack, record)
            continue
        result = stack.prometheus.query(inlined(expr, stack.window), stack.at)
        for source in SOURCES:
            for side in SIDES:
                mine = [s for s in result if (s["metric"]["source"], s["metric"]["side"]) == (source, side)]
                if record.startswith("mcp:tool_calls:"):
                    labels = (
                        "mcp_server_name",
                        "tool_outcome",
                        "error_type",
                        "mcp_request_cancel_reason",
                        "rpc_response_status_code",
                    )
                    expected = _proportions(side, lambda call: call)
                elif ":tool_calls_valid:" in record:
                    labels, expected = ("mcp_server_name",), _proportions(side, lambda call: (call[0],), valid)
                else:
                    labels = ("mcp_server_name",)
                    keep, among = {
                        "server_fault": (server_fault, valid),
                        "failure": (failed, valid),
                        "cancel": (lambda call: call[1] == CANCELLED, bool),
                        "declined": (lambda call: call[3] == DECLINED, bool),
                    }[record.split(":")[1].removeprefix("tool_call_").removesuffix("_ratio")]
                    _assert_close(_vector(mine, labels), _per_server(side, keep, among), f"{record} {source} {side}")
                    continue
                rel = CROSS_PROCESS if (source, side, labels) == ("sdk", "server", ("mcp_server_name",)) else 1e-9
                _assert_close(_as_proportions(_vector(mine, labels)), expected, f"{record} {source} {side}", rel)
        assert {tuple(s["metric"][g] for g in groups) for s in result} == {(s, d) for s in SOURCES for d in SIDES}, (
            record
        )


def test_prometheus_evaluates_every_rule_without_error(stack: Stack) -> None:
    rules = [rule for group in stack.prometheus.get("/api/v1/rules")["groups"] for rule in group["rules"]]
    assert len(rules) == len(RECORDS) + 2
    assert [(rule["name"], rule["health"], rule.get("lastError")) for rule in rules if rule["health"] != "ok"] == []
    # The recorded series exist for every source and side.
    live = stack.prometheus.query("mcp_server:tool_call_failure_ratio:rate5m", stack.at)
    assert {(s["metric"]["source"], s["metric"]["side"]) for s in live} == {(s, d) for s in SOURCES for d in SIDES}, (
        live
    )


def test_prometheus_accepted_every_remote_write(stack: Stack) -> None:
    """Span metrics and in-process metrics of one service share its resource: were both to write
    its target_info, Prometheus would refuse whole requests (and every span-metric sample in them)
    as out of order, now and then, depending on the timing."""
    log = (stack.directory / "prometheus.log").read_text()
    assert "Out of order sample" not in log
    assert "failed to send WriteRequest" not in (stack.directory / "collector.log").read_text()


def test_span_metrics_carry_exemplars_of_real_traces(stack: Stack) -> None:
    exemplars = stack.prometheus.get(
        "/api/v1/query_exemplars",
        query="traces_span_metrics_duration_seconds_bucket",
        start=stack.at - 600,
        end=stack.at,
    )
    trace_ids = {e["labels"]["trace_id"] for series in exemplars for e in series["exemplars"]}
    assert trace_ids
    known = {trace["traceID"] for trace in _jaeger_traces(stack, AGENT_SERVICE)}
    assert trace_ids <= known


# --- Jaeger ---


def _jaeger(stack: Stack, path: str, **params: Any) -> Any:
    return jaeger_api(stack.jaeger_url, path, **params)


def _jaeger_traces(stack: Stack, service: str, **params: Any) -> list[dict[str, Any]]:
    traces: list[dict[str, Any]] = _jaeger(stack, "/api/traces", service=service, limit=1000, lookback="1h", **params)
    return traces


def _is_tool_call(span: dict[str, Any]) -> bool:
    return bool(span_tags(span).get("mcp.method.name") == "tools/call")


def test_jaeger_has_each_call_as_one_trace_with_its_client_and_server_span(stack: Stack) -> None:
    services = set(_jaeger(stack, "/api/services"))
    assert {AGENT_SERVICE, *(f"mcp-demo-{name}" for name in SERVERS)} <= services
    traces = _jaeger_traces(stack, AGENT_SERVICE)
    # The agent's other traces are its sessions' initialize and tools/list, one each per server,
    # each with its CLIENT and SERVER span, ok (mcp-otel's own: the SDK's are suppressed); and
    # inside each removal's trace, careful's question to the person and the agent's answer.
    # (Notifications' spans are not requests: left out.)
    others = Counter(
        (span["operationName"], span_tags(span)["span.kind"], span_tags(span).get("mcp.request.outcome"))
        for trace in traces
        for span in trace["spans"]
        if not _is_tool_call(span) and not is_notification(span)
    )
    removals = 2 * sum(n for call, n in EXPECTED["client"].items() if call[0] == "careful")  # two rounds
    declines = 2 * EXPECTED["client"]["careful", CANCELLED, "", DECLINED, ""]
    assert others == Counter(
        {(name, kind, "ok"): len(SERVERS) for name in ("initialize", "tools/list") for kind in ("client", "server")}
        | {(ELICITATION, kind, OK): removals - declines for kind in ("client", "server")}
        | {(ELICITATION, kind, CANCELLED): declines for kind in ("client", "server")}
    )
    traces = [trace for trace in traces if any(map(_is_tool_call, trace["spans"]))]
    assert len(traces) == 2 * sum(EXPECTED["client"].values())
    seen: dict[str, Counter[Call]] = {"client": Counter(), "server": Counter()}
    for trace in traces:
        calls = [span for span in trace["spans"] if _is_tool_call(span)]
        kinds = Counter(span_tags(span).get("span.kind") for span in calls)
        assert kinds == Counter({"client": 1, "server": 1}), trace["traceID"]
        asked = [span for span in trace["spans"] if span["operationName"] == ELICITATION]
        careful = span_tags(calls[0])["mcp.server.name"] == "careful"
        requests = [span for span in trace["spans"] if not is_notification(span)]
        assert len(asked) == (2 if careful else 0) == len(requests) - 2, trace["traceID"]
        for span in calls:
            tags = span_tags(span)
            call = (
                tags["mcp.server.name"],
                tags["tool.outcome"],
                tags.get(ERROR_TYPE, ""),
                tags.get("tool.cancel.reason", ""),
                tags.get(RPC_RESPONSE_STATUS_CODE, ""),
            )
            seen[tags["span.kind"]][call] += 1
            # Only failed calls carry the error tag: a cancelled call is not an error, nor on its
            # server a caller's fault.
            error = call[1] == FAILED and not (tags["span.kind"] == "server" and caller_fault(call))
            assert (tags.get("error") is True) == error, (trace["traceID"], tags)
    for side in SIDES:
        assert seen[side] == Counter({call: 2 * n for call, n in EXPECTED[side].items()}), side


def test_jaeger_search_for_failed_calls_finds_exactly_them(stack: Stack) -> None:
    """The dashboard's Jaeger panel query: tag tool.outcome=failed."""
    target = next(t for t in PANELS["Failed calls in Jaeger"]["targets"])
    key, value = target["tags"].split("=")
    traces = _jaeger_traces(stack, AGENT_SERVICE, tags=json.dumps({key: value}))
    failures = sum(n for call, n in EXPECTED["client"].items() if call[1] == FAILED)
    assert len(traces) == 2 * failures
    for trace in traces:
        assert FAILED in {span_tags(span).get("tool.outcome") for span in trace["spans"]}


def test_jaeger_monitor_tab_reads_the_collectors_span_metrics(stack: Stack) -> None:
    """Jaeger's SPM (Monitor tab) reads the collector's span metrics from Prometheus: the agent's
    tool calls have a call rate, and an error rate that counts failed calls (status ERROR) only."""
    # Jaeger's rate range is ratePer, in whole seconds (Prometheus 2 takes no fractions): its last
    # point's range starts where the window does and covers the second round, so each series was
    # created before it and the calls and errors of one flush extrapolate alike (a range reaching
    # into the first round, where a server's error series starts later than its calls, does not).
    window_ms = int(stack.window.removesuffix("ms"))
    start_ms = int(stack.at * 1000) - window_ms
    rate_ms = math.ceil(window_ms / 1000) * 1000
    params = {
        "service": AGENT_SERVICE,
        "spanKind": "client",
        "endTs": start_ms + rate_ms,
        "lookback": 120_000,
        "step": 1000,
        "ratePer": rate_ms,
        "groupByOperation": "true",
    }
    figures = {}
    for name in ("calls", "errors"):
        url = f"{stack.jaeger_url}/api/metrics/{name}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=30) as response:
            figures[name] = json.load(response)

    def per_operation(name: str) -> dict[str, float]:
        return {
            labels["value"]: metric["metricPoints"][-1]["gaugeValue"]["doubleValue"]
            for metric in figures[name]["metrics"]
            for labels in metric["labels"]
            if labels["name"] == "operation"
        }

    calls, errors = per_operation("calls"), per_operation("errors")
    assert all(calls[f"tools/call {tool}"] > 0 for tool in TOOLS.values()), calls
    # Jaeger's own error rate per operation: ERROR among all its calls. Cancelled calls are not
    # errors (UNSET) but, unlike in our dashboards, they stay in its denominator.
    for server, tool in TOOLS.items():
        mine = {call: n for call, n in EXPECTED["client"].items() if call[0] == server}
        expected = sum(n for call, n in mine.items() if call[1] == FAILED) / sum(mine.values())
        # (An operation without errors may have no error series: its rate is 0.)
        assert errors.get(f"tools/call {tool}", 0.0) == pytest.approx(expected, rel=1e-9), (server, errors)
