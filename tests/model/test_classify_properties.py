"""Property tests: any combination of facts yields exactly one outcome, and a span written from
it never disagrees with itself (docs/decisions.md rules 1 and 4)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from mcp_otel.model.classify import (
    SDK_LOCAL_CODES,
    RpcError,
    classify_answer,
    classify_client_exception,
    classify_client_result,
    classify_server_call,
    unfinished,
)
from mcp_otel.model.outcome import CallOutcome, Unfinished, finish_span, finish_unfinished, outcome_of_span
from mcp_otel.semconv import Outcome, ResultType

codes = st.one_of(
    st.sampled_from(sorted(SDK_LOCAL_CODES | {-32602, -32603, -32700, -32002, -32020, -32022, -32042})), st.integers()
)
methods = st.sampled_from(["tools/call", "server/discover", "initialize", "resources/read"])
rpc_errors = st.builds(RpcError, codes, st.one_of(st.just("Request cancelled"), st.text(max_size=600)))
exceptions = st.sampled_from([asyncio.CancelledError(), RuntimeError("x"), ValueError(), KeyboardInterrupt()])
results = st.one_of(
    st.none(),
    st.builds(SimpleNamespace, isError=st.one_of(st.booleans(), st.none(), st.text(max_size=3))),
    st.builds(SimpleNamespace, is_error=st.one_of(st.booleans(), st.none())),
    st.dictionaries(st.sampled_from(["isError", "content"]), st.one_of(st.booleans(), st.none())),
)

EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))


def assert_consistent(outcome: CallOutcome | Unfinished) -> None:
    if isinstance(outcome, Unfinished):  # an error answer that says the request is not done
        assert outcome.result_type in (ResultType.INPUT_REQUIRED, ResultType.NEGOTIATION)
        EXPORTER.clear()
        finish_unfinished(PROVIDER.get_tracer("p").start_span("server/discover"), outcome)
        (span,) = EXPORTER.get_finished_spans()
        assert span.status.status_code is StatusCode.UNSET
        assert "error.type" not in span.attributes
        assert span.attributes["rpc.response.status_code"] == outcome.rpc_code
        assert outcome_of_span(span.attributes, False) is None
        return
    assert isinstance(outcome.outcome, Outcome)
    # error.type if and only if the call failed, and on a server not by the caller's fault
    assert (outcome.error_type is not None) == outcome.is_error
    assert (outcome.cancel_reason is not None) == (outcome.outcome is Outcome.CANCELLED)
    assert outcome.is_error == (outcome.outcome is Outcome.FAILED and not outcome.caller_fault)
    assert outcome.rpc_code is None or int(outcome.rpc_code) not in SDK_LOCAL_CODES
    # Written onto a real span and read back, it says the same thing.
    EXPORTER.clear()
    finish_span(PROVIDER.get_tracer("p").start_span("tools/call x"), outcome)
    (span,) = EXPORTER.get_finished_spans()
    is_error = span.status.status_code is StatusCode.ERROR
    assert is_error == outcome.is_error
    assert ("error.type" in span.attributes) == is_error
    assert span.attributes.get("rpc.response.status_code") == outcome.rpc_code
    assert outcome_of_span(span.attributes, is_error) is outcome.outcome
    if not is_error:
        assert span.status.description is None


@given(
    exc=exceptions,
    rpc=st.one_of(st.none(), rpc_errors),
    cancellation=st.booleans(),
    sent=st.booleans(),
    closed=st.booleans(),
    method=methods,
)
def test_any_client_exception_has_one_consistent_outcome(
    exc: BaseException, rpc: RpcError | None, cancellation: bool, sent: bool, closed: bool, method: str
) -> None:
    outcome = classify_client_exception(
        exc, is_cancellation=cancellation, rpc_error=rpc, cancel_sent=sent, transport_closed=closed, method=method
    )
    assert_consistent(outcome)
    if cancellation:
        assert isinstance(outcome, CallOutcome)
        assert outcome.outcome is Outcome.CANCELLED


@given(result=results)
def test_any_result_has_one_consistent_outcome(result: object) -> None:
    assert_consistent(classify_client_result(result))


# Answers of every shape: results (with isError / is_error), and answers that are not results yet
# (resultType, task), as models of either major and as the wire carries them.
flags = st.one_of(st.booleans(), st.none(), st.text(max_size=3))
tags = st.one_of(st.none(), st.sampled_from(["input_required", "task", "complete"]), st.text(max_size=3))
tasks = st.one_of(
    st.none(),
    st.builds(SimpleNamespace, taskId=st.one_of(st.none(), st.text(max_size=3))),
    st.builds(SimpleNamespace, task_id=st.one_of(st.none(), st.text(max_size=3))),
    st.fixed_dictionaries({}, optional={"taskId": st.one_of(st.none(), st.text(max_size=3))}),
)
answers = st.one_of(
    results,
    st.builds(SimpleNamespace, result_type=tags, task=tasks, is_error=flags, isError=flags),
    st.builds(SimpleNamespace, task=tasks, isError=flags),  # mcp 1.x: no resultType
    st.fixed_dictionaries({}, optional={"resultType": tags, "task": tasks, "isError": flags, "content": st.just([])}),
    st.text(max_size=3),
)


@given(answer=answers)
def test_an_answer_read_once_is_what_both_sides_classifiers_say_of_it(answer: object) -> None:
    """The one-read verdict most requests end with, on both sides, is the full classifiers'."""
    verdict = classify_answer(answer)
    assert verdict == (unfinished(answer) or classify_client_result(answer))
    assert verdict == (unfinished(answer) or classify_server_call(answer=answer))


@given(
    answer=results,
    rpc=st.one_of(st.none(), rpc_errors),
    peer=st.booleans(),
    cancellation=st.booleans(),
    closed=st.booleans(),
    method=methods,
)
def test_any_server_ending_has_one_consistent_outcome(
    answer: object, rpc: RpcError | None, peer: bool, cancellation: bool, closed: bool, method: str
) -> None:
    outcome = classify_server_call(
        answer=answer,
        rpc_error=rpc,
        peer_cancelled=peer,
        is_cancellation=cancellation,
        transport_closed=closed,
        method=method,
    )
    assert_consistent(outcome)
    if peer:  # the client's cancel wins: no answer reached it
        assert isinstance(outcome, CallOutcome)
        assert outcome.outcome is Outcome.CANCELLED
