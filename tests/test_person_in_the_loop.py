"""A tool call that needs a person: one logical call across input rounds, and a person's "no"
(an elicitation declined or dismissed, a sampling request rejected) is a cancel, not a failure.

Each case calls one tool of ``tests/servers/person_server.py`` in memory with mcp-otel on both
sides, a person answering as the case says, and asserts the spans of both sides, the operation
points and ``mcp-otel report``: one call per case, with the outcome the caller finally saw.

Connections: mcp 2.x on 2026-07-28 (``Client(server)``: input comes in rounds,
``InputRequiredResult``) and 2025-11-25 (``mode="legacy"``: ``elicitation/create`` and
``sampling/createMessage`` requests mid-call); mcp 1.x on 2025-11-25 (``ctx.elicit``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_otel import semconv
from mcp_otel.run.calls import read_calls
from mcp_otel.run.otlp_file import JsonLinesSpanExporter
from tests.harness import MCP_MAJOR, is_error
from tests.metrics.test_metrics import histogram_points
from tests.servers import person_server

pytestmark = pytest.mark.anyio

ROUNDS = "2026-07-28"  # input in rounds (mcp 2.x only)
MID_CALL = "2025-11-25"  # input requests sent mid-call
ERAS = [ROUNDS, MID_CALL] if MCP_MAJOR == 2 else [MID_CALL]

ACCEPT, DECLINE, DISMISS, REJECT = "accept", "decline", "cancel", "reject-sampling"
ELICIT, SAMPLE = semconv.METHOD_ELICITATION_CREATE, semconv.METHOD_SAMPLING_CREATE_MESSAGE
DECLINED = semconv.CancelReason.INPUT_DECLINED.value


class Person:
    """The agent's callbacks: the person answers every elicitation with ``action``; a sampling
    request is rejected (the specification's -1) when ``action`` is REJECT."""

    def __init__(self, action: str) -> None:
        self.action = action

    async def elicitation(self, context: Any, params: Any) -> Any:
        if self.action == ACCEPT:
            return types.ElicitResult(action="accept", content={"ok": True})
        return types.ElicitResult(action=self.action)  # type: ignore[arg-type]

    async def sampling(self, context: Any, params: Any) -> Any:
        if self.action == REJECT:
            return types.ErrorData(code=semconv.USER_REJECTED_CODE, message="User rejected sampling request")
        content = types.TextContent(type="text", text="a summary")
        return types.CreateMessageResult(role="assistant", content=content, model="person")


@dataclass(frozen=True)
class Case:
    tool: str
    answer: str
    outcome: str
    error_type: str | None = None
    cancel_reason: str | None = None

    @property
    def input_method(self) -> str:
        return SAMPLE if self.tool == "summarize" else ELICIT

    @property
    def status(self) -> StatusCode:
        return StatusCode.ERROR if self.outcome == "failed" else StatusCode.UNSET

    def __str__(self) -> str:
        return f"{self.tool}-{self.answer}"


CASES = [
    Case("delete", ACCEPT, "ok"),
    Case("delete", DECLINE, "cancelled", cancel_reason=DECLINED),
    Case("delete", DISMISS, "cancelled", cancel_reason=DECLINED),
    Case("delete_then_fail", ACCEPT, "failed", error_type="tool_error"),
    Case("keep_on_decline", DECLINE, "ok"),
    Case("summarize", REJECT, "cancelled", cancel_reason=DECLINED),
]


@asynccontextmanager
async def session_for(era: str, person: Person) -> AsyncIterator[Any]:
    """Something with ``call_tool`` to the person server, the person answering its requests."""
    server = person_server.build()
    callbacks = {"elicitation_callback": person.elicitation, "sampling_callback": person.sampling}
    if MCP_MAJOR == 1:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server, **callbacks) as session:
            yield session
        return
    from mcp import Client

    async with Client(server, mode="auto" if era == ROUNDS else "legacy", **callbacks) as client:
        yield client


def spans_of(exporter: InMemorySpanExporter, kind: SpanKind, method: str) -> list[Any]:
    return [
        span
        for span in exporter.get_finished_spans()
        if span.kind is kind and span.attributes.get(semconv.MCP_METHOD_NAME) == method
    ]


def assert_outcome(span: Any, case: Case) -> None:
    attributes = span.attributes
    assert span.status.status_code is case.status, span.name
    for key in (semconv.MCP_REQUEST_OUTCOME, semconv.TOOL_OUTCOME):
        assert attributes.get(key) == case.outcome, (span.name, key)
    assert attributes.get(semconv.ERROR_TYPE) == case.error_type
    for key in (semconv.MCP_REQUEST_CANCEL_REASON, semconv.TOOL_CANCEL_REASON):
        assert attributes.get(key) == case.cancel_reason, (span.name, key)
    assert semconv.MCP_REQUEST_RESULT_TYPE not in attributes


def point_counts(reader: InMemoryMetricReader, metric: str) -> Counter[tuple[Any, ...]]:
    counts: Counter[tuple[Any, ...]] = Counter()
    for point in histogram_points(reader, metric):
        attributes = point.attributes
        if attributes[semconv.MCP_METHOD_NAME] == semconv.METHOD_TOOLS_CALL:
            outcome, error_type = attributes[semconv.TOOL_OUTCOME], attributes.get(semconv.ERROR_TYPE)
            counts[outcome, error_type, attributes.get(semconv.TOOL_CANCEL_REASON)] += point.count
    return counts


@pytest.fixture
def reader(instrument: Callable[..., Any]) -> InMemoryMetricReader:
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    return reader


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("era", ERAS)
async def test_one_call_per_person_answer(
    era: str, case: Case, reader: InMemoryMetricReader, exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    raised: BaseException | None = None
    async with session_for(era, Person(case.answer)) as session:
        try:
            result = await session.call_tool(case.tool, {"path": "/tmp/x", "text": "t"})
        except Exception as exc:  # mcp 2.x: the rejection of a sampling request is the call's error
            raised = exc
        else:
            assert is_error(result) is (case.outcome != "ok")
    assert (raised is not None) == (MCP_MAJOR == 2 and case.answer == REJECT)

    # The agent: one CLIENT span for the call, however many rounds it took.
    (client_span,) = spans_of(exporter, SpanKind.CLIENT, semconv.METHOD_TOOLS_CALL)
    assert_outcome(client_span, case)
    if era == ROUNDS:
        rounds = 1 if case.answer == REJECT else 2  # a rejected input ends the call in the client
        assert client_span.attributes[semconv.MCP_REQUEST_ROUNDS] == rounds
        assert list(client_span.attributes[semconv.MCP_REQUEST_INPUT_METHODS]) == [case.input_method]
        asked, answered = client_span.events
        assert (asked.name, answered.name) == (semconv.EVENT_INPUT_REQUIRED, semconv.EVENT_INPUT_ANSWERED)
        assert list(asked.attributes[semconv.MCP_REQUEST_INPUT_METHODS]) == [case.input_method]
        assert dict(answered.attributes) == {
            semconv.MCP_METHOD_NAME: case.input_method,
            **({semconv.MCP_ELICITATION_ACTION: case.answer} if case.input_method == ELICIT else {}),
            **({semconv.MCP_REQUEST_CANCEL_REASON: DECLINED} if case.answer in (DECLINE, DISMISS, REJECT) else {}),
        }

    # The server: each round is a request of its own; a round that asks for input has no outcome.
    server_spans = spans_of(exporter, SpanKind.SERVER, semconv.METHOD_TOOLS_CALL)
    for span in server_spans:
        assert span.parent is not None
        assert span.parent.span_id == client_span.context.span_id
    if era == ROUNDS:
        asking, *final = sorted(server_spans, key=lambda span: span.start_time)
        assert asking.attributes[semconv.MCP_REQUEST_RESULT_TYPE] == "input_required"
        assert semconv.MCP_REQUEST_OUTCOME not in asking.attributes
        assert asking.status.status_code is StatusCode.UNSET
        assert len(final) == (0 if case.answer == REJECT else 1)
        if final:
            assert final[0].attributes[semconv.MCP_REQUEST_INPUT_RESPONSES] == 1
    else:
        final = server_spans
        assert len(final) == 1
        # The input request, on both sides: the person's answer, and a no is a declined input.
        (sent,) = spans_of(exporter, SpanKind.CLIENT, case.input_method)
        (answered,) = spans_of(exporter, SpanKind.SERVER, case.input_method)
        for span in (sent, answered):
            assert span.parent is not None
            declined = case.answer in (DECLINE, DISMISS, REJECT)
            assert span.attributes[semconv.MCP_REQUEST_OUTCOME] == ("cancelled" if declined else "ok")
            assert span.attributes.get(semconv.MCP_REQUEST_CANCEL_REASON) == (DECLINED if declined else None)
            assert span.status.status_code is StatusCode.UNSET
            if case.input_method == ELICIT:
                assert span.attributes[semconv.MCP_ELICITATION_ACTION] == case.answer
        assert sent.parent.span_id == final[0].context.span_id
        assert answered.parent.span_id == sent.context.span_id
    if final:
        assert_outcome(final[0], case)

    # Metrics and the report count the call once, with the caller's outcome.
    expected = Counter({(case.outcome, case.error_type, case.cancel_reason): 1})
    assert point_counts(reader, semconv.MCP_CLIENT_OPERATION_DURATION) == expected
    assert point_counts(reader, semconv.MCP_SERVER_OPERATION_DURATION) == (expected if final else Counter())
    spans_file = tmp_path / "spans.jsonl"
    JsonLinesSpanExporter(spans_file).export(exporter.get_finished_spans())
    for side, count in (("client", 1), ("server", len(final))):
        calls, problems = read_calls([spans_file], side)
        assert problems == []
        assert [call.outcome.value for call in calls] == [case.outcome] * count
