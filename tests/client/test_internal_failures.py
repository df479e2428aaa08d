"""Our own bookkeeping fails open: when a helper of ours raises, the application sees exactly what
it sees without instrumentation, the span is still ended, and the failure is logged once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel.instrumentation import binding, client
from mcp_otel.model import lifecycle, messages, metrics, propagation
from tests.conftest import tool_call_spans
from tests.harness import open_session

pytestmark = pytest.mark.anyio


def explode(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("internal helper exploded")


# (object, attribute) pairs of our helpers, each on a different step of a call.
HELPERS = [
    pytest.param(messages, "session_facts", id="session_facts"),  # reading the session's facts at span start
    # noting the request id mcp 1.x will send
    pytest.param(client.ClientSide, "note_request_id", id="note_request_id", marks=pytest.mark.mcp1),
    pytest.param(propagation.MetaPropagator, "inject", id="inject"),  # injecting trace context
    pytest.param(client, "classify_answer", id="classify_answer"),  # classifying the result
    pytest.param(lifecycle, "finish_span", id="finish_span"),  # writing the outcome
    pytest.param(metrics.CallMetrics, "record", id="record"),  # recording the metric point
]


@pytest.mark.parametrize(("owner", "name"), HELPERS)
async def test_a_failing_helper_changes_nothing_for_the_caller(
    owner: Any,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    instrument: Callable[..., Any],
    exporter: InMemorySpanExporter,
) -> None:
    async with open_session("memory") as session:
        expected = await session.call_tool("ok", {})
    exporter.clear()
    instrument()
    monkeypatch.setattr(owner, name, explode)
    with caplog.at_level(logging.WARNING, logger="mcp_otel"):
        async with open_session("memory") as session:
            first = await session.call_tool("ok", {})
            second = await session.call_tool("ok", {})
    assert first.model_dump() == second.model_dump() == expected.model_dump()
    spans = tool_call_spans(exporter.get_finished_spans())
    assert len(spans) == 2
    assert all(span.end_time is not None for span in spans)
    reports = [record for record in caplog.records if "internal helper exploded" in record.getMessage()]
    assert len(reports) == 1  # logged once, not per call


async def test_a_failing_span_start_still_makes_the_call_without_our_span(
    monkeypatch: pytest.MonkeyPatch, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument()
    # Every span start of a tool call reads its call's arguments (mcp 1.x's server answers
    # initialize with no call to read: that span is still made, and so are notifications').
    monkeypatch.setattr(binding, "arguments_of", explode)
    async with open_session("memory") as session:
        result = await session.call_tool("ok", {})
    assert result.content[0].text == "ok"
    ours = [span for span in exporter.get_finished_spans() if span.instrumentation_scope.name == "mcp_otel"]
    assert [span.name for span in ours if span.name not in ("initialize", "notifications/initialized")] == []
