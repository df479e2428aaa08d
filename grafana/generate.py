"""Generates grafana/rules/mcp-tool-calls.rules.yml and grafana/dashboards/mcp-tool-calls.json from
the names in ``mcp_otel.semconv`` (one string end to end: the value in the span is the value the
rules and the dashboard query). Run ``python grafana/generate.py`` after changing either;
tests/stack/test_generated.py fails while the committed files differ from what this produces.

Definitions (backends.md; SRE workbook ch. 5):

* valid calls: ``tool_outcome`` ok or failed. Cancelled calls count in neither the numerator nor
  the denominator of a failure ratio; the cancel rate is its own figure.
* failure ratio: failed / valid. Server-fault ratio: failed calls that are not the caller's fault
  (``rpc.response.status_code`` one of ``semconv.CALLER_FAULT_CODES``: parse error, invalid request,
  unknown method, invalid params, resource not found, and MCP 2026-07-28's header mismatch,
  missing client capability, unsupported protocol version) / valid. A server with no valid calls
  has no ratio series (not NaN); one with calls but no failures has 0. Callers' faults are still
  shown, in a panel of their own.
* Each metric source gives both sides of a call: span metrics (the collector's span metrics
  connector or Tempo's metrics-generator; ``span_kind``) and mcp-otel's in-process histograms
  (``mcp.client/server.operation.duration``). Rules keep ``source`` and ``side`` as labels, so
  running both sources never double counts; the dashboard picks one of each.
* Every request (any method, either direction) has the same outcome in ``mcp_request_outcome``;
  ``mcp:requests:rate5m`` and ``mcp_server_method:request_failure_ratio:rate5m`` give the failure
  ratio per server and method (cancels excluded) beside the tool-call rules, which stay as they are.
* Alerts: SLO 99% of valid calls free of server faults over 30 days; multi-window multi-burn-rate
  page (1h/5m at 14.4x, 6h/30m at 6x) and ticket (1d/2h at 3x, 3d/6h at 1x) alerts, each only for
  a server with at least MIN_VALID_CALLS valid calls in its long window.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mcp_otel.semconv import (
    CALLER_FAULT_STATUS_CODES,
    ERROR_TYPE,
    GEN_AI_TOOL_NAME,
    MCP_CLIENT_OPERATION_DURATION,
    MCP_METHOD_NAME,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_OUTCOME,
    MCP_SERVER_NAME,
    MCP_SERVER_OPERATION_DURATION,
    RPC_RESPONSE_STATUS_CODE,
    SERVICE_NAME_LABEL,
    SPAN_KIND_CLIENT,
    SPAN_KIND_LABEL,
    SPAN_KIND_SERVER,
    SPAN_METRICS_CALLS,
    SPAN_METRICS_DURATION_BUCKETS,
    TOOL_OUTCOME,
    CancelReason,
    Outcome,
    prometheus_histogram,
    prometheus_label,
)

HERE = Path(__file__).resolve().parent
RULES_FILE = HERE / "rules" / "mcp-tool-calls.rules.yml"
DASHBOARD_FILE = HERE / "dashboards" / "mcp-tool-calls.json"
DASHBOARD_UID = "mcp-tool-calls"

SERVER = prometheus_label(MCP_SERVER_NAME)
TOOL = prometheus_label(GEN_AI_TOOL_NAME)
OUTCOME = prometheus_label(TOOL_OUTCOME)
ERROR = prometheus_label(ERROR_TYPE)
CODE = prometheus_label(RPC_RESPONSE_STATUS_CODE)
OK, FAILED, CANCELLED = (outcome.value for outcome in Outcome)
VALID = f'{OUTCOME}=~"{OK}|{FAILED}"'
IS_FAILED = f'{OUTCOME}="{FAILED}"'
IS_OK = f'{OUTCOME}="{OK}"'
IS_CANCELLED = f'{OUTCOME}="{CANCELLED}"'
# A person's no (an input request of the call declined or dismissed) is a cancel shown apart: a
# product signal, never a failure. Every source carries the reason in this label.
REASON = prometheus_label(MCP_REQUEST_CANCEL_REASON)
DECLINED_BY_A_PERSON = f'{IS_CANCELLED}, {REASON}="{CancelReason.INPUT_DECLINED.value}"'
OTHER_CANCELS = f'{IS_CANCELLED}, {REASON}!="{CancelReason.INPUT_DECLINED.value}"'
# Tool calls only: Tempo's span metrics (unlike our collector's) may count other spans, outcome-less.
ANY_OUTCOME = f'{OUTCOME}=~"{OK}|{FAILED}|{CANCELLED}"'
# A caller's fault is known by the code the server answered (a SERVER span or point has no
# error.type then, semconv; a CLIENT one has the code in both); by error.type too, for points of
# mcp-otel 0.1, which carried the code only there. A failure with neither label (an outcome the
# collector took from the status, docs/decisions.md rule 5) is a server fault: `!~` matches an absent label.
CALLER_FAULT_REGEX = "|".join(CALLER_FAULT_STATUS_CODES)
IS_CALLER_FAULT = f'{OUTCOME}="{FAILED}", {CODE}=~"{CALLER_FAULT_REGEX}"'
SERVER_FAULT = f'{OUTCOME}="{FAILED}", {CODE}!~"{CALLER_FAULT_REGEX}", {ERROR}!~"{CALLER_FAULT_REGEX}"'
# Every request: the same outcome values in mcp.request.outcome.
METHOD = prometheus_label(MCP_METHOD_NAME)
REQUEST_OUTCOME = prometheus_label(MCP_REQUEST_OUTCOME)
REQUEST_VALID = f'{REQUEST_OUTCOME}=~"{OK}|{FAILED}"'
REQUEST_FAILED = f'{REQUEST_OUTCOME}="{FAILED}"'
REQUEST_ANY_OUTCOME = f'{REQUEST_OUTCOME}=~"{OK}|{FAILED}|{CANCELLED}"'

SLO_OBJECTIVE = 0.99
MIN_VALID_CALLS = 20
# (severity, long window, short window, burn rate): the SRE workbook's table for a 30-day SLO.
BURN_ALERTS = (
    ("page", "1h", "5m", 14.4),
    ("page", "6h", "30m", 6),
    ("ticket", "1d", "2h", 3),
    ("ticket", "3d", "6h", 1),
)
# The rate windows the rules record, and their length.
SECONDS = {"5m": 300, "30m": 1800, "1h": 3600, "2h": 7200, "6h": 21600, "1d": 86400, "3d": 259200}
WINDOWS = tuple(SECONDS)


@dataclass(frozen=True)
class Source:
    """Where call counts come from: the series' names and how a series says its side."""

    name: str
    title: str
    calls: dict[str, str]  # side -> selector matchers for that side's call counter


def _names(names: tuple[str, ...] | list[str]) -> str:
    return "|".join(names)


def _kind(kind: str) -> str:
    return f'{SPAN_KIND_LABEL}="{kind}"'


# Each side's span kind (span metrics) and in-process histogram.
SIDES = {
    "client": (SPAN_KIND_CLIENT, MCP_CLIENT_OPERATION_DURATION),
    "server": (SPAN_KIND_SERVER, MCP_SERVER_OPERATION_DURATION),
}
SOURCES = (
    Source(
        "span_metrics",
        "span metrics (collector or Tempo)",
        calls={side: f'__name__=~"{_names(SPAN_METRICS_CALLS)}", {_kind(kind)}' for side, (kind, _) in SIDES.items()},
    ),
    Source(
        "sdk",
        "in-process metrics (mcp-otel)",
        calls={side: f'__name__="{prometheus_histogram(metric, "count")}"' for side, (_, metric) in SIDES.items()},
    ),
)


# --- Prometheus rules ---


def calls_rate_record(window: str) -> str:
    return f"mcp:tool_calls:rate{window}"


def _by(*labels: str) -> str:
    return f"sum by ({', '.join(labels)})"


def _per_server(window: str, matchers: str) -> str:
    return f"{_by('source', 'side', SERVER)} ({calls_rate_record(window)}{{{matchers}}})"


def _ratio(numerator: str, denominator: str) -> str:
    # `or denominator * 0`: calls but no failures read 0, not "no data"; `> 0`: no valid calls, no series.
    return f"({numerator} or {denominator} * 0)\n/\n({denominator} > 0)"


def _normalized_rate(
    window: str, labels: tuple[str, ...] = (SERVER, TOOL, OUTCOME, ERROR, CODE, REASON), any_outcome: str = ANY_OUTCOME
) -> str:
    """Every source's and side's call rate as one series family with ``source`` and ``side`` labels."""
    terms = []
    for source in SOURCES:
        for side, matchers in source.calls.items():
            summed = f"{_by(*labels)} (rate({{{matchers}, {any_outcome}}}[{window}]))"
            terms.append(
                f'label_replace(label_replace({summed}, "source", "{source.name}", "", ""), "side", "{side}", "", "")'
            )
    return "\n  or\n".join(terms)


def rules() -> dict[str, Any]:
    rate_rules: list[dict[str, str]] = []
    for window in WINDOWS:
        valid = f"mcp_server:tool_calls_valid:rate{window}"
        rate_rules += [
            {"record": calls_rate_record(window), "expr": _normalized_rate(window)},
            {"record": valid, "expr": _per_server(window, VALID)},
            {
                "record": f"mcp_server:tool_call_server_fault_ratio:rate{window}",
                "expr": _ratio(_per_server(window, SERVER_FAULT), valid),
            },
        ]
    rate_rules += [
        {
            "record": "mcp_server:tool_call_failure_ratio:rate5m",
            "expr": _ratio(_per_server("5m", IS_FAILED), "mcp_server:tool_calls_valid:rate5m"),
        },
        {
            "record": "mcp_server:tool_call_cancel_ratio:rate5m",
            "expr": _ratio(
                _per_server("5m", IS_CANCELLED),
                f"{_by('source', 'side', SERVER)} ({calls_rate_record('5m')})",
            ),
        },
        {
            "record": "mcp_server:tool_call_declined_ratio:rate5m",
            "expr": _ratio(
                _per_server("5m", DECLINED_BY_A_PERSON),
                f"{_by('source', 'side', SERVER)} ({calls_rate_record('5m')})",
            ),
        },
    ]
    requests, valid_requests = "mcp:requests:rate5m", "mcp_server_method:requests_valid:rate5m"
    per_method = _by("source", "side", SERVER, METHOD)
    request_rules = [
        {
            "record": requests,
            "expr": _normalized_rate("5m", (SERVER, METHOD, REQUEST_OUTCOME, ERROR, CODE), REQUEST_ANY_OUTCOME),
        },
        {"record": valid_requests, "expr": f"{per_method} ({requests}{{{REQUEST_VALID}}})"},
        {
            "record": "mcp_server_method:request_failure_ratio:rate5m",
            "expr": _ratio(f"{per_method} ({requests}{{{REQUEST_FAILED}}})", valid_requests),
        },
    ]
    return {
        "groups": [
            {"name": "mcp-tool-calls-rates", "rules": rate_rules},
            {"name": "mcp-requests-rates", "rules": request_rules},
            {"name": "mcp-tool-calls-slo-alerts", "rules": [_burn_alert("page"), _burn_alert("ticket")]},
        ]
    }


def _burn_alert(severity: str) -> dict[str, Any]:
    budget = round(1 - SLO_OBJECTIVE, 6)
    on = f"on (source, side, {SERVER})"
    pairs = []
    for _, long, short, burn in (alert for alert in BURN_ALERTS if alert[0] == severity):
        threshold = round(burn * budget, 6)
        pairs.append(
            f"(mcp_server:tool_call_server_fault_ratio:rate{long} > {threshold}\n"
            f"  and {on} mcp_server:tool_call_server_fault_ratio:rate{short} > {threshold})"
        )
    # Low traffic: a handful of calls in the first (shortest) long window cannot page or ticket.
    guarded = next(alert[1] for alert in BURN_ALERTS if alert[0] == severity)
    guard = f"mcp_server:tool_calls_valid:rate{guarded} * {SECONDS[guarded]} >= {MIN_VALID_CALLS}"
    return {
        "alert": "MCPServerToolFaultBudgetBurn" if severity == "page" else "MCPServerToolFaultBudgetBurnSlow",
        "expr": "(\n  " + "\n  or ".join(pairs) + f"\n)\nand {on} ({guard})",
        "for": "2m" if severity == "page" else "15m",
        "labels": {"severity": severity},
        "annotations": {
            "summary": f"MCP server {{{{ $labels.{SERVER} }}}} ({{{{ $labels.side }}}} side) "
            "is burning its tool-call error budget",
            "description": "Server faults (cancelled calls and the caller's own errors excluded) are "
            "{{ $value | humanizePercentage }} of valid calls over the long window; "
            f"the SLO allows {budget:.0%}.",
        },
    }


# --- Grafana dashboard ---

PROMETHEUS = {"type": "prometheus", "uid": "${datasource}"}
JAEGER = {"type": "jaeger", "uid": "${jaeger}"}
TEMPO = {"type": "tempo", "uid": "${tempo}"}
# The dashboard's chosen source and side: `source` picks the names' family, `side` the series.
_SIDE = "${side}"


def _dashboard_selector(span_metrics: tuple[str, ...], sdk_suffix: str, narrow: str = f'{TOOL}=~"${{tool}}"') -> str:
    """The chosen source's (first matcher) and side's series of one kind, filtered by server and
    ``narrow`` (the tool). Span metrics say their side in span_kind; the in-process histograms in
    their name."""
    sdk = prometheus_histogram(MCP_CLIENT_OPERATION_DURATION, sdk_suffix).replace("client", _SIDE)
    return (
        f'__name__=~"${{source}}", __name__=~"{_names(span_metrics)}|{sdk}", '
        f'{SPAN_KIND_LABEL}=~"|(?i:span_kind_{_SIDE})", {SERVER}=~"${{server}}", {narrow}'
    )


DASHBOARD_CALLS = _dashboard_selector(SPAN_METRICS_CALLS, "count")
DASHBOARD_DURATIONS = _dashboard_selector(SPAN_METRICS_DURATION_BUCKETS, "bucket")
# Every request of the chosen methods (the tool variable narrows tool calls only).
DASHBOARD_REQUESTS = _dashboard_selector(SPAN_METRICS_CALLS, "count", f'{METHOD}=~"${{method}}"')
SOURCE_PATTERNS = {"span_metrics": "traces_.+", "sdk": "mcp_.+"}


def _calls(extra: str = "", window: str = "$__rate_interval", selector: str = DASHBOARD_CALLS) -> str:
    matchers = selector + (f", {extra}" if extra else "")
    return f"rate({{{matchers}}}[{window}])"


def _dashboard_ratio(
    numerator: str, denominator: str, by: str, window: str = "$__rate_interval", selector: str = DASHBOARD_CALLS
) -> str:
    part, whole = _calls(numerator, window, selector), _calls(denominator, window, selector)
    return f"(\n  sum by ({by}) ({part})\n  or\n  0 * sum by ({by}) ({whole})\n)\n/\n(sum by ({by}) ({whole}) > 0)"


def _worst_tools() -> str:
    by = f"{SERVER}, {TOOL}"
    valid_calls = _calls(VALID, "$__range").replace("rate(", "increase(")
    ratio = _dashboard_ratio(IS_FAILED, VALID, by, "$__range")
    return f"topk(10,\n  {ratio}\n  and on ({by}) sum by ({by}) ({valid_calls}) >= $min_calls\n)"


def _timeseries(
    panel_id: int, title: str, description: str, unit: str, targets: list[dict[str, Any]], grid: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": PROMETHEUS,
        "gridPos": grid,
        "fieldConfig": {"defaults": {"unit": unit, "links": _server_links()}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right", "calcs": ["lastNotNull", "max"]}},
        "targets": targets,
    }


def _table(
    panel_id: int, title: str, description: str, target: dict[str, Any], grid: dict[str, int], unit: str = "none"
) -> dict[str, Any]:
    metrics = target["datasource"] is PROMETHEUS
    return {
        "id": panel_id,
        "type": "table",
        "title": title,
        "description": description,
        "datasource": target["datasource"],
        "gridPos": grid,
        "fieldConfig": {"defaults": {"unit": unit, "links": _server_links() if metrics else []}, "overrides": []},
        "options": {"sortBy": [{"displayName": "Value", "desc": True}]} if metrics else {},
        "targets": [target],
    }


def _target(ref: str, expr: str, legend: str, **extra: Any) -> dict[str, Any]:
    return {
        "refId": ref,
        "datasource": PROMETHEUS,
        "expr": expr,
        "legendFormat": legend,
        "exemplar": True,
        "range": True,
        **extra,
    }


def _server_links() -> list[dict[str, Any]]:
    return [
        {
            "title": "Only this server, with its failed calls' traces",
            "url": f"/d/{DASHBOARD_UID}/mcp-tool-calls?${{__url_time_range}}&${{source:queryparam}}"
            f"&${{side:queryparam}}&var-server=${{__field.labels.{SERVER}}}",
        }
    ]


NOTE = (
    " Rates come from counters; the first call of a new series (server, tool, outcome, error type, code) is not "
    "visible to rate() (Prometheus sees the series start at its first value)."
)


def dashboard() -> dict[str, Any]:
    server_legend = f"{{{{{SERVER}}}}}"
    panels = [
        _timeseries(
            1,
            "Failure rate by server (cancels excluded)",
            "failed / (ok + failed) tool calls per server. Cancelled calls are the caller's choice and "
            "count in neither part." + NOTE,
            "percentunit",
            [_target("A", _dashboard_ratio(IS_FAILED, VALID, SERVER), server_legend)],
            {"h": 8, "w": 12, "x": 0, "y": 0},
        ),
        _timeseries(
            2,
            "Server-fault rate by server",
            "Failed calls that are not the caller's fault (rpc.response.status_code "
            + ", ".join(CALLER_FAULT_STATUS_CODES)
            + ' excluded; shown in "Callers\' faults by server") / valid calls: what the SLO alerts watch.',
            "percentunit",
            [_target("A", _dashboard_ratio(SERVER_FAULT, VALID, SERVER), server_legend)],
            {"h": 8, "w": 12, "x": 12, "y": 0},
        ),
        _timeseries(
            3,
            "Cancel rate by server",
            "cancelled / all tool calls per server: shown apart, never counted as failures. A person "
            "declining a tool's request for input (mcp.request.cancel.reason = input_declined) is shown "
            "apart from the other cancels (the caller's, a disconnect).",
            "percentunit",
            [
                _target("A", _dashboard_ratio(OTHER_CANCELS, ANY_OUTCOME, SERVER), f"{server_legend} cancelled"),
                _target(
                    "B",
                    _dashboard_ratio(DECLINED_BY_A_PERSON, ANY_OUTCOME, SERVER),
                    f"{server_legend} declined by a person",
                ),
            ],
            {"h": 8, "w": 12, "x": 0, "y": 8},
        ),
        _timeseries(
            4,
            "Calls by outcome",
            "Tool calls per second by tool.outcome (ok, failed, cancelled).",
            "reqps",
            [_target("A", f"sum by ({OUTCOME}) ({_calls(ANY_OUTCOME)})", f"{{{{{OUTCOME}}}}}")],
            {"h": 8, "w": 12, "x": 12, "y": 8},
        ),
        _timeseries(
            5,
            "Failures by error.type and JSON-RPC code",
            "Failed calls per second by server, error.type (a JSON-RPC code, tool_error for an isError result, "
            "timeout, connection_closed, shutdown, or an exception's class name) and rpc.response.status_code "
            "(the JSON-RPC code the peer answered). On the server side a caller's fault has the code and no "
            "error.type.",
            "reqps",
            [
                _target(
                    "A",
                    f"sum by ({SERVER}, {ERROR}, {CODE}) ({_calls(IS_FAILED)})",
                    f"{server_legend} {{{{{ERROR}}}}} {{{{{CODE}}}}}",
                )
            ],
            {"h": 8, "w": 12, "x": 0, "y": 16},
        ),
        _timeseries(
            12,
            "Callers' faults by server",
            "Failed calls per second whose server answered that the request was at fault "
            "(rpc.response.status_code " + ", ".join(CALLER_FAULT_STATUS_CODES) + "), by server and code: "
            "shown here, never counted as server faults.",
            "reqps",
            [_target("A", f"sum by ({SERVER}, {CODE}) ({_calls(IS_CALLER_FAULT)})", f"{server_legend} {{{{{CODE}}}}}")],
            {"h": 8, "w": 12, "x": 12, "y": 16},
        ),
        _timeseries(
            6,
            "Latency of ok calls (p50, p95)",
            "Duration of calls that ended ok, per server, from the duration histograms (seconds for every source).",
            "s",
            [
                _target(
                    ref,
                    f"histogram_quantile({quantile}, sum by (le, {SERVER}) "
                    f"(rate({{{DASHBOARD_DURATIONS}, {IS_OK}}}[$__rate_interval])))",
                    f"p{int(quantile * 100)} {server_legend}",
                )
                for ref, quantile in (("A", 0.5), ("B", 0.95))
            ],
            {"h": 8, "w": 12, "x": 0, "y": 24},
        ),
        _table(
            7,
            "Worst tools",
            "Tools by failure rate (cancels excluded) over the dashboard's time range, "
            "with at least $min_calls valid calls." + NOTE,
            {"refId": "A", "datasource": PROMETHEUS, "expr": _worst_tools(), "instant": True, "format": "table"},
            {"h": 8, "w": 12, "x": 12, "y": 24},
            unit="percentunit",
        ),
        _table(
            8,
            "Failed calls in Jaeger",
            f"Traces with a failed tool call (tag {TOOL_OUTCOME}={FAILED}) of the service $service.",
            {
                "refId": "A",
                "datasource": JAEGER,
                "queryType": "search",
                "service": "$service",
                "tags": f"{TOOL_OUTCOME}={FAILED}",
                "limit": 20,
            },
            {"h": 8, "w": 12, "x": 0, "y": 32},
        ),
        _table(
            9,
            "Failed calls in Tempo",
            "Traces with a failed tool call of the chosen servers (TraceQL).",
            {
                "refId": "A",
                "datasource": TEMPO,
                "queryType": "traceql",
                "query": f'{{ span.{TOOL_OUTCOME} = "{FAILED}" && span.{MCP_SERVER_NAME} =~ "${{server:regex}}" }}',
                "limit": 20,
                "tableType": "traces",
            },
            {"h": 8, "w": 12, "x": 12, "y": 32},
        ),
        _timeseries(
            10,
            "Requests by method and outcome",
            "Every MCP request per second (tool calls, resource reads, the server's elicitation and sampling "
            "requests, ...) by mcp.method.name and mcp.request.outcome (ok, failed, cancelled).",
            "reqps",
            [
                _target(
                    "A",
                    f"sum by ({METHOD}, {REQUEST_OUTCOME}) "
                    f"({_calls(REQUEST_ANY_OUTCOME, selector=DASHBOARD_REQUESTS)})",
                    f"{{{{{METHOD}}}}} {{{{{REQUEST_OUTCOME}}}}}",
                )
            ],
            {"h": 8, "w": 12, "x": 0, "y": 40},
        ),
        _timeseries(
            11,
            "Failure rate by server and method (cancels excluded)",
            "failed / (ok + failed) requests per server and method; cancelled requests count in neither part." + NOTE,
            "percentunit",
            [
                _target(
                    "A",
                    _dashboard_ratio(REQUEST_FAILED, REQUEST_VALID, f"{SERVER}, {METHOD}", selector=DASHBOARD_REQUESTS),
                    f"{server_legend} {{{{{METHOD}}}}}",
                )
            ],
            {"h": 8, "w": 12, "x": 12, "y": 40},
        ),
    ]
    return {
        "id": None,
        "uid": DASHBOARD_UID,
        "title": "MCP tool calls",
        "description": "Per-server failure rates of MCP tool calls, cancels excluded (mcp-otel). "
        "Generated by grafana/generate.py.",
        "tags": ["mcp", "mcp-otel"],
        "schemaVersion": 41,
        "editable": False,
        "graphTooltip": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "timezone": "",
        "links": [],
        "annotations": {"list": []},
        "templating": {"list": _variables()},
        "panels": panels,
    }


def _datasource_variable(name: str, label: str, plugin: str) -> dict[str, Any]:
    return {"name": name, "label": label, "type": "datasource", "query": plugin, "refresh": 1, "hide": 0, "current": {}}


def _custom_variable(name: str, label: str, options: list[tuple[str, str]]) -> dict[str, Any]:
    text, value = options[0]
    return {
        "name": name,
        "label": label,
        "type": "custom",
        "query": ", ".join(f"{text} : {value}" for text, value in options),
        "current": {"text": text, "value": value},
        "options": [{"text": t, "value": v, "selected": i == 0} for i, (t, v) in enumerate(options)],
        "hide": 0,
    }


def _query_variable(name: str, label: str, query: str, multi: bool = True) -> dict[str, Any]:
    variable: dict[str, Any] = {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": PROMETHEUS,
        "query": {"qryType": 1, "query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "refresh": 2,
        "sort": 1,
        "hide": 0,
        "current": {},
    }
    if multi:
        variable.update({"multi": True, "includeAll": True, "allValue": ".*"})
    return variable


def _variables() -> list[dict[str, Any]]:
    sdk_calls = [
        prometheus_histogram(metric, "count")
        for metric in (MCP_CLIENT_OPERATION_DURATION, MCP_SERVER_OPERATION_DURATION)
    ]
    calls_any = f'{{__name__=~"{_names([*SPAN_METRICS_CALLS, *sdk_calls])}"}}'
    span_calls = f'{{__name__=~"{_names(SPAN_METRICS_CALLS)}"}}'
    return [
        _datasource_variable("datasource", "Prometheus", "prometheus"),
        _datasource_variable("jaeger", "Jaeger", "jaeger"),
        _datasource_variable("tempo", "Tempo", "tempo"),
        _custom_variable("source", "Metric source", [(s.title, SOURCE_PATTERNS[s.name]) for s in SOURCES]),
        _custom_variable("side", "Side", [("client (the agent's view)", "client"), ("server", "server")]),
        _query_variable("server", "MCP server", f"label_values({calls_any}, {SERVER})"),
        _query_variable("tool", "Tool", f'label_values({calls_any[:-1]}, {SERVER}=~"$server"}}, {TOOL})'),
        _query_variable("method", "MCP method", f'label_values({calls_any[:-1]}, {SERVER}=~"$server"}}, {METHOD})'),
        _query_variable(
            "service", "Jaeger service", "label_values(" + span_calls + f", {SERVICE_NAME_LABEL})", multi=False
        ),
        {
            "name": "min_calls",
            "label": "Min valid calls",
            "type": "textbox",
            "query": str(MIN_VALID_CALLS),
            "current": {"text": str(MIN_VALID_CALLS), "value": str(MIN_VALID_CALLS)},
            "hide": 0,
        },
    ]


# --- Output ---


class _Dumper(yaml.SafeDumper):
    pass


def _string(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


_Dumper.add_representer(str, _string)

HEADER = "# Generated by grafana/generate.py from mcp_otel.semconv: edit the generator, not this file.\n"


def rendered() -> dict[Path, str]:
    return {
        RULES_FILE: HEADER + yaml.dump(rules(), Dumper=_Dumper, sort_keys=False, width=1000),
        DASHBOARD_FILE: json.dumps(dashboard(), indent=2) + "\n",
    }


def main() -> int:
    for path, text in rendered().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(HERE.parent)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
