"""The outcome model's invariant and the one function that writes it onto a span (real SDK)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from mcp_otel import semconv
from mcp_otel.model.outcome import MAX_DESCRIPTION_LENGTH, CallOutcome, bounded, finish_span, outcome_of_span
from mcp_otel.semconv import CancelReason, Outcome, ResultType


def test_outcome_values_are_the_documented_strings() -> None:
    assert [value.value for value in Outcome] == ["ok", "failed", "cancelled"]
    assert [value.value for value in CancelReason] == ["caller", "client", "disconnect", "input_declined"]
    assert [value.value for value in ResultType] == ["input_required", "task", "negotiation"]
    assert semconv.MCP_REQUEST_RESULT_TYPE == "mcp.request.result_type"
    assert semconv.TOOL_OUTCOME == "tool.outcome"
    assert semconv.TOOL_CANCEL_REASON == "tool.cancel.reason"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"outcome": Outcome.FAILED},  # failed without error.type
        {"outcome": Outcome.FAILED, "error_type": "x", "cancel_reason": CancelReason.CALLER},
        {"outcome": Outcome.OK, "error_type": "x"},
        {"outcome": Outcome.OK, "description": "x"},
        {"outcome": Outcome.OK, "rpc_code": "-32602"},
        {"outcome": Outcome.OK, "cancel_reason": CancelReason.CALLER},
        {"outcome": Outcome.CANCELLED},  # cancelled without a reason
        {"outcome": Outcome.CANCELLED, "cancel_reason": CancelReason.CALLER, "error_type": "x"},
        {"outcome": Outcome.CANCELLED, "cancel_reason": CancelReason.CALLER, "description": "x"},
        {"outcome": Outcome.OK, "caller_fault": True},
        {"outcome": Outcome.FAILED, "caller_fault": True},  # no code
        {"outcome": Outcome.FAILED, "caller_fault": True, "http_status": 500},  # not the caller's
        {"outcome": Outcome.FAILED, "error_type": "-32602", "rpc_code": "-32602", "caller_fault": True},
        {"outcome": Outcome.FAILED, "rpc_code": "-32602", "caller_fault": True, "description": "x"},
        {"outcome": Outcome.FAILED, "error_type": "401", "http_status": 401},  # status without a fault
    ],
)
def test_self_contradicting_outcomes_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="outcome"):
        CallOutcome(**kwargs)  # type: ignore[arg-type]


def test_descriptions_are_bounded() -> None:
    outcome = CallOutcome.failed("-32603", "x" * 10_000)
    assert outcome.description is not None
    assert len(outcome.description) == MAX_DESCRIPTION_LENGTH
    assert outcome.description.endswith("…")
    assert bounded("short", 10) == "short"


def _finished(outcome: CallOutcome) -> object:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    span = provider.get_tracer("test").start_span("tools/call x")
    finish_span(span, outcome)
    (finished,) = exporter.get_finished_spans()
    return finished


@pytest.mark.parametrize(
    ("outcome", "status", "description", "attributes"),
    [
        (CallOutcome.ok(), StatusCode.UNSET, None, {"tool.outcome": "ok", "mcp.request.outcome": "ok"}),
        (
            CallOutcome.cancelled(CancelReason.CALLER),
            StatusCode.UNSET,
            None,
            {
                "tool.outcome": "cancelled",
                "tool.cancel.reason": "caller",
                "mcp.request.outcome": "cancelled",
                "mcp.request.cancel.reason": "caller",
            },
        ),
        (
            CallOutcome.failed("tool_error"),
            StatusCode.ERROR,
            None,
            {"tool.outcome": "failed", "mcp.request.outcome": "failed", "error.type": "tool_error"},
        ),
        (
            CallOutcome.failed("-32602", "bad input", rpc_code=-32602),
            StatusCode.ERROR,
            "bad input",
            {
                "tool.outcome": "failed",
                "mcp.request.outcome": "failed",
                "error.type": "-32602",
                "rpc.response.status_code": "-32602",
            },
        ),
        (
            CallOutcome.caller_fault_error(-32602),
            StatusCode.UNSET,
            None,
            {"tool.outcome": "failed", "mcp.request.outcome": "failed", "rpc.response.status_code": "-32602"},
        ),
        (
            CallOutcome.caller_fault_rejection(401),
            StatusCode.UNSET,
            None,
            {"tool.outcome": "failed", "mcp.request.outcome": "failed"},
        ),
    ],
)
def test_finish_span_writes_status_and_attributes_together(
    outcome: CallOutcome, status: StatusCode, description: str | None, attributes: dict[str, str]
) -> None:
    span = _finished(outcome)
    assert span.status.status_code == status  # type: ignore[attr-defined]
    assert span.status.description == description  # type: ignore[attr-defined]
    assert dict(span.attributes) == attributes  # type: ignore[attr-defined]
    assert span.end_time is not None  # type: ignore[attr-defined]
    # The span and the outcome agree when read back (one string end to end).
    assert outcome_of_span(span.attributes, span.status.status_code == StatusCode.ERROR) is outcome.outcome  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("attributes", "is_error", "expected"),
    [
        ({}, False, Outcome.OK),  # older spans: status decides
        ({}, True, Outcome.FAILED),
        ({"tool.outcome": "cancelled"}, False, Outcome.CANCELLED),
        ({"tool.outcome": "failed"}, True, Outcome.FAILED),
        ({"tool.outcome": "bogus"}, True, Outcome.FAILED),
    ],
)
def test_outcome_of_span(attributes: dict[str, str], is_error: bool, expected: Outcome) -> None:
    assert outcome_of_span(attributes, is_error) is expected
