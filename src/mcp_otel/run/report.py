"""Per-server (or per-tool, per-method) summaries of MCP requests, from the calls
:mod:`mcp_otel.run.calls` reads back from OTLP JSON span files: ``mcp-otel report``'s table and
JSON.

Failure rate = failed / (ok + failed): the caller's own cancels are not failures, and are not
successes either. "declined" counts the cancels that were a person's no (``input_declined``).
"caller faults" counts the failures whose ``rpc.response.status_code`` blames the request
(-32602 ...: :data:`~mcp_otel.semconv.CALLER_FAULT_CODES`); the server-fault rate leaves them out,
as the dashboards and alerts do. Calls whose outcome was derived from their span's status are
flagged in the output.

Every call is added to its summary as it is read, so memory does not grow with the number of
calls: a summary holds counts and a latency sketch (:class:`LatencySketch`, quantiles within 1%),
and at most :data:`MAX_GROUPS` summaries are kept.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from mcp_otel.run.calls import Call, iter_calls
from mcp_otel.semconv import ERROR_TYPE, METHOD_TOOLS_CALL, Outcome

DECLINED = "declined"
CALLER_FAULTS = "caller faults"
# Summaries kept at most (names are a peer's: a file may hold any number); calls of further
# names are counted together under OTHER_NAMES, and the output says so.
MAX_GROUPS = 10_000
OTHER_NAMES = "(other names)"

_RELATIVE_ERROR = 0.01
_GAMMA = (1 + _RELATIVE_ERROR) / (1 - _RELATIVE_ERROR)
_LOG_GAMMA = math.log(_GAMMA)
_SMALLEST = 1e-9  # durations at or below a nanosecond are counted as zero
_ceil, _log = math.ceil, math.log


class LatencySketch:
    """Quantiles of durations within :data:`RELATIVE_ERROR`, in memory bounded by the range of the
    values (not their number): counts in logarithmically spaced buckets, each answered by the
    value that is within the error of every duration in it (the DDSketch construction). From a
    microsecond to a day that is at most about 1,300 buckets; typical files use a few dozen."""

    RELATIVE_ERROR = _RELATIVE_ERROR

    __slots__ = ("buckets", "count", "zeros")

    def __init__(self) -> None:
        self.buckets: Counter[int] = Counter()
        self.zeros = 0
        self.count = 0

    def add(self, seconds: float) -> None:
        self.count += 1
        if seconds <= _SMALLEST:
            self.zeros += 1
        else:
            self.buckets[_ceil(_log(seconds) / _LOG_GAMMA)] += 1

    def quantile(self, quantile: float) -> float | None:
        """The nearest-rank ``quantile``, within the relative error; ``None`` when empty."""
        if not self.count:
            return None
        rank = max(math.ceil(quantile * self.count), 1)
        if rank <= self.zeros:
            return 0.0
        seen = self.zeros
        for index in sorted(self.buckets):
            seen += self.buckets[index]
            if seen >= rank:
                return 2 * _GAMMA**index / (_GAMMA + 1)
        raise AssertionError("unreachable: the counts add up to count")


@dataclass
class Summary:
    """The calls of one server (or tool)."""

    name: str
    ok: int = 0
    failed: int = 0
    cancelled: int = 0
    error_types: Counter[str] = field(default_factory=Counter)
    ok_latency_sketch: LatencySketch = field(default_factory=LatencySketch)
    derived: int = 0
    declined: int = 0  # of the cancelled calls
    caller_faults: int = 0  # of the failed calls

    def add(self, call: Call) -> None:
        # Once per call read: plain counters (an Enum's hash is Python code).
        outcome = call.outcome
        if outcome is _OK:
            self.ok += 1
            self.ok_latency_sketch.add(call.seconds)
        elif outcome is _FAILED:
            self.failed += 1
            self.caller_faults += call.caller_fault
            if call.error_type:
                self.error_types[call.error_type] += 1
        else:
            self.cancelled += 1
            self.declined += call.declined
        self.derived += call.derived

    @property
    def outcomes(self) -> Counter[Outcome]:
        return Counter({_OK: self.ok, _FAILED: self.failed, Outcome.CANCELLED: self.cancelled})

    @property
    def calls(self) -> int:
        return self.ok + self.failed + self.cancelled

    @property
    def failure_rate(self) -> float | None:
        """failed / (ok + failed); ``None`` when there were no such calls."""
        return self.failed / (self.ok + self.failed) if self.ok + self.failed else None

    @property
    def server_fault_rate(self) -> float | None:
        """(failed - caller faults) / (ok + failed): what the alerts watch."""
        return (self.failed - self.caller_faults) / (self.ok + self.failed) if self.ok + self.failed else None

    def ok_latency(self, quantile: float) -> float | None:
        """Nearest-rank quantile of the ok calls' durations, in seconds, within 1%."""
        return self.ok_latency_sketch.quantile(quantile)

    def as_dict(self) -> dict[str, Any]:
        outcomes = self.outcomes
        return {
            "name": self.name,
            "calls": self.calls,
            # One string end to end: the outcome values name the columns.
            **{outcome.value: outcomes[outcome] for outcome in Outcome},
            DECLINED: self.declined,
            "failure_rate": self.failure_rate,
            CALLER_FAULTS.replace(" ", "_"): self.caller_faults,
            "server_fault_rate": self.server_fault_rate,
            "error_types": dict(self.error_types.most_common()),
            "ok_latency_p50_s": self.ok_latency(0.5),
            "ok_latency_p95_s": self.ok_latency(0.95),
            "derived_from_status": self.derived,
        }


_OK, _FAILED = Outcome.OK, Outcome.FAILED
# Call fields a summary groups by.
_GROUPED_BY = {"server": itemgetter(0), "tool": itemgetter(1), "method": itemgetter(2)}


class Summaries:
    """Calls added one at a time, grouped by ``by`` (server, tool or method)."""

    def __init__(self, by: str = "server", max_groups: int = MAX_GROUPS) -> None:
        self._name: Callable[[Call], str] = _GROUPED_BY[by]
        self._max_groups = max_groups
        self._groups: dict[str, Summary] = {}

    def add(self, call: Call) -> None:
        name = self._name(call)
        summary = self._groups.get(name)
        if summary is None:
            if len(self._groups) >= self._max_groups:
                name = OTHER_NAMES
            summary = self._groups.setdefault(name, Summary(name))
        summary.add(call)

    def sorted(self) -> list[Summary]:
        return sorted(self._groups.values(), key=lambda summary: summary.name)


def summarize_files(
    paths: Iterable[Path],
    side: str = "client",
    method: str = METHOD_TOOLS_CALL,
    by: str = "server",
    since: int | None = None,
    conversation: str | None = None,
) -> tuple[list[Summary], list[str]]:
    """The summaries of every request of ``method`` in the files (ended at or after ``since``, of
    one ``conversation``),
    in memory that does not grow with the number of calls, and one message per file or line that
    could not be read."""
    problems: list[str] = []
    summaries = Summaries(by)
    for call in iter_calls(paths, problems, side, method, since, conversation):
        summaries.add(call)
    return summaries.sorted(), problems


def format_table(summaries: list[Summary], by: str = "server") -> str:
    ok = Outcome.OK.value
    header = (
        by,
        "calls",
        *(o.value for o in Outcome),
        DECLINED,
        "failure rate",
        CALLER_FAULTS,
        "server-fault rate",
        f"top {ERROR_TYPE}",
        f"{ok} p50",
        f"{ok} p95",
    )
    rows = [header]
    for summary in summaries:
        rate, server_rate = summary.failure_rate, summary.server_fault_rate
        errors = ", ".join(f"{name} ({count})" for name, count in summary.error_types.most_common(3))
        rows.append(
            (
                summary.name + (" *" if summary.derived else ""),
                str(summary.calls),
                *(str(summary.outcomes[outcome]) for outcome in Outcome),
                str(summary.declined),
                "-" if rate is None else f"{rate:.1%}",
                str(summary.caller_faults),
                "-" if server_rate is None else f"{server_rate:.1%}",
                errors or "-",
                _duration(summary.ok_latency(0.5)),
                _duration(summary.ok_latency(0.95)),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    numeric = range(1, 9)
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if i in numeric or i > 9 else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * width for width in widths))
    if not summaries:
        lines.append("(no MCP requests found)")
    if any(summary.name == OTHER_NAMES for summary in summaries):
        lines.append(f"{OTHER_NAMES}: the calls of names past the first {MAX_GROUPS:,}, counted together")
    if any(summary.derived for summary in summaries):
        lines.append("* some calls had no tool.outcome: counted by span status (ERROR = failed, else ok)")
    lines.append("failure rate = failed / (ok + failed): cancelled calls are left out (declined: a person said no)")
    lines.append("server-fault rate: the failure rate without the caller faults (the request was wrong: -32602 ...)")
    return "\n".join(lines)


def format_json(summaries: list[Summary]) -> str:
    return json.dumps([summary.as_dict() for summary in summaries], indent=2)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"
