"""Per-server (or per-tool, per-method) summaries of MCP requests, read from OTLP JSON span files.

Reads the JSON lines the OpenTelemetry OTLP JSON file exporter writes (``mcp-otel run``) and
the collector's file exporter writes: one ``{"resourceSpans": [...]}`` object per line; lines
with other signals are skipped. A call is a span of the chosen side (CLIENT: the agent's view,
by default) whose ``mcp.method.name`` is the chosen method (``tools/call`` by default; any, for
:data:`EVERY_METHOD`). Its outcome is ``mcp.request.outcome`` (``tool.outcome``); spans without
it (other instrumentations, older versions) are counted by their status, ERROR as failed and
anything else as ok (ADR-191 rule 5), and flagged in the output.

Failure rate = failed / (ok + failed): the caller's own cancels are not failures, and are not
successes either. "declined" counts the cancels that were a person's no (``input_declined``).
Spans of requests answered with no result yet (an input round, a task creation) are not calls.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_otel.outcome import outcome_of_span
from mcp_otel.semconv import (
    ERROR_TYPE,
    GEN_AI_PROMPT_NAME,
    GEN_AI_TOOL_NAME,
    MCP_METHOD_NAME,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_OUTCOME,
    MCP_SERVER_NAME,
    METHOD_TOOLS_CALL,
    SERVER_ADDRESS,
    TOOL_CANCEL_REASON,
    TOOL_OUTCOME,
    CancelReason,
    ToolOutcome,
)

# OTLP JSON enum values: numbers from the OpenTelemetry file exporters, names from some others.
_KINDS = {"client": (3, "SPAN_KIND_CLIENT"), "server": (2, "SPAN_KIND_SERVER")}
_STATUS_ERROR = (2, "STATUS_CODE_ERROR")
UNKNOWN = "(unknown)"
# The method filter that keeps every request.
EVERY_METHOD = "*"
DECLINED = "declined"
INPUT_DECLINED = CancelReason.INPUT_DECLINED.value


class ReportError(Exception):
    """A file or line that could not be read: the message names it."""


@dataclass(frozen=True)
class Call:
    server: str
    tool: str  # the tool (or prompt) name, UNKNOWN for methods without one
    method: str
    outcome: ToolOutcome
    error_type: str | None
    seconds: float
    derived: bool  # outcome derived from the span status (no outcome attribute)
    declined: bool = False  # cancelled because a person said no (input_declined)


@dataclass
class Summary:
    """The calls of one server (or tool)."""

    name: str
    outcomes: Counter[ToolOutcome] = field(default_factory=Counter)
    error_types: Counter[str] = field(default_factory=Counter)
    ok_seconds: list[float] = field(default_factory=list)
    derived: int = 0
    declined: int = 0  # of the cancelled calls

    def add(self, call: Call) -> None:
        self.outcomes[call.outcome] += 1
        self.declined += call.declined
        if call.error_type:
            self.error_types[call.error_type] += 1
        if call.outcome is ToolOutcome.OK:
            self.ok_seconds.append(call.seconds)
        self.derived += call.derived

    @property
    def calls(self) -> int:
        return sum(self.outcomes.values())

    @property
    def failure_rate(self) -> float | None:
        """failed / (ok + failed); ``None`` when there were no such calls."""
        ok, failed = self.outcomes[ToolOutcome.OK], self.outcomes[ToolOutcome.FAILED]
        return failed / (ok + failed) if ok + failed else None

    def ok_latency(self, quantile: float) -> float | None:
        """Nearest-rank quantile of the ok calls' durations, in seconds."""
        if not self.ok_seconds:
            return None
        ordered = sorted(self.ok_seconds)
        return ordered[max(math.ceil(quantile * len(ordered)) - 1, 0)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "calls": self.calls,
            # One string end to end: the outcome values name the columns.
            **{outcome.value: self.outcomes[outcome] for outcome in ToolOutcome},
            DECLINED: self.declined,
            "failure_rate": self.failure_rate,
            "error_types": dict(self.error_types.most_common()),
            "ok_latency_p50_s": self.ok_latency(0.5),
            "ok_latency_p95_s": self.ok_latency(0.95),
            "derived_from_status": self.derived,
        }


def read_calls(
    paths: Iterable[Path], side: str = "client", method: str = METHOD_TOOLS_CALL
) -> tuple[list[Call], list[str]]:
    """Every request of ``method`` in the files, and one message per file or line that could not
    be read (the rest of the file is still read)."""
    calls: list[Call] = []
    problems: list[str] = []
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read: {exc}")
            continue
        if not any(line.strip() for line in lines):
            problems.append(f"{path}: empty, no telemetry in it")
            continue
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                calls.extend(call for call in _calls_in_line(line, side) if method in (EVERY_METHOD, call.method))
            except ReportError as exc:
                problems.append(f"{path}:{number}: {exc}")
    return calls, problems


def summarize(calls: Iterable[Call], by: str = "server") -> list[Summary]:
    summaries: dict[str, Summary] = {}
    for call in calls:
        name = {"server": call.server, "tool": call.tool, "method": call.method}[by]
        summaries.setdefault(name, Summary(name)).add(call)
    return sorted(summaries.values(), key=lambda summary: summary.name)


def format_table(summaries: list[Summary], by: str = "server") -> str:
    ok = ToolOutcome.OK.value
    header = (
        by,
        "calls",
        *(o.value for o in ToolOutcome),
        DECLINED,
        "failure rate",
        f"top {ERROR_TYPE}",
        f"{ok} p50",
        f"{ok} p95",
    )
    rows = [header]
    for summary in summaries:
        rate = summary.failure_rate
        errors = ", ".join(f"{name} ({count})" for name, count in summary.error_types.most_common(3))
        rows.append(
            (
                summary.name + (" *" if summary.derived else ""),
                str(summary.calls),
                *(str(summary.outcomes[outcome]) for outcome in ToolOutcome),
                str(summary.declined),
                "-" if rate is None else f"{rate:.1%}",
                errors or "-",
                _duration(summary.ok_latency(0.5)),
                _duration(summary.ok_latency(0.95)),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    numeric = range(1, 7)
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if i in numeric or i > 7 else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * width for width in widths))
    if not summaries:
        lines.append("(no MCP requests found)")
    if any(summary.derived for summary in summaries):
        lines.append("* some calls had no tool.outcome: counted by span status (ERROR = failed, else ok)")
    lines.append("failure rate = failed / (ok + failed): cancelled calls are left out (declined: a person said no)")
    return "\n".join(lines)


def format_json(summaries: list[Summary]) -> str:
    return json.dumps([summary.as_dict() for summary in summaries], indent=2)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _calls_in_line(line: str, side: str) -> Iterator[Call]:
    try:
        document = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ReportError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(document, dict):
        raise ReportError("not an OTLP JSON object")
    if "resourceSpans" not in document:
        return  # metrics or logs
    try:
        for resource in document["resourceSpans"]:
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    call = _call(span, side)
                    if call is not None:
                        yield call
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise ReportError(f"not OTLP JSON spans ({type(exc).__name__}: {exc})") from None


def _call(span: dict[str, Any], side: str) -> Call | None:
    attributes = {item["key"]: _value(item.get("value", {})) for item in span.get("attributes", [])}
    if span.get("kind") not in _KINDS[side] or MCP_METHOD_NAME not in attributes:
        return None
    status = span.get("status") or {}
    outcome = outcome_of_span(attributes, status.get("code") in _STATUS_ERROR)
    if outcome is None:  # an input round or a task creation: not a finished call
        return None
    seconds = (int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"])) / 1e9
    server = attributes.get(MCP_SERVER_NAME) or attributes.get(SERVER_ADDRESS) or UNKNOWN
    error_type = attributes.get(ERROR_TYPE) if outcome is ToolOutcome.FAILED else None
    return Call(
        server=str(server),
        tool=str(attributes.get(GEN_AI_TOOL_NAME, attributes.get(GEN_AI_PROMPT_NAME, UNKNOWN))),
        method=str(attributes[MCP_METHOD_NAME]),
        outcome=outcome,
        error_type=None if error_type is None else str(error_type),
        seconds=seconds,
        derived=MCP_REQUEST_OUTCOME not in attributes and TOOL_OUTCOME not in attributes,
        declined=attributes.get(MCP_REQUEST_CANCEL_REASON, attributes.get(TOOL_CANCEL_REASON)) == INPUT_DECLINED,
    )


def _value(value: dict[str, Any]) -> Any:
    """An OTLP JSON AnyValue (int64 values come as strings)."""
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    return None
