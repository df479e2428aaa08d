"""``mcp-otel report`` on OTLP JSON files written by the real SDK file exporter."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import baggage, context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from mcp_otel.cli.main import main
from mcp_otel.model.outcome import CallOutcome, finish_span
from mcp_otel.run.calls import read_calls
from mcp_otel.run.otlp_file import JsonLinesMetricExporter, JsonLinesSpanExporter
from mcp_otel.run.report import OTHER_NAMES, Summaries, format_table
from mcp_otel.semconv import GEN_AI_CONVERSATION_ID, CancelReason
from tests.cli.otlp_files import repeat, write_tool_calls
from tests.harness import open_session
from tests.servers.tools import SERVER_NAME


def write_spans(
    path: Path, calls: list[tuple[str, str, CallOutcome | None, bool]], kind: SpanKind = SpanKind.CLIENT
) -> None:
    """Spans as the file exporter writes them: (server, tool, outcome, error) per call; an outcome
    of None makes a span without tool.outcome (another instrumentation), ERROR if ``error``."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(path)))
    tracer = provider.get_tracer("test")
    for server, tool, outcome, error in calls:
        attributes = {"mcp.method.name": "tools/call", "gen_ai.tool.name": tool, "mcp.server.name": server}
        span = tracer.start_span(f"tools/call {tool}", kind=kind, attributes=attributes)
        if outcome is not None:
            finish_span(span, outcome)
        else:
            if error:
                span.set_status(Status(StatusCode.ERROR, "peer's error"))
            span.end()
    provider.shutdown()


OK = CallOutcome.ok()
TOOL_ERROR = CallOutcome.failed("tool_error")
TIMEOUT = CallOutcome.failed("timeout", "timed out")
CANCELLED = CallOutcome.cancelled(CancelReason.CALLER)


def run_report(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    code = main(["report", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_mixed_files_by_server_and_by_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_spans(first, [("weather", "forecast", OK, False)] * 3 + [("weather", "forecast", TOOL_ERROR, False)])
    write_spans(second, [("weather", "alerts", CANCELLED, False), ("search", "find", TIMEOUT, False)])
    # Metrics lines in the same file are skipped.
    provider = MeterProvider(metric_readers=[PeriodicExportingMetricReader(JsonLinesMetricExporter(second))])
    provider.get_meter("test").create_counter("c").add(1)
    provider.shutdown()

    code, out, _ = run_report(capsys, first, second, "--format", "json")
    assert code == 0
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["weather"] | {"ok_latency_p50_s": None, "ok_latency_p95_s": None} == {
        "name": "weather",
        "calls": 5,
        "ok": 3,
        "failed": 1,
        "cancelled": 1,
        "declined": 0,  # the caller's cancel, not a person's no
        "failure_rate": 0.25,  # 1 / (3 + 1): the cancel is in neither
        "caller_faults": 0,
        "server_fault_rate": 0.25,
        "error_types": {"tool_error": 1},
        "ok_latency_p50_s": None,
        "ok_latency_p95_s": None,
        "derived_from_status": 0,
    }
    assert rows["weather"]["ok_latency_p50_s"] >= 0
    assert (rows["search"]["failed"], rows["search"]["failure_rate"], rows["search"]["error_types"]) == (
        1,
        1.0,
        {"timeout": 1},
    )

    code, out, _ = run_report(capsys, first, second, "--by", "tool", "--format", "json")
    assert code == 0
    assert {row["name"]: row["calls"] for row in json.loads(out)} == {"alerts": 1, "find": 1, "forecast": 4}

    code, out, _ = run_report(capsys, first, second)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "server",
        "calls",
        "ok",
        "failed",
        "cancelled",
        "declined",
        "failure",
        "rate",
        "caller",
        "faults",
        "server-fault",
        "rate",
        "top",
        "error.type",
        "ok",
        "p50",
        "ok",
        "p95",
    ]
    weather = next(line for line in lines if line.startswith("weather"))
    assert weather.split()[:9] == ["weather", "5", "3", "1", "1", "0", "25.0%", "0", "25.0%"]
    assert "cancelled calls are left out" in out


@pytest.mark.parametrize("kind", [SpanKind.CLIENT, SpanKind.SERVER])
def test_callers_faults_are_shown_and_kept_out_of_the_server_fault_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: SpanKind
) -> None:
    """Told by rpc.response.status_code on both sides: the sender's error.type is the code, the
    receiver's span has none (semconv); either way the code names the failure."""
    path = tmp_path / "calls.jsonl"
    caller_fault = CallOutcome.failed("-32602", rpc_code=-32602)
    if kind is SpanKind.SERVER:
        caller_fault = CallOutcome.caller_fault_error(-32602)
    server_fault = CallOutcome.failed("-32603", rpc_code=-32603)
    write_spans(
        path, [("s", "t", OK, False)] * 2 + [("s", "t", caller_fault, False), ("s", "t", server_fault, False)], kind
    )
    side = "client" if kind is SpanKind.CLIENT else "server"
    code, out, _ = run_report(capsys, path, "--side", side, "--format", "json")
    assert code == 0
    (row,) = json.loads(out)
    assert (row["failed"], row["failure_rate"], row["caller_faults"], row["server_fault_rate"]) == (2, 0.5, 1, 0.25)
    assert row["error_types"] == {"-32602": 1, "-32603": 1}
    code, out, _ = run_report(capsys, path, "--side", side)
    assert next(line for line in out.splitlines() if line.startswith("s ")).split()[:9] == [
        "s",
        "4",
        "2",
        "2",
        "0",
        "0",
        "50.0%",
        "1",
        "25.0%",
    ]


def test_spans_without_tool_outcome_are_counted_by_status_and_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "other.jsonl"
    write_spans(path, [("legacy", "t", None, False), ("legacy", "t", None, True), ("legacy", "t", OK, False)])
    code, out, _ = run_report(capsys, path, "--format", "json")
    assert code == 0
    (row,) = json.loads(out)
    assert (row["ok"], row["failed"], row["cancelled"], row["derived_from_status"]) == (2, 1, 0, 2)
    code, out, _ = run_report(capsys, path)
    assert code == 0
    assert "legacy *" in out
    assert "counted by span status" in out


def test_server_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "server.jsonl"
    write_spans(path, [("s", "t", OK, False)], kind=SpanKind.SERVER)
    assert json.loads(run_report(capsys, path, "--format", "json")[1]) == []
    (row,) = json.loads(run_report(capsys, path, "--format", "json", "--side", "server")[1])
    assert row["ok"] == 1


def test_a_files_rotated_generations_are_read_with_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "server.jsonl"
    write_spans(path.with_name("server.jsonl.2"), [("s", "t", OK, False)] * 2)
    write_spans(path.with_name("server.jsonl.1"), [("s", "t", TOOL_ERROR, False)])
    write_spans(path, [("s", "t", OK, False)])
    path.with_name("server.jsonl.bak").write_text("not OTLP")  # not a generation: not read
    (row,) = json.loads(run_report(capsys, path, "--format", "json")[1])
    assert (row["calls"], row["ok"], row["failed"]) == (4, 3, 1)


def _aged(path: Path, seconds: float) -> None:
    """Every span of ``path`` moved ``seconds`` into the past."""
    shift = int(seconds * 1e9)
    lines = []
    for line in path.read_text().splitlines():
        message = json.loads(line)
        for resource in message.get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("startTimeUnixNano", "endTimeUnixNano"):
                        span[key] = str(int(span[key]) - shift)
        lines.append(json.dumps(message))
    path.write_text("\n".join(lines) + "\n")


def test_with_no_file_every_proxys_file_from_the_servers_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``mcp-otel report`` alone: the files the proxies write by default (their generations
    too), one row per server, SERVER spans; an empty file (a proxy that recorded nothing yet) is
    not a problem there; ``--since`` keeps the calls that ended in that time."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    directory = tmp_path / "mcp-otel" / "proxy"
    directory.mkdir(parents=True)
    write_spans(directory / "weather.jsonl", [("weather", "forecast", OK, False)] * 2, kind=SpanKind.SERVER)
    write_spans(directory / "weather.jsonl.1", [("weather", "forecast", TOOL_ERROR, False)], kind=SpanKind.SERVER)
    _aged(directory / "weather.jsonl.1", 2 * 86400)
    write_spans(directory / "files.jsonl", [("files", "read", OK, False)], kind=SpanKind.SERVER)
    write_spans(directory / "files.jsonl", [("files", "read", OK, False)])  # a CLIENT span: not counted
    (directory / "idle.jsonl").write_text("")
    code, out, err = run_report(capsys, "--format", "json")
    assert (code, err) == (0, "")
    assert [(row["name"], row["calls"], row["failed"]) for row in json.loads(out)] == [
        ("files", 1, 0),
        ("weather", 3, 1),
    ]
    recent = json.loads(run_report(capsys, "--format", "json", "--since", "1d")[1])
    assert [(row["name"], row["calls"], row["failed"]) for row in recent] == [("files", 1, 0), ("weather", 2, 0)]
    assert [row["calls"] for row in json.loads(run_report(capsys, "--format", "json", "--side", "client")[1])] == [1]


def test_with_no_file_and_no_proxy_file_it_says_where_it_looked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    code, _, err = run_report(capsys)
    assert code == 2
    assert f"no proxy has written to {tmp_path / 'mcp-otel' / 'proxy'}" in err


@pytest.mark.parametrize("since", ["1", "0s", "0.0h", "1y", "h"])
def test_since_needs_a_duration(since: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--since", since])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "90s, 30m, 1h, 2d, 1w" in err or "a duration above zero" in err


def test_fail_above(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spans.jsonl"
    write_spans(
        path, [("s", "t", OK, False)] * 9 + [("s", "t", TOOL_ERROR, False)] + [("s", "t", CANCELLED, False)] * 5
    )
    assert run_report(capsys, path, "--fail-above", "0.1")[0] == 0  # 10% is not above 10%
    code, _, err = run_report(capsys, path, "--fail-above", "0.05")
    assert code == 1
    assert "s: failure rate 10.0% is above 5.0%" in err


def test_empty_and_malformed_files_are_named_and_nothing_else_is_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, empty, broken = tmp_path / "good.jsonl", tmp_path / "empty.jsonl", tmp_path / "broken.jsonl"
    write_spans(good, [("s", "t", OK, False)])
    empty.write_text("")
    write_spans(broken, [("s", "t", TOOL_ERROR, False)])
    with broken.open("a") as file:
        file.write('{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": 3, "attributes": 7}]}]}]}\n')
        file.write("{truncated\n")
    write_spans(broken, [("s", "t", OK, False)])

    code, out, err = run_report(capsys, good, empty, broken, tmp_path / "missing.jsonl", "--format", "json")
    assert code == 2
    (row,) = json.loads(out)
    assert (row["calls"], row["ok"], row["failed"]) == (3, 2, 1)  # every readable line counted
    assert f"{empty}: empty" in err
    assert f"{broken}:2: not OTLP JSON spans" in err
    assert f"{broken}:3: not JSON" in err
    assert f"{tmp_path / 'missing.jsonl'}: cannot read" in err


def test_by_method_and_method_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every request's span counts under its method; the default stays tool calls."""
    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(path)))
    tracer = provider.get_tracer("test")
    requests = [
        ("initialize", CallOutcome.ok()),
        ("resources/read", CallOutcome.failed("-32603", rpc_code=-32603)),
        ("resources/read", CallOutcome.cancelled(CancelReason.CALLER)),
        ("resources/read", CallOutcome.ok()),
        ("tools/call", CallOutcome.ok()),
    ]
    for method, outcome in requests:
        attributes = {"mcp.method.name": method, "mcp.server.name": "s"}
        finish_span(tracer.start_span(method, kind=SpanKind.CLIENT, attributes=attributes), outcome, method=method)
    provider.shutdown()

    def report(*options: str) -> list[dict[str, Any]]:
        assert main(["report", str(path), "--format", "json", *options]) == 0
        rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
        return rows

    by_method = {
        row["name"]: (row["calls"], row["ok"], row["failed"], row["cancelled"]) for row in report("--by", "method")
    }
    assert by_method == {"initialize": (1, 1, 0, 0), "resources/read": (3, 1, 1, 1), "tools/call": (1, 1, 0, 0)}
    (reads,) = report("--method", "resources/read")
    assert (reads["name"], reads["calls"], reads["failure_rate"], reads["derived_from_status"]) == ("s", 3, 0.5, 0)
    (tool_calls,) = report()
    assert (tool_calls["name"], tool_calls["calls"]) == ("s", 1)
    assert sum(row["calls"] for row in report("--method", "*")) == 5


def _legacy_spans(path: Path) -> None:
    """Spans of another instrumentation (no outcome attribute), as the file exporter writes them: a
    request failed (ERROR: counted failed by its status, docs/decisions.md rule 5) and two notifications, one with
    status ERROR, on both sides."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(path)))
    tracer = provider.get_tracer("another")
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        for method, error in (
            ("resources/read", True),
            ("notifications/cancelled", True),
            ("notifications/progress", False),
        ):
            attributes = {"mcp.method.name": method, "mcp.server.name": SERVER_NAME}
            span = tracer.start_span(method, kind=kind, attributes=attributes)
            if error:
                span.set_status(Status(StatusCode.ERROR, "peer's error"))
            span.end()
    provider.shutdown()


@pytest.mark.anyio
async def test_notifications_are_not_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], instrument: Callable[..., Any]
) -> None:
    """A notification's span (``notifications/initialized`` of every session, a cancel) has no
    answer and no outcome: in no mode is it a call, not even counted ok from its status. Requests'
    spans without an outcome are still counted by their status (docs/decisions.md rule 5)."""
    run, legacy = tmp_path / "run.jsonl", tmp_path / "legacy.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(run)))
    instrument(tracer_provider=provider)
    token = context.attach(baggage.set_baggage(GEN_AI_CONVERSATION_ID, "conversation-1"))
    try:
        async with open_session("memory") as session:  # both sides in this process
            await session.list_tools()  # first: call_tool then has the tools' schemas (no list of its own)
            await session.call_tool("ok", {})
            await session.call_tool("tool_error", {})
    finally:
        context.detach(token)
    provider.shutdown()
    _legacy_spans(legacy)
    # What the files hold, so the rows below are known: each side's handshake, its notification, the calls.
    written = {(span["name"], span["kind"]) for span in _spans_in(run)}
    assert {("notifications/initialized", 2), ("notifications/initialized", 3)} <= written

    def report(*options: str) -> list[tuple[Any, ...]]:
        assert main(["report", str(run), str(legacy), "--format", "json", *options]) == 0
        return [
            (row["name"], row["calls"], row["ok"], row["failed"], row["cancelled"], row["derived_from_status"])
            for row in json.loads(capsys.readouterr().out)
        ]

    # initialize, tools/list, tools/call ok and tool_error (ours); resources/read (docs/decisions.md rule 5, failed).
    every = [(SERVER_NAME, 5, 3, 2, 0, 1)]
    for side in ("client", "server"):
        assert report("--side", side, "--method", "*") == every
        assert report("--side", side, "--method", "*", "--since", "1h") == every
        assert report("--side", side, "--by", "method") == [
            ("initialize", 1, 1, 0, 0, 0),
            ("resources/read", 1, 0, 1, 0, 1),
            ("tools/call", 2, 1, 1, 0, 0),
            ("tools/list", 1, 1, 0, 0, 0),
        ]
        assert report("--side", side, "--by", "tool", "--method", "*") == [
            ("(unknown)", 3, 2, 1, 0, 1),
            ("ok", 1, 1, 0, 0, 0),
            ("tool_error", 1, 0, 1, 0, 0),
        ]
        assert report("--side", side, "--conversation", "conversation-1", "--method", "*") == [
            (SERVER_NAME, 4, 3, 1, 0, 0)
        ]
        assert report("--side", side) == [(SERVER_NAME, 2, 1, 1, 0, 0)]
        for method in ("notifications/initialized", "notifications/cancelled", "notifications/progress"):
            assert report("--side", side, "--method", method) == []
            assert report("--side", side, "--method", method, "--by", "method") == []
    code, out, _ = run_report(capsys, run, legacy, "--method", "*")
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith(SERVER_NAME)]
    assert row.split()[:9] == [f"{SERVER_NAME}", "*", "5", "3", "2", "0", "0", "40.0%", "0"]
    code, out, _ = run_report(capsys, run, legacy, "--method", "notifications/initialized")
    assert (code, out.splitlines()[2]) == (0, "(no MCP requests found)")


def _spans_in(path: Path) -> list[dict[str, Any]]:
    return [
        span
        for line in path.read_text().splitlines()
        for resource in json.loads(line).get("resourceSpans", [])
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def test_names_past_the_bound_are_counted_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spans.jsonl"
    write_spans(path, [("s", f"tool-{index}", OK, False) for index in range(5)])
    summaries = Summaries(by="tool", max_groups=3)
    calls, problems = read_calls([path])
    assert problems == []
    for call in calls:
        summaries.add(call)
    rows = {summary.name: summary.calls for summary in summaries.sorted()}
    assert rows == {"tool-0": 1, "tool-1": 1, "tool-2": 1, OTHER_NAMES: 2}
    assert f"{OTHER_NAMES}: the calls of names past the first" in format_table(summaries.sorted(), "tool")


def test_memory_stays_flat_as_calls_grow(tmp_path: Path) -> None:
    """Peak memory of ``mcp-otel report`` over 10,000 and over 100,000 calls (the same lines, ten
    times over): the counts are exact and the second run needs at most a few MB more, where
    keeping every call (the report before it streamed) needed about 150 MB more. Nothing timed."""
    base = tmp_path / "1k.jsonl"
    written = write_tool_calls(base, 1000)
    peaks = {}
    for times in (10, 100):
        path = tmp_path / f"{times}k.jsonl"
        repeat(base, path, times)
        completed = subprocess.run(
            [sys.executable, "-c", PEAK_OF_REPORT, str(path)], capture_output=True, text=True, check=True
        )
        rows = {row["name"]: row for row in json.loads(completed.stdout)}
        assert {
            (name, outcome): row[outcome]
            for name, row in rows.items()
            for outcome in ("ok", "failed", "cancelled")
            if row[outcome]
        } == {key: count * times for key, count in written.items()}
        peaks[times] = int(completed.stderr.split()[-1])
    growth_kib = peaks[100] - peaks[10]
    assert growth_kib < MAX_GROWTH_KIB, f"peak RSS grew by {growth_kib} KiB from 10k to 100k calls"


# 100,000 calls held as objects need about 150 MB; streamed, the growth is the parser's buffers.
MAX_GROWTH_KIB = 8 * 1024
PEAK_OF_REPORT = """
import resource, sys
from mcp_otel.cli.main import main
code = main(["report", sys.argv[1], "--format", "json"])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def test_either_parser_gives_the_same_report(tmp_path: Path) -> None:
    """With the ``fast`` extra (msgspec) and without it, the same figures, the same problems."""
    pytest.importorskip("msgspec")
    path = tmp_path / "spans.jsonl"
    write_tool_calls(path, 300)
    with path.open("ab") as file:
        file.write(b'{"resourceSpans": 7}\n{truncated\n\xff\xfe\n')
    outputs = []
    for hide in ("", "import sys; sys.modules['msgspec'] = None; "):
        program = f"{hide}import sys; from mcp_otel.cli.main import main; sys.exit(main(sys.argv[1:]))"
        completed = subprocess.run(
            [sys.executable, "-c", program, "report", str(path), "--format", "json"], capture_output=True, text=True
        )
        outputs.append((completed.returncode, json.loads(completed.stdout), completed.stderr.splitlines()))
    assert outputs[0][0] == 2
    assert outputs[0][1] == outputs[1][1]
    assert sum(row["calls"] for row in outputs[0][1]) == 300
    # Each parser words a bad line its own way; both name the same lines.
    assert [line.split(": ")[1] for line in outputs[0][2]] == [line.split(": ")[1] for line in outputs[1][2]]
