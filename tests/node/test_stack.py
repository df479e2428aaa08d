"""The bundled stack, unchanged, on TypeScript telemetry: two TypeScript agents (the MCP TypeScript
SDK's Client, v1 and v2), each calling its own TypeScript server of the same generation over stdio,
all four instrumented with the npm package mcp-otel and exporting OTLP/HTTP (the OpenTelemetry JS
exporters) to the built collector with collector-config/collector.yaml; the collector sends
traces to Jaeger v2 and span metrics plus the processes' own histograms to Prometheus, which
evaluates the generated rules (as in tests/stack/test_end_to_end.py, with Python programs).

Each agent makes a known mix of tool calls, in two identical rounds: ok, isError, one its caller
aborts (AbortSignal), one the server answers -32602 (the caller's fault) and one -32603. What
must hold:
- Prometheus's totals per (side, server, outcome, error type, cancel reason, code) are the calls
  made, from both metric sources;
- the dashboard's panels and the recording rules give the mix's exact figures: failure rate
  without cancels, server-fault rate without callers' faults, cancel rate, calls by outcome,
  failures by error type and code, callers' faults; over the second round only (the first creates
  the series), each server's figures from one process's or one flush's samples;
- Jaeger holds each call as one trace: the agent's CLIENT span and its server's SERVER span.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_otel.semconv import (
    ERROR_TYPE,
    MCP_CLIENT_OPERATION_DURATION,
    MCP_REQUEST_CANCEL_REASON,
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
from tests.node.conftest import AGENT, GENERATIONS, SERVER, needs_node
from tests.processes import LOOPBACK, free_port, running, wait_until
from tests.stack.generated import generate
from tests.stack.stack import (
    COLLECTOR,
    COLLECTOR_CONFIG,
    RECORDS,
    Prometheus,
    ServerCall,
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

# The stack's assets do not depend on the Python SDK's major: checked once, in the mcp 2.x run.
pytestmark = [pytest.mark.mcp2, needs_node]

OK, FAILED, CANCELLED = Outcome.OK.value, Outcome.FAILED.value, Outcome.CANCELLED.value
SIDES = ("client", "server")
SOURCES = tuple(generate.SOURCE_PATTERNS)
SERVERS = tuple(f"ts-server-{generation}" for generation in GENERATIONS)

# Each tool the agents call: how often per round, and the call as the client and as the server
# count it: (outcome, error type, cancel reason, JSON-RPC code), "" where it has none.
MIX: dict[str, tuple[int, tuple[str, str, str, str], tuple[str, str, str, str]]] = {
    "ok": (4, (OK, "", "", ""), (OK, "", "", "")),
    "tool_error": (2, (FAILED, ErrorType.TOOL_ERROR, "", ""), (FAILED, ErrorType.TOOL_ERROR, "", "")),
    # The caller gives up after 0.3 s: it sends notifications/cancelled, the server stops.
    "slow": (1, (CANCELLED, "", CancelReason.CALLER.value, ""), (CANCELLED, "", CancelReason.CLIENT.value, "")),
    # A caller's fault: on the server's side no error type, only the code.
    "rpc_error": (1, (FAILED, "-32602", "", "-32602"), (FAILED, "", "", "-32602")),
    "server_error": (1, (FAILED, "-32603", "", "-32603"), (FAILED, "-32603", "", "-32603")),
}
PLAN = [
    {"tool": tool, **({"abortAfterMs": 300} if tool == "slow" else {})}
    for tool, (times, *_) in MIX.items()
    for _ in range(times)
]
ROUNDS = 2


def view(side: str, tool: str) -> tuple[str, str, str, str]:
    """A call of ``tool`` as ``side`` counts it."""
    _, client, server = MIX[tool]
    return client if side == "client" else server


def calls(side: str) -> Counter[ServerCall]:
    """One round's calls as ``side`` counts them, of every server."""
    return Counter({(server, *view(side, tool)): times for server in SERVERS for tool, (times, *_) in MIX.items()})


EXPECTED = {side: calls(side) for side in SIDES}
CALLS_PER_ROUND = sum(sum(counted.values()) for counted in EXPECTED.values())


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
    directory = tmp_path_factory.mktemp("ts-stack")
    grpc, http = free_port(), free_port()
    with prometheus(directory) as server, jaeger(directory, server.url) as traces:
        env = {
            **os.environ,
            "MCP_OTEL_COLLECTOR_GRPC": f"{LOOPBACK}:{grpc}",
            "MCP_OTEL_COLLECTOR_HTTP": f"{LOOPBACK}:{http}",
            "MCP_OTEL_PROMETHEUS_REMOTE_WRITE": f"{server.url}/api/v1/write",
            "MCP_OTEL_TRACES_OTLP": traces.otlp,
        }
        collector = [str(COLLECTOR), "--config", str(COLLECTOR_CONFIG)]
        with running(collector, ports=[grpc, http], env=env, log=directory / "collector.log"):
            at, window = _run_agents(directory, server, f"http://{LOOPBACK}:{http}")
            yield Stack(server, traces.url, at, window, directory)


def _run_agents(directory: Path, server: Prometheus, otlp: str) -> tuple[float, str]:
    """Both agents' two rounds; returns the evaluation time and a window covering the second."""
    gate = directory / "gate"
    base = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    agents = []
    for generation in GENERATIONS:
        log = directory / f"agent-{generation}.log"
        env = {
            **base,
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp,
            "OTEL_SERVICE_NAME": f"ts-agent-{generation}",
            "OTEL_METRIC_EXPORT_INTERVAL": "200",
            "MCP_SERVER_ENV": json.dumps({"OTEL_SERVICE_NAME": f"ts-server-{generation}"}),
            "MCP_PLAN": json.dumps(PLAN),
            "MCP_ROUNDS": str(ROUNDS),
            "MCP_GATE": str(gate),
        }
        command = ["node", str(AGENT), generation, "node", str(SERVER), generation, "lowlevel"]
        with open(log, "wb") as output:
            process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
        agents.append((process, log))
    try:
        for _, log in agents:
            wait_until(_printed(log, "round 1 done"), 60, "the first round", log)
        # The processes' own histograms are exported every 0.2 s: settled, every later sample holds
        # the first round's totals. The window starts just before the first span-metrics flush
        # after that (every 15 s), whose samples hold them too.
        _wait_for_totals(server, "sdk", rounds=1)
        settled = time.time()
        wait_until(
            lambda: _latest_sample(server, "span_metrics", rounds=1) > settled + 1,
            60,
            "a span-metrics flush holding the first round",
            directory / "collector.log",
        )
        start = _latest_sample(server, "span_metrics", rounds=1) - 0.5
        gate.touch()
        for process, log in agents:
            assert process.wait(timeout=60) == 0, log.read_text()
        for source in SOURCES:
            _wait_for_totals(server, source, rounds=ROUNDS)
    finally:
        for process, _ in agents:
            if process.poll() is None:
                process.kill()
                process.wait()
    # The recorded series must have seen the settled data.
    server.wait_for_rule_evaluation(after=time.time() + 1)
    at = time.time()
    return at, f"{math.floor((at - start) * 1000)}ms"


def _printed(log: Path, line: str) -> Callable[[], bool]:
    return lambda: line in log.read_text().splitlines()


# Each source's call counters, by side.
COUNTERS = {
    "span_metrics": {
        side: f'__name__=~"{"|".join(SPAN_METRICS_CALLS)}", span_kind="SPAN_KIND_{side.upper()}"' for side in SIDES
    },
    "sdk": {
        side: f'__name__="{prometheus_histogram(metric, "count")}"'
        for side, metric in zip(SIDES, (MCP_CLIENT_OPERATION_DURATION, MCP_SERVER_OPERATION_DURATION), strict=True)
    },
}


def selector(source: str, side: str | None = None) -> str:
    """The tool calls' series of ``source`` (of ``side``, or both)."""
    sides = SIDES if side is None else (side,)
    return " or ".join(f'{{{COUNTERS[source][each]}, {prometheus_label(TOOL_OUTCOME)}!=""}}' for each in sides)


def _total(server: Prometheus, source: str) -> float:
    found = server.query(f"sum({selector(source)})", time.time())
    return float(found[0]["value"][1]) if found else 0.0


def _wait_for_totals(server: Prometheus, source: str, rounds: int) -> None:
    calls = CALLS_PER_ROUND * rounds
    wait_until(lambda: _total(server, source) == calls, 90, f"{calls} tool calls from {source} in Prometheus")


def _latest_sample(server: Prometheus, source: str, rounds: int) -> float:
    """The oldest of the source's series' latest sample times, once they hold ``rounds`` rounds."""
    if _total(server, source) != CALLS_PER_ROUND * rounds:
        return 0.0
    return float(server.query(f"min(timestamp({selector(source)}))", time.time())[0]["value"][1])


# --- Expected figures ---


def _per_server(
    side: str, keep: Callable[[ServerCall], bool], among: Callable[[ServerCall], bool]
) -> dict[tuple[str, ...], float]:
    """Per server: the share of its ``among`` calls that ``keep`` holds for."""
    ratios: dict[tuple[str, ...], float] = {}
    for server in SERVERS:
        mine = {call: n for call, n in EXPECTED[side].items() if call[0] == server and among(call)}
        ratios[(server,)] = sum(n for call, n in mine.items() if keep(call)) / sum(mine.values())
    return ratios


def _shares(
    side: str, key: Callable[[ServerCall], tuple[str, ...]], keep: Callable[[ServerCall], bool] = bool
) -> dict[tuple[str, ...], float]:
    """Each key's share of the ``keep`` calls; (server, ...) keys: within that server."""
    counts: Counter[tuple[str, ...]] = Counter()
    for call, n in EXPECTED[side].items():
        if keep(call):
            counts[key(call)] += n
    return _as_shares({key: float(n) for key, n in counts.items()})


def _as_shares(values: Mapping[tuple[str, ...], float]) -> dict[tuple[str, ...], float]:
    """Each value's share of the whole; values keyed (server, ...): of their server's (each server's
    rates come from one process's samples, extrapolated alike)."""

    def group(labels: tuple[str, ...]) -> str:
        return labels[0] if len(labels) > 1 and labels[0] in SERVERS else ""

    totals: dict[str, float] = {}
    for labels, value in values.items():
        totals[group(labels)] = totals.get(group(labels), 0.0) + value
    return {labels: value / totals[group(labels)] for labels, value in values.items()}


def _vector(result: list[dict[str, Any]], labels: tuple[str, ...]) -> dict[tuple[str, ...], float]:
    return {tuple(sample["metric"].get(label, "") for label in labels): float(sample["value"][1]) for sample in result}


def _assert_close(actual: dict[tuple[str, ...], float], expected: dict[tuple[str, ...], float], what: str) -> None:
    assert actual.keys() == expected.keys(), (what, actual)
    for labels, value in expected.items():
        assert actual[labels] == pytest.approx(value, rel=1e-9, abs=1e-12), (what, labels, actual)


# --- Prometheus: the totals, every dashboard query about outcomes, the recording rules ---

LABELS = tuple(
    prometheus_label(name)
    for name in (MCP_SERVER_NAME, TOOL_OUTCOME, ERROR_TYPE, MCP_REQUEST_CANCEL_REASON, RPC_RESPONSE_STATUS_CODE)
)


@pytest.mark.parametrize("source", SOURCES)
def test_prometheus_counts_every_call_as_made(stack: Stack, source: str) -> None:
    for side in SIDES:
        query = f"sum by ({', '.join(LABELS)}) ({selector(source, side)})"
        totals = _vector(stack.prometheus.query(query, stack.at), LABELS)
        assert totals == {call: ROUNDS * n for call, n in EXPECTED[side].items()}, (source, side)


DASHBOARD = next(d for d in dashboards() if d["uid"] == generate.DASHBOARD_UID)
PANELS = {panel["title"]: panel for panel in DASHBOARD["panels"]}


def _panel(stack: Stack, title: str, source: str, side: str, ref: str = "A") -> list[dict[str, Any]]:
    target = next(t for t in PANELS[title]["targets"] if t["refId"] == ref)
    expr = substitute(target["expr"], source=generate.SOURCE_PATTERNS[source], side=side, window=stack.window)
    return stack.prometheus.query(expr, stack.at)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("source", SOURCES)
def test_the_dashboards_panels_give_the_exact_figures(stack: Stack, source: str, side: str) -> None:
    server = ("mcp_server_name",)
    ratios = {
        # 4 of 8 valid calls failed (the cancel counts in neither)...
        "Failure rate by server (cancels excluded)": _per_server(side, failed, valid),
        # ...3 of them the server's fault (not the caller's -32602).
        "Server-fault rate by server": _per_server(side, server_fault, valid),
    }
    assert set(ratios["Failure rate by server (cancels excluded)"].values()) == {0.5}
    assert set(ratios["Server-fault rate by server"].values()) == {0.375}
    for title, expected in ratios.items():
        _assert_close(_vector(_panel(stack, title, source, side), server), expected, title)
    title = "Cancel rate by server"
    cancels = _per_server(side, lambda call: call[1] == CANCELLED, bool)
    _assert_close(_vector(_panel(stack, title, source, side, "A"), server), cancels, f"{title} A")
    _assert_close(_vector(_panel(stack, title, source, side, "B"), server), dict.fromkeys(cancels, 0.0), f"{title} B")
    title = "Worst tools"
    worst = _vector(_panel(stack, title, source, side), ("mcp_server_name", "gen_ai_tool_name"))
    # Each tool's failure rate (slow's calls were all cancelled: no valid call, no rate).
    tools: dict[tuple[str, ...], float] = {
        (name, tool): float(view(side, tool)[0] == FAILED) for name in SERVERS for tool in MIX if tool != "slow"
    }
    _assert_close(worst, tools, title)
    # Rates: each one's share (the two servers' mixes are alike: the shares are exact).
    title = "Calls by outcome"
    by_outcome = _vector(_panel(stack, title, source, side), ("tool_outcome",))
    _assert_close(_as_shares(by_outcome), _shares(side, lambda call: (call[1],)), title)
    title = "Failures by error.type and JSON-RPC code"
    by_error = _vector(
        _panel(stack, title, source, side), ("mcp_server_name", "error_type", "rpc_response_status_code")
    )
    _assert_close(_as_shares(by_error), _shares(side, lambda call: (call[0], call[2], call[4]), failed), title)
    title = "Callers' faults by server"
    by_code = _vector(_panel(stack, title, source, side), ("mcp_server_name", "rpc_response_status_code"))
    _assert_close(_as_shares(by_code), _shares(side, lambda call: (call[0], call[4]), caller_fault), title)
    assert set(by_code) == {(name, "-32602") for name in SERVERS}


# Each per-server ratio the rules record (whatever their window: all evaluated over the test's).
RATIOS: dict[str, tuple[Callable[[ServerCall], bool], Callable[[ServerCall], bool]]] = {
    "server_fault": (server_fault, valid),
    "failure": (failed, valid),
    "cancel": (lambda call: call[1] == CANCELLED, bool),
    "declined": (lambda call: call[3] == CancelReason.INPUT_DECLINED.value, bool),
}


def _everywhere(
    keep: Callable[[ServerCall], bool], among: Callable[[ServerCall], bool], *more: str
) -> dict[tuple[str, ...], float]:
    """Each server's ratio (``_per_server``) for every source and side: keyed (source, side, server, *more)."""
    return {
        (source, side, *labels, *more): ratio
        for source in SOURCES
        for side in SIDES
        for labels, ratio in _per_server(side, keep, among).items()
    }


def test_the_recording_rules_give_the_exact_ratios(stack: Stack) -> None:
    checked = 0
    for record, expr in RECORDS.items():
        kind = record.split(":")[1].removeprefix("tool_call_").removesuffix("_ratio")
        if not record.startswith("mcp_server:") or kind not in RATIOS:
            continue
        keep, among = RATIOS[kind]
        result = stack.prometheus.query(inlined(expr, stack.window), stack.at)
        actual = _vector(result, ("source", "side", "mcp_server_name"))
        _assert_close(actual, _everywhere(keep, among), record)
        checked += 1
    assert checked == 10  # the server-fault ratio over 7 windows, failure, cancel, declined
    # Per method: only tool calls were made in the window; their failure ratio again.
    record = "mcp_server_method:request_failure_ratio:rate5m"
    result = stack.prometheus.query(inlined(RECORDS[record], stack.window), stack.at)
    actual = _vector(result, ("source", "side", "mcp_server_name", "mcp_method_name"))
    _assert_close(actual, _everywhere(failed, valid, "tools/call"), record)


def test_prometheus_accepted_every_write_and_evaluates_every_rule_without_error(stack: Stack) -> None:
    rules = [rule for group in stack.prometheus.get("/api/v1/rules")["groups"] for rule in group["rules"]]
    assert [(rule["name"], rule["health"], rule.get("lastError")) for rule in rules if rule["health"] != "ok"] == []
    # The JS SDK's resource and the span metrics' share the services' target_info (test_end_to_end.py).
    assert "Out of order sample" not in (stack.directory / "prometheus.log").read_text()
    assert "failed to send WriteRequest" not in (stack.directory / "collector.log").read_text()


# --- Jaeger ---


def test_jaeger_has_each_call_as_one_trace_with_its_client_and_server_span(stack: Stack) -> None:
    for generation in GENERATIONS:
        service = f"ts-agent-{generation}"
        traces = jaeger_api(stack.jaeger_url, "/api/traces", service=service, limit=1000, lookback="1h")
        seen: dict[str, Counter[ServerCall]] = {side: Counter() for side in SIDES}
        calls = 0
        for trace in traces:
            spans = [span for span in trace["spans"] if not is_notification(span)]
            if not any(span_tags(span).get("mcp.method.name") == "tools/call" for span in spans):
                continue  # the session's initialize
            calls += 1
            client, server = sorted(spans, key=lambda span: span_tags(span)["span.kind"])
            assert [span_tags(span)["span.kind"] for span in (client, server)] == list(SIDES), trace["traceID"]
            assert server["references"] == [
                {"refType": "CHILD_OF", "traceID": trace["traceID"], "spanID": client["spanID"]}
            ]
            processes = {span["processID"]: trace["processes"][span["processID"]]["serviceName"] for span in spans}
            assert [processes[span["processID"]] for span in (client, server)] == [service, f"ts-server-{generation}"]
            for side, span in zip(SIDES, (client, server), strict=True):
                tags = span_tags(span)
                seen[side][
                    tags[MCP_SERVER_NAME],
                    tags["tool.outcome"],
                    tags.get(ERROR_TYPE, ""),
                    tags.get("tool.cancel.reason", ""),
                    tags.get(RPC_RESPONSE_STATUS_CODE, ""),
                ] += 1
        assert calls == ROUNDS * len(PLAN)
        for side in SIDES:
            mine = {call: ROUNDS * n for call, n in EXPECTED[side].items() if call[0] == f"ts-server-{generation}"}
            assert seen[side] == mine, (service, side)
