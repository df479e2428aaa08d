"""The scaled topology on 127.0.0.1 (docs/stack.md, "Past one machine"), with the real programs: one edge
collector (edge.yaml) routing traces by trace id to two gateway collectors (collector.yaml +
gateway.yaml: span metrics of every span, then tail sampling), Jaeger v2 and Prometheus with the
rules; a fleet of instrumented agents, each with its own instrumented stdio server, in separate
processes, making a seeded mix of tool calls (tests/stack/fleet_agent.py) in tasks of two calls,
each task one trace.

What must hold, however many traces the gateways drop:
- every call is counted: Prometheus's totals per (side, server, outcome, error type, JSON-RPC
  code) equal the seeded calls exactly, from both metric sources (the gateways' span metrics,
  summed over the gateways, and the processes' own histograms);
- the recording rules and the dashboard's server-fault and callers' faults panels give the seeded
  ratios (the servers' -32602 answers a caller's fault on both sides, told by its code: on the
  server's side it has no error type): over the second round only (as in test_end_to_end.py),
  with a window of a whole number of span-metric flushes, so that every gateway's series has as
  many samples in it and Prometheus extrapolates all of them alike (exactly from the processes'
  histograms, within 1% from the two gateways' span metrics);
- every trace holding a failed call is in Jaeger, complete (the agent's root span, and each call's
  CLIENT span and its server's SERVER span, from the two processes), and no kept trace lacks a
  span (none was split across gateways);
- the traces of ok calls only are kept at the configured share, those with a cancel at theirs,
  within a binomial tolerance (4 standard deviations: a false alarm about once in 16,000 runs);
- a gateway killed mid-run (SIGKILL) loses at most what it held: the calls it had counted since
  its last flush and those routed to it until the edge re-routed, and the traces it had not
  decided yet; the test prints how much that was.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_otel.semconv import (
    ERROR_TYPE,
    GATEWAY_NAME,
    MCP_CLIENT_OPERATION_DURATION,
    MCP_METHOD_NAME,
    MCP_REQUEST_CANCEL_REASON,
    MCP_SERVER_NAME,
    MCP_SERVER_OPERATION_DURATION,
    METHOD_TOOLS_CALL,
    RPC_RESPONSE_STATUS_CODE,
    SPAN_KIND_CLIENT,
    SPAN_KIND_LABEL,
    SPAN_KIND_SERVER,
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
from tests.servers.tools import RPC_ERROR_CODE, SERVER_ERROR_CODE
from tests.stack import fleet_agent
from tests.stack.generated import generate
from tests.stack.stack import (
    COLLECTOR,
    EDGE_CONFIG,
    GATEWAY_CONFIGS,
    RECORDS,
    Prometheus,
    agent_spans,
    caller_fault,
    dashboards,
    failed,
    inlined,
    is_notification,
    jaeger,
    jaeger_api,
    load_yaml,
    program,
    prometheus,
    server_fault,
    span_tags,
    substitute,
    valid,
)

if MCP_MAJOR != 2:
    pytest.skip("the fleet's servers are mcp 2.x lowlevel servers", allow_module_level=True)

AGENTS, CALLS, ROUNDS = 2, 700, 2  # per agent and round: 2,800 calls, 1,400 traces in all
GATEWAYS = ("gateway-1", "gateway-2")
OK_PERCENT, CANCELLED_PERCENT = 10, 50
DECISION_WAIT = 3  # seconds: the fleet's calls are short; production's default is 30 s
# The span metrics' flush interval (collector.yaml; test_collector.py pins it).
FLUSH = float(load_yaml(GATEWAY_CONFIGS[0])["connectors"]["span_metrics"]["metrics_flush_interval"].rstrip("s"))
OK, FAILED, CANCELLED = Outcome.OK.value, Outcome.FAILED.value, Outcome.CANCELLED.value
# (side, server, outcome, error type or "", cancel reason or "", JSON-RPC code the peer answered or "")
Call = tuple[str, str, str, str, str, str]

# What each kind of call in the plan is, on each side.
KINDS = {
    "ok": {side: (OK, "", "", "") for side in ("client", "server")},
    "tool_error": {side: (FAILED, ErrorType.TOOL_ERROR, "", "") for side in ("client", "server")},
    # A caller's fault (-32602): on the server's side it has its code and no error type (semconv).
    "rpc_error": {
        "client": (FAILED, str(RPC_ERROR_CODE), "", str(RPC_ERROR_CODE)),
        "server": (FAILED, "", "", str(RPC_ERROR_CODE)),
    },
    "server_error": {
        side: (FAILED, str(SERVER_ERROR_CODE), "", str(SERVER_ERROR_CODE)) for side in ("client", "server")
    },
    # The SDK's local code 0, on the wire too: not a code either side reports.
    "crash": {side: (FAILED, "0", "", "") for side in ("client", "server")},
    # The agent stops waiting; its client then tells the server (notifications/cancelled).
    "cancelled": {
        "client": (CANCELLED, "", CancelReason.CALLER.value, ""),
        "server": (CANCELLED, "", CancelReason.CLIENT.value, ""),
    },
}


def expected_calls(rounds: int, per_round: int = CALLS) -> Counter[Call]:
    calls: Counter[Call] = Counter()
    for agent in range(AGENTS):
        for kind in fleet_agent.plan(agent, per_round):
            for side, call in KINDS[kind].items():
                calls[(side, fleet_agent.server_name(agent), *call)] += rounds
    return calls


def expected_tasks() -> Counter[str]:
    """Traces per class: a task with a failed call is "failed", else with a cancel "cancelled"."""
    tasks: Counter[str] = Counter()
    for agent in range(AGENTS):
        kinds = fleet_agent.plan(agent, CALLS)
        for start in range(0, CALLS, fleet_agent.TASK):
            tasks[_task_class(KINDS[kind]["client"][0] for kind in kinds[start : start + fleet_agent.TASK])] += ROUNDS
    return tasks


def _task_class(outcomes: Any) -> str:
    found = set(outcomes)
    return FAILED if FAILED in found else CANCELLED if CANCELLED in found else OK


@dataclass
class Programs:
    prometheus: Prometheus
    jaeger_url: str
    edge_otlp: str  # OTLP/HTTP endpoint of the edge
    edge: subprocess.Popen[bytes]
    gateways: dict[str, subprocess.Popen[bytes]]
    gateway_addresses: dict[str, str]  # OTLP/gRPC, as the edge's list names them


@contextmanager
def tier_programs(directory: Path, gateways_file: Path | None = None) -> Iterator[Programs]:
    """Prometheus, Jaeger, two gateways and the edge; with ``gateways_file``, the edge reads its
    gateway list from that file (written here), so that a SIGHUP makes it read a new one."""
    program(COLLECTOR)
    ports = {name: free_port() for name in ("edge_grpc", "edge_http")}
    gateway_ports = {name: (free_port(), free_port()) for name in GATEWAYS}
    with prometheus(directory) as server, jaeger(directory, server.url) as traces, ExitStack() as stack:
        common = {
            **os.environ,
            "MCP_OTEL_PROMETHEUS_REMOTE_WRITE": f"{server.url}/api/v1/write",
            "MCP_OTEL_TRACES_OTLP": traces.otlp,
        }
        gateway = [str(COLLECTOR), *_config_flags(*GATEWAY_CONFIGS)]
        gateways = {}
        for name, (grpc, http) in gateway_ports.items():
            env = {
                **common,
                "MCP_OTEL_GATEWAY_NAME": name,
                "MCP_OTEL_COLLECTOR_GRPC": f"{LOOPBACK}:{grpc}",
                "MCP_OTEL_COLLECTOR_HTTP": f"{LOOPBACK}:{http}",
                "MCP_OTEL_DECISION_WAIT": f"{DECISION_WAIT}s",
                "MCP_OTEL_SAMPLE_OK_PERCENT": str(OK_PERCENT),
                "MCP_OTEL_SAMPLE_CANCELLED_PERCENT": str(CANCELLED_PERCENT),
            }
            gateways[name] = stack.enter_context(
                running(gateway, ports=[grpc, http], env=env, log=directory / f"{name}.log")
            )
        edge_env = {
            **common,
            "MCP_OTEL_COLLECTOR_GRPC": f"{LOOPBACK}:{ports['edge_grpc']}",
            "MCP_OTEL_COLLECTOR_HTTP": f"{LOOPBACK}:{ports['edge_http']}",
            "MCP_OTEL_GATEWAYS": _gateway_list(f"{LOOPBACK}:{grpc}" for grpc, _ in gateway_ports.values()),
        }
        overlays = []
        if gateways_file:
            gateways_file.write_text(edge_env["MCP_OTEL_GATEWAYS"])
            overlays.append(directory / "edge-gateways-from-file.yaml")
            static = {"static": {"hostnames": f"${{file:{gateways_file}}}"}}
            overlays[0].write_text(yaml.safe_dump({"exporters": {"load_balancing": {"resolver": static}}}))
        edge = stack.enter_context(
            running(
                [str(COLLECTOR), *_config_flags(EDGE_CONFIG, *overlays)],
                ports=[ports["edge_grpc"], ports["edge_http"]],
                env=edge_env,
                log=directory / "edge.log",
            )
        )
        yield Programs(
            server,
            traces.url,
            f"http://{LOOPBACK}:{ports['edge_http']}",
            edge,
            gateways,
            {name: f"{LOOPBACK}:{grpc}" for name, (grpc, _) in gateway_ports.items()},
        )


def _config_flags(*configs: Path) -> list[str]:
    return [flag for config in configs for flag in ("--config", str(config))]


def _gateway_list(addresses: Any) -> str:
    return "[" + ", ".join(addresses) + "]"


@dataclass
class Tier:
    programs: Programs
    at: float  # evaluation time: after the second round
    window: str  # the second round only, a whole number of span-metric flushes
    directory: Path

    @property
    def prometheus(self) -> Prometheus:
        return self.programs.prometheus


@pytest.fixture(scope="module")
def tier(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tier]:
    directory = tmp_path_factory.mktemp("gateway-tier")
    with tier_programs(directory) as programs:
        at, window = _run_fleet(directory, programs)
        yield Tier(programs, at, window, directory)


def _start_agents(
    directory: Path, otlp: str, calls: int, rounds: int, gate: Path, pace: float = 0.0
) -> list[tuple[subprocess.Popen[bytes], Path]]:
    """The fleet's agents (each starts its server), under `mcp-otel run`: OTLP to the edge, and
    the spans of agent N and its server (which inherits the exporters) in ``agent-N.jsonl``."""
    agents = []
    for agent in range(AGENTS):
        env = {
            **{key: value for key, value in os.environ.items() if not key.startswith("OTEL_")},
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp,
            "OTEL_SERVICE_NAME": f"fleet-agent-{agent}",
            "OTEL_METRIC_EXPORT_INTERVAL": "200",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
        }
        log = directory / f"agent-{agent}.log"
        command = [
            str(Path(sys.executable).with_name("mcp-otel")),
            "run",
            "--output",
            str(directory / f"agent-{agent}.jsonl"),
            "--",
            sys.executable,
            "-m",
            "tests.stack.fleet_agent",
            *map(str, (agent, calls, rounds, gate, pace)),
        ]
        with open(log, "wb") as output:
            process = subprocess.Popen(command, env=env, cwd=REPO_ROOT, stdout=output, stderr=subprocess.STDOUT)
        agents.append((process, log))
    return agents


def _finish(agents: list[tuple[subprocess.Popen[bytes], Path]]) -> None:
    try:
        for process, log in agents:
            assert process.wait(timeout=300) == 0, log.read_text()[-3000:]
    finally:
        for process, _ in agents:
            if process.poll() is None:
                process.kill()


def _run_fleet(directory: Path, programs: Programs) -> tuple[float, str]:
    server, gate = programs.prometheus, directory / "gate"
    agents = _start_agents(directory, programs.edge_otlp, CALLS, ROUNDS, gate)
    try:
        for _, log in agents:
            wait_until(lambda log=log: "round 1 done" in log.read_text(), 300, "the first round", log)
        settled = _wait_for_totals(server, expected_calls(1))
        # The window will start a whole number of flushes before the end, after the first round's
        # values settled and a flush before the second round: every series' first sample in it
        # holds the first round's total. Two flushes of room make such a start exist.
        time.sleep(max(0.0, settled + 2 * FLUSH + 1 - time.time()))
        released = time.time()
        Path(f"{gate}-1").touch()
    finally:
        _finish(agents)
    time.sleep(max(0.0, _wait_for_totals(server, expected_calls(2)) + FLUSH + 1 - time.time()))
    # The window's start: a moment before each gateway's next flush. Prometheus extrapolates a
    # counter's rate toward the window's start only as far as the counter's value allows: a series
    # that held 1 of the first round's calls and counts 5 more in the window reaches 6 s back at
    # most, so a start 7 s before its first sample in the window read 2.9% low (seen). Started a
    # moment before every gateway's first sample, no series is cut short. Flushes come late, never
    # early: a late one still falls inside. Its end is whole flushes later, where every gateway has
    # as many samples as flushes in the window.
    flushes_at, now = _flush_times(server), time.time()
    starts = [settled + step / 10 for step in range(int((released - FLUSH - settled) * 10) + 1)]

    def flushes(start: float) -> int:
        return math.floor((now - start) / FLUSH)

    def lead(start: float) -> float:
        """How long before the latest of the gateways' first flushes in the window ``start`` is; a
        start a gateway flushes within 0.5 s of, or whose window holds a gateway's flushes but one
        short or over, is never taken."""
        count, leads = flushes(start), []
        for times in flushes_at.values():
            inside = [flush for flush in times if start < flush <= start + count * FLUSH]
            if len(inside) != count or inside[0] - start < 0.5:
                return math.inf
            leads.append(inside[0] - start)
        return max(leads)

    leads = {start: lead(start) for start in starts}
    start = min(leads, key=leads.__getitem__)
    assert leads[start] < FLUSH / 2, f"the gateways flush too far apart for a window that suits both: {flushes_at}"
    length = flushes(start) * FLUSH
    return start + length, f"{int(length * 1000)}ms"


def _flush_times(server: Prometheus) -> dict[str, list[float]]:
    """When each gateway's span metrics were written (all its series share its flush times)."""
    label = prometheus_label(GATEWAY_NAME)
    times = {}
    for gateway in GATEWAYS:
        found = server.get(
            "/api/v1/query", query=f'{SPAN_METRICS_CALLS[0]}{{{label}="{gateway}"}}[10m]', time=time.time()
        )
        times[gateway] = sorted({float(moment) for series in found["result"] for moment, _ in series["values"]})
    return times


SDK_LABELS = tuple(
    prometheus_label(a)
    for a in (MCP_SERVER_NAME, TOOL_OUTCOME, ERROR_TYPE, MCP_REQUEST_CANCEL_REASON, RPC_RESPONSE_STATUS_CODE)
)
CALLS_LABELS = (SPAN_KIND_LABEL, *SDK_LABELS)
TOOLS_CALL = f'{prometheus_label(MCP_METHOD_NAME)}="{METHOD_TOOLS_CALL}"'


def _counted(server: Prometheus, at: float) -> dict[str, Counter[Call]]:
    """Calls per (side, server, outcome, error type, cancel reason, code) as Prometheus has them, per source."""
    span_kind = {SPAN_KIND_CLIENT: "client", SPAN_KIND_SERVER: "server"}
    spans: Counter[Call] = Counter()
    for sample in server.query(f"sum by ({', '.join(CALLS_LABELS)}) ({SPAN_METRICS_CALLS[0]}{{{TOOLS_CALL}}})", at):
        labels = [sample["metric"].get(label, "") for label in CALLS_LABELS]
        spans[(span_kind[labels[0]], *labels[1:])] += int(float(sample["value"][1]))  # type: ignore[arg-type]
    sdk: Counter[Call] = Counter()
    for side, metric in (("client", MCP_CLIENT_OPERATION_DURATION), ("server", MCP_SERVER_OPERATION_DURATION)):
        count = prometheus_histogram(metric, "count")
        for sample in server.query(f"sum by ({', '.join(SDK_LABELS)}) ({count}{{{TOOLS_CALL}}})", at):
            labels = [sample["metric"].get(label, "") for label in SDK_LABELS]
            sdk[(side, *labels)] += int(float(sample["value"][1]))  # type: ignore[arg-type]
    return {"span_metrics": +spans, "sdk": +sdk}


SOURCES = ("span_metrics", "sdk")


def _wait_for_totals(server: Prometheus, expected: Counter[Call], sources: tuple[str, ...] = SOURCES) -> float:
    """Until the ``sources`` count exactly the ``expected`` calls; returns when they did."""

    def counted() -> bool:
        found = _counted(server, time.time())
        return all(found[source] == expected for source in sources)

    wait_until(counted, 180, f"{sum(expected.values())} calls in Prometheus")
    return time.time()


# --- Every call counted ---


def test_every_call_is_counted_exactly_from_both_sources(tier: Tier) -> None:
    counted = _counted(tier.prometheus, tier.at)
    assert counted["span_metrics"] == expected_calls(ROUNDS)
    assert counted["sdk"] == expected_calls(ROUNDS)


def test_each_gateway_counted_its_share_of_the_calls(tier: Tier) -> None:
    label = prometheus_label(GATEWAY_NAME)
    result = tier.prometheus.query(f"sum by ({label}) ({SPAN_METRICS_CALLS[0]}{{{TOOLS_CALL}}})", tier.at)
    per_gateway = {sample["metric"].get(label): float(sample["value"][1]) for sample in result}
    assert set(per_gateway) == set(GATEWAYS)
    total = sum(expected_calls(ROUNDS).values())
    assert sum(per_gateway.values()) == total
    # Each gateway has its share of the trace ids: 200 points each on the exporter's hash ring,
    # placed by hashing its address, so the split is not even but never far (45/55 seen).
    for value in per_gateway.values():
        assert 0.3 <= value / total <= 0.7, per_gateway


# --- The rules ---


def _ratios(calls: Counter[Call], keep: Any, among: Any) -> dict[tuple[str, str], float]:
    """Per (side, server): the calls ``keep`` takes among those ``among`` takes (each judged on
    the call without its side)."""
    ratios = {}
    for side in ("client", "server"):
        for server in {call[1] for call in calls}:
            mine = {call[1:]: n for call, n in calls.items() if call[:2] == (side, server) and among(call[1:])}
            if mine:
                ratios[(side, server)] = sum(n for call, n in mine.items() if keep(call)) / sum(mine.values())
    return ratios


@pytest.mark.parametrize(
    ("record", "keep", "among"),
    [
        ("mcp_server:tool_call_failure_ratio:rate5m", failed, valid),
        ("mcp_server:tool_call_server_fault_ratio:rate5m", server_fault, valid),
        ("mcp_server:tool_call_cancel_ratio:rate5m", lambda call: call[1] == CANCELLED, lambda call: True),
    ],
)
def test_the_rules_give_the_seeded_ratios(tier: Tier, record: str, keep: Any, among: Any) -> None:
    expected = _ratios(expected_calls(1), keep, among)
    result = tier.prometheus.query(inlined(RECORDS[record], tier.window), tier.at)
    for source in SOURCES:
        mine = {
            (s["metric"]["side"], s["metric"]["mcp_server_name"]): float(s["value"][1])
            for s in result
            if s["metric"]["source"] == source
        }
        _assert_ratios(mine, expected, (record, source))


def _assert_ratios(actual: dict[Any, float], expected: dict[Any, float], what: Any) -> None:
    """One process writes each (side, server)'s histograms: exact. Two gateways write the span
    metrics, each on its own 15 s clock: the same interval but for scheduling delays (milliseconds,
    more on a loaded machine). 1% is still far below any miscount: a cancel counted as valid, a
    caller's fault as a server fault, or one gateway's calls missing moves a ratio by 10% or more."""
    assert actual.keys() == expected.keys(), (what, actual)
    rel = 1e-2 if "span_metrics" in what else 1e-9
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, rel=rel, abs=1e-12), (what, key, actual)


PANELS = {
    panel["title"]: panel
    for board in dashboards()
    if board["uid"] == generate.DASHBOARD_UID
    for panel in board["panels"]
}


@pytest.mark.parametrize("side", ["client", "server"])
@pytest.mark.parametrize("source", SOURCES)
def test_the_fault_panels_give_the_seeded_ratios(tier: Tier, source: str, side: str) -> None:
    """The dashboard's server-fault rate leaves the servers' -32602 answers out; its callers'
    faults panel shows them, per server and code (here as a share of the server's valid calls)."""
    server, code = prometheus_label(MCP_SERVER_NAME), prometheus_label(RPC_RESPONSE_STATUS_CODE)

    def query(expr: str) -> list[dict[str, Any]]:
        pattern = generate.SOURCE_PATTERNS[source]
        return tier.prometheus.query(substitute(expr, source=pattern, side=side, window=tier.window), tier.at)

    calls = expected_calls(1)
    (target,) = PANELS["Server-fault rate by server"]["targets"]
    faults = {s["metric"][server]: float(s["value"][1]) for s in query(target["expr"])}
    expected = {name: ratio for (mine, name), ratio in _ratios(calls, server_fault, valid).items() if mine == side}
    _assert_ratios(faults, expected, ("server faults", source, side))
    valid_calls = f"sum by ({server}) (rate({{{generate.DASHBOARD_CALLS}, {generate.VALID}}}[$__rate_interval]))"
    valid_rates = {s["metric"][server]: float(s["value"][1]) for s in query(valid_calls)}
    (target,) = PANELS["Callers' faults by server"]["targets"]
    shares = {
        (s["metric"][server], s["metric"][code]): float(s["value"][1]) / valid_rates[s["metric"][server]]
        for s in query(target["expr"])
    }
    expected_shares = {
        (name, str(RPC_ERROR_CODE)): ratio
        for (mine, name), ratio in _ratios(calls, caller_fault, valid).items()
        if mine == side
    }
    assert all(expected_shares.values()), expected_shares  # every agent's plan has some
    _assert_ratios(shares, expected_shares, ("callers' faults", source, side))


# --- Traces ---


def _jaeger(programs: Programs, path: str, **params: Any) -> Any:
    return jaeger_api(programs.jaeger_url, path, **params)


def _task_traces(programs: Programs) -> list[dict[str, Any]]:
    """Every task's trace Jaeger has (each agent's, by its root span's name)."""
    traces = []
    for agent in range(AGENTS):
        service = f"fleet-agent-{agent}"
        traces += _jaeger(programs, "/api/traces", service=service, operation="task", limit=100_000, lookback="1h")
    return traces


def _assert_complete(trace: dict[str, Any]) -> str:
    """A task's trace has its root, and each call's CLIENT and SERVER span, from the agent's and its
    server's process (a trace split across gateways would lack some); returns its class.
    Notifications' spans (a cancelled call's notifications/cancelled) are not counted."""
    processes = {trace["processes"][span["processID"]]["serviceName"] for span in trace["spans"]}
    spans = [span for span in trace["spans"] if not is_notification(span)]
    requests = Counter((span_tags(span).get(MCP_METHOD_NAME), span_tags(span)["span.kind"]) for span in spans)
    calls = [span for span in trace["spans"] if span_tags(span).get(MCP_METHOD_NAME) == METHOD_TOOLS_CALL]
    # The session's first call asks for the tool list first (mcp 2.x learns output schemas so).
    listed = requests[("tools/list", "client")]
    assert requests == Counter(
        {
            (None, "internal"): 1,
            (METHOD_TOOLS_CALL, "client"): fleet_agent.TASK,
            (METHOD_TOOLS_CALL, "server"): fleet_agent.TASK,
        }
        | ({("tools/list", "client"): 1, ("tools/list", "server"): 1} if listed else {})
    ), (trace["traceID"], requests)
    assert len(processes) == 2, (trace["traceID"], processes)
    return _task_class(span_tags(span)[TOOL_OUTCOME] for span in calls if span_tags(span)["span.kind"] == "client")


def test_every_kept_trace_is_complete_and_every_failed_one_is_kept(tier: Tier) -> None:
    kept = Counter(_assert_complete(trace) for trace in _task_traces(tier.programs))
    tasks = expected_tasks()
    assert kept[FAILED] == tasks[FAILED]
    for outcome, percent in ((OK, OK_PERCENT), (CANCELLED, CANCELLED_PERCENT)):
        share, n = percent / 100, tasks[outcome]
        tolerance = 4 * math.sqrt(share * (1 - share) / n)
        assert abs(kept[outcome] / n - share) <= tolerance, (outcome, kept[outcome], n, tolerance)


# --- A gateway killed mid-run ---

KILL_CALLS, KILL_PACE = 600, 0.15  # per agent, one round of about 55 s


def test_a_gateway_killed_mid_run_loses_at_most_what_it_held(tmp_path: Path) -> None:
    """Gateway 2 is killed (SIGKILL) a third into the run; a second later the edge is given the
    list without it and SIGHUP (what a DNS or Kubernetes resolver does by itself), and routes every
    trace to gateway 1. Lost: at most the calls gateway 2 held, i.e. those of its last flush
    interval before the kill and those routed to it until the edge re-routed, and the traces it
    had not decided yet; every other failed trace is in Jaeger, complete."""
    gateways_file = tmp_path / "gateways.yaml"
    expected = expected_calls(1, KILL_CALLS)
    label = prometheus_label(GATEWAY_NAME)
    with tier_programs(tmp_path, gateways_file) as programs:
        server = programs.prometheus
        agents = _start_agents(tmp_path, programs.edge_otlp, KILL_CALLS, 1, tmp_path / "gate", KILL_PACE)
        try:
            # Mid-run, once gateway 2 has written counts above 0 (each of its series' first sample
            # in Prometheus is 0), and a few seconds into its next flush interval.
            written = f'sum({SPAN_METRICS_CALLS[0]}{{{label}="gateway-2"}}) > 0'
            wait_until(lambda: bool(server.query(written, time.time())), 120, "gateway 2's first counts")
            time.sleep(5)
            killed_at = time.time()
            programs.gateways["gateway-2"].kill()
            programs.gateways["gateway-2"].wait()
            time.sleep(1)  # how long an orchestrator takes to see it gone
            gateways_file.write_text(_gateway_list([programs.gateway_addresses["gateway-1"]]))
            edge_log = tmp_path / "edge.log"
            ready = edge_log.read_text().count("Everything is ready")
            programs.edge.send_signal(signal.SIGHUP)
            wait_until(
                lambda: edge_log.read_text().count("Everything is ready") > ready, 30, "the edge's reload", edge_log
            )
            rerouted_at = time.time()
        finally:
            _finish(agents)
        _wait_for_totals(server, expected, sources=("sdk",))  # the processes' own figures: all there
        counted = _settled_span_metrics(server)
        (last_flush,) = server.query(f'max(timestamp({SPAN_METRICS_CALLS[0]}{{{label}="gateway-2"}}))', time.time())
        spans = [span for agent in range(AGENTS) for span in agent_spans(tmp_path / f"agent-{agent}.jsonl")]
        traces = _task_traces(programs)

    # Counted once at most; lost at most what gateway 2 held: the calls it had seen since its last
    # flush (the last sample it wrote) and those routed to it until the edge re-routed.
    assert all(counted[call] <= n for call, n in expected.items()), counted
    assert set(counted) <= set(expected)
    lost = sum(expected.values()) - sum(counted.values())
    held_from = float(last_flush["value"][1]) - 1
    assert killed_at - FLUSH - 1 <= held_from <= killed_at
    calls = [span for span in spans if span.client and span.attributes.get(MCP_METHOD_NAME) == METHOD_TOOLS_CALL]
    in_window = [span for span in calls if span.end >= held_from and span.start <= rerouted_at + 1]
    bound = 2 * len(in_window)  # each call counts on both sides
    print(
        f"gateway killed: {lost} of {sum(expected.values())} call counts lost; bound {bound} ({len(in_window)} calls)"
    )
    assert lost <= bound, (lost, bound)

    # Every failed trace outside that window (with the time a gateway holds a trace) is in Jaeger.
    kept = {trace["traceID"]: trace for trace in traces}
    tasks = [span for span in spans if span.name == "task"]
    outcomes: dict[str, list[str]] = {}
    for span in calls:
        outcomes.setdefault(span.trace_id, []).append(span.attributes[TOOL_OUTCOME])
    undecided_from = killed_at - DECISION_WAIT - 2
    checked = 0
    for task in tasks:
        if _task_class(outcomes[task.trace_id]) != FAILED:
            continue
        if task.end >= undecided_from and task.start <= rerouted_at + 1:
            continue
        assert task.trace_id in kept, task
        _assert_complete(kept[task.trace_id])
        checked += 1
    assert checked >= sum(1 for task in tasks if _task_class(outcomes[task.trace_id]) == FAILED) // 2


def _settled_span_metrics(server: Prometheus) -> Counter[Call]:
    """The gateways' span-metric totals once two flushes and a decision passed without change."""
    last: Counter[Call] = Counter()
    stable_since = time.time()
    deadline = time.time() + 180
    while time.time() - stable_since < 2 * FLUSH + DECISION_WAIT:
        assert time.time() < deadline, "span metrics never settled"
        now = _counted(server, time.time())["span_metrics"]
        if now != last:
            last, stable_since = now, time.time()
        time.sleep(1)
    return last
