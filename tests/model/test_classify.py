"""Every row of the client-side classification table, exhaustively, without any SDK."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import anyio
import pytest

from mcp_otel.model.classify import (
    SDK_LOCAL_CODES,
    RpcError,
    classify_client_exception,
    classify_client_result,
    classify_server_call,
    declined_in,
    is_declined_answer,
    unfinished,
)
from mcp_otel.model.outcome import CallOutcome, Unfinished
from mcp_otel.semconv import CancelReason, Outcome, ResultType


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (SimpleNamespace(isError=False), CallOutcome.ok()),
        (SimpleNamespace(isError=True), CallOutcome.failed("tool_error")),
        (SimpleNamespace(is_error=False), CallOutcome.ok()),
        (SimpleNamespace(is_error=True), CallOutcome.failed("tool_error")),
        (SimpleNamespace(is_error=None, isError=True), CallOutcome.failed("tool_error")),
        (SimpleNamespace(), CallOutcome.ok()),  # e.g. mcp 2.x InputRequiredResult
        (None, CallOutcome.ok()),
        (SimpleNamespace(isError="yes"), CallOutcome.ok()),  # only a real True is an error
    ],
)
def test_result(result: object, expected: CallOutcome) -> None:
    assert classify_client_result(result) == expected


def classify(
    exc: BaseException,
    rpc: RpcError | None = None,
    *,
    cancellation: bool = False,
    cancel_sent: bool = False,
    closed: bool = False,
    keep_message: bool = True,
    method: str = "tools/call",
) -> CallOutcome | Unfinished:
    """With the server's message kept (content capture on); test_messages_* cover the default."""
    return classify_client_exception(
        exc,
        is_cancellation=cancellation,
        rpc_error=rpc,
        cancel_sent=cancel_sent,
        transport_closed=closed,
        keep_message=keep_message,
        method=method,
    )


ERR = Exception("sdk error")


@pytest.mark.parametrize(
    ("rpc", "cancel_sent", "expected"),
    [
        # JSON-RPC errors from the server: the code, in both attributes.
        (RpcError(-32602, "bad input"), False, CallOutcome.failed("-32602", "bad input", rpc_code=-32602)),
        (RpcError(-32603, "internal"), False, CallOutcome.failed("-32603", "internal", rpc_code=-32603)),
        (RpcError(-32050, "custom"), True, CallOutcome.failed("-32050", "custom", rpc_code=-32050)),
        # SDK read timeouts, both majors.
        (RpcError(408, "Timed out while waiting"), False, CallOutcome.failed("timeout", "Timed out while waiting")),
        (
            RpcError(-32001, "Request 'tools/call' timed out"),
            False,
            CallOutcome.failed("timeout", "Request 'tools/call' timed out"),
        ),
        (RpcError(408, "t"), True, CallOutcome.failed("timeout", "t")),
        # Connection closed.
        (RpcError(-32000, "Connection closed"), False, CallOutcome.failed("connection_closed", "Connection closed")),
        # Cancel replies: a cancel only if this client sent the cancel.
        (RpcError(0, "Request cancelled"), True, CallOutcome.cancelled(CancelReason.CALLER)),
        (RpcError(-32800, "Request cancelled"), True, CallOutcome.cancelled(CancelReason.CALLER)),
        (RpcError(0, "Request cancelled"), False, CallOutcome.failed("0", "Request cancelled")),
        (RpcError(-32800, "Request cancelled"), False, CallOutcome.failed("-32800", "Request cancelled")),
        # Code 0 with another message is a server's generic failure; still a local-only code.
        (RpcError(0, "boom"), True, CallOutcome.failed("0", "boom")),
        (RpcError(0, "boom"), False, CallOutcome.failed("0", "boom")),
    ],
)
def test_rpc_errors(rpc: RpcError, cancel_sent: bool, expected: CallOutcome) -> None:
    assert classify(ERR, rpc, cancel_sent=cancel_sent) == expected


@pytest.mark.parametrize("code", sorted(SDK_LOCAL_CODES))
def test_sdk_local_codes_never_reach_rpc_response_status_code(code: int) -> None:
    for cancel_sent in (False, True):
        outcome = classify(ERR, RpcError(code, "Request cancelled"), cancel_sent=cancel_sent)
        assert outcome.rpc_code is None


def test_cancellation_wins_over_everything() -> None:
    for rpc in (None, RpcError(-32602, "x")):
        for closed in (False, True):
            outcome = classify(asyncio.CancelledError(), rpc, cancellation=True, closed=closed)
            assert outcome == CallOutcome.cancelled(CancelReason.CALLER)


def test_transport_closed() -> None:
    outcome = classify(anyio.ClosedResourceError(), closed=True)
    assert outcome == CallOutcome.failed("connection_closed")


@pytest.mark.parametrize(
    "exc", [RuntimeError("Invalid structured content: secret"), ValueError("x"), KeyboardInterrupt()]
)
def test_other_exceptions_record_only_the_class(exc: BaseException) -> None:
    outcome = classify(exc)
    assert outcome.outcome is Outcome.FAILED
    assert outcome.error_type == type(exc).__qualname__
    assert outcome.description is None  # messages can quote tool output
    assert outcome.rpc_code is None


# --- server side -------------------------------------------------------------------------------

# The conventions' list, then MCP 2026-07-28's header mismatch, missing client capability and
# unsupported protocol version: written out, not imported, so a code dropped from semconv fails.
CALLER_FAULTS = (-32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022)


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        ({"answer": SimpleNamespace(isError=False)}, CallOutcome.ok()),
        ({"answer": {"content": [], "isError": False}}, CallOutcome.ok()),
        ({"answer": {"content": [], "isError": True}}, CallOutcome.failed("tool_error")),
        ({"answer": SimpleNamespace(isError=True)}, CallOutcome.failed("tool_error")),
        (
            {"rpc_error": RpcError(-32603, "internal")},
            CallOutcome.failed("-32603", "internal", rpc_code=-32603),
        ),
        # The server needs a person first (URL elicitation): no result yet, not a failure.
        ({"rpc_error": RpcError(-32042, "elicit first")}, Unfinished(ResultType.INPUT_REQUIRED, "-32042")),
        ({"rpc_error": RpcError(0, "boom")}, CallOutcome.failed("0", "boom")),  # SDK-local code
        ({"peer_cancelled": True}, CallOutcome.cancelled(CancelReason.CLIENT)),
        # A cancel wins over whatever the handler produced: no answer reached the client.
        ({"peer_cancelled": True, "answer": {"isError": True}}, CallOutcome.cancelled(CancelReason.CLIENT)),
        ({"peer_cancelled": True, "is_cancellation": True}, CallOutcome.cancelled(CancelReason.CLIENT)),
        (
            {"is_cancellation": True, "transport_closed": True},
            CallOutcome.cancelled(CancelReason.DISCONNECT),
        ),
        (
            {"is_cancellation": True},
            CallOutcome.failed("shutdown", "server shut down with the call in flight"),
        ),
        # The connection closing after the handler returned does not change its outcome.
        ({"transport_closed": True, "answer": {"isError": False}}, CallOutcome.ok()),
    ],
)
def test_server_calls(facts: dict[str, object], expected: CallOutcome | Unfinished) -> None:
    assert classify_server_call(**facts, keep_message=True) == expected  # type: ignore[arg-type]


def test_messages_of_peers_are_not_kept_by_default() -> None:
    """A JSON-RPC error's message is the tool's own text: without content capture only its code
    is recorded. The SDK's own messages (timeouts, closed connections) stay."""
    assert classify(ERR, RpcError(-32603, "secret"), keep_message=False) == CallOutcome.failed(
        "-32603", rpc_code=-32603
    )
    assert classify(ERR, RpcError(0, "secret"), keep_message=False) == CallOutcome.failed("0")
    assert classify(ERR, RpcError(408, "Timed out"), keep_message=False) == CallOutcome.failed("timeout", "Timed out")
    assert classify(ERR, RpcError(-32000, "Connection closed"), keep_message=False) == CallOutcome.failed(
        "connection_closed", "Connection closed"
    )
    assert classify_server_call(rpc_error=RpcError(-32603, "secret")) == CallOutcome.failed("-32603", rpc_code=-32603)


@pytest.mark.parametrize("code", CALLER_FAULTS)
def test_caller_faults_fail_the_call_but_are_not_server_errors(code: int) -> None:
    """The conventions: not an error of the server, so status UNSET and no error.type (set "if
    and only if the operation fails"); the code says why, on the span and the point."""
    outcome = classify_server_call(rpc_error=RpcError(code, "your request was wrong"), method="tools/call")
    assert isinstance(outcome, CallOutcome)
    assert outcome.outcome is Outcome.FAILED
    assert outcome.error_type is None
    assert outcome.rpc_code == str(code)
    assert outcome.is_error is False  # span status stays UNSET
    assert outcome.description is None
    assert outcome.point_attributes[True] == {
        "mcp.request.outcome": "failed",
        "tool.outcome": "failed",
        "rpc.response.status_code": str(code),
    }


@pytest.mark.parametrize("code", CALLER_FAULTS)
def test_every_code_is_an_error_of_the_call_on_its_sender(code: int) -> None:
    """Client side, the conventions count every JSON-RPC code as an error."""
    assert classify(ERR, RpcError(code, "no"), keep_message=False) == CallOutcome.failed(str(code), rpc_code=code)


@pytest.mark.parametrize("code", [-32600, -32601, -32602, -32022])
@pytest.mark.parametrize("side", ["client", "server"])
def test_a_discover_probe_answered_it_is_not_spoken_is_a_negotiation_step(code: int, side: str) -> None:
    """A 2026-07-28 client probes ``server/discover`` first; an older server's -32601 (or the
    version error) is how the version is negotiated, on both sides: no outcome, the code kept."""
    error = RpcError(code, "no")
    outcome = (
        classify(ERR, error, method="server/discover")
        if side == "client"
        else classify_server_call(rpc_error=error, method="server/discover")
    )
    assert outcome == Unfinished(ResultType.NEGOTIATION, str(code))


@pytest.mark.parametrize("side", ["client", "server"])
def test_other_answers_to_a_probe_and_the_same_codes_elsewhere_are_what_they_are(side: str) -> None:
    if side == "client":
        assert classify(ERR, RpcError(-32603, "x"), method="server/discover") == CallOutcome.failed(
            "-32603", "x", rpc_code=-32603
        )
        assert classify(ERR, RpcError(-32601, "x"), method="initialize") == CallOutcome.failed(
            "-32601", "x", rpc_code=-32601
        )
    else:
        assert classify_server_call(rpc_error=RpcError(-32603, "x"), method="server/discover") == CallOutcome.failed(
            "-32603", rpc_code=-32603
        )
        assert classify_server_call(rpc_error=RpcError(-32601, "x"), method="tools/list") == (
            CallOutcome.caller_fault_error(-32601)
        )


@pytest.mark.parametrize("method", ["tools/call", "server/discover", "prompts/get"])
def test_url_elicitation_required_is_a_call_waiting_for_a_person(method: str) -> None:
    """-32042 (2026-07-28): the server needs the person to complete a URL elicitation, then the
    caller retries: not a failure on either side, no result yet."""
    expected = Unfinished(ResultType.INPUT_REQUIRED, "-32042")
    assert classify(ERR, RpcError(-32042, "x"), method=method) == expected
    assert classify_server_call(rpc_error=RpcError(-32042, "x"), method=method) == expected


# --- the person in the loop: a declined input is a cancel, not a failure ------------------------

DECLINED = CallOutcome.cancelled(CancelReason.INPUT_DECLINED)


@pytest.mark.parametrize(
    ("method", "answer", "rpc", "declined"),
    [
        ("elicitation/create", SimpleNamespace(action="decline"), None, True),
        ("elicitation/create", {"action": "cancel"}, None, True),
        ("elicitation/create", {"action": "accept", "content": {"ok": True}}, None, False),
        ("elicitation/create", {"action": "maybe"}, None, False),
        ("elicitation/create", None, RpcError(-1, "no"), False),  # an error is not a person's answer
        ("sampling/createMessage", None, RpcError(-1, "User rejected sampling request"), True),
        ("sampling/createMessage", None, RpcError(-32603, "model down"), False),  # the agent's failure
        ("sampling/createMessage", SimpleNamespace(role="assistant"), None, False),
        ("roots/list", {"action": "decline"}, None, False),
        ("tools/call", {"action": "decline"}, None, False),
    ],
)
def test_a_persons_no(method: str, answer: object, rpc: RpcError | None, declined: bool) -> None:
    assert is_declined_answer(method, answer, rpc) is declined


@pytest.mark.parametrize(
    ("responses", "declined"),
    [
        ({"a": {"action": "decline"}}, True),
        ({"a": {"action": "accept", "content": {}}, "b": SimpleNamespace(action="cancel")}, True),
        ({"a": {"action": "accept"}}, False),
        ({"a": {"role": "assistant", "content": {"type": "text", "text": "x"}}}, False),  # sampling
        ({}, False),
        (None, False),
        (["decline"], False),
    ],
)
def test_declined_in_a_rounds_input_responses(responses: object, declined: bool) -> None:
    assert declined_in(responses) is declined


@pytest.mark.parametrize(
    ("result", "input_declined", "expected"),
    [
        (SimpleNamespace(isError=True), True, DECLINED),
        (SimpleNamespace(isError=False), True, CallOutcome.ok()),  # the call handled the no
        (SimpleNamespace(isError=True), False, CallOutcome.failed("tool_error")),  # failed another way
    ],
)
def test_a_call_after_a_declined_input(result: object, input_declined: bool, expected: CallOutcome) -> None:
    assert classify_client_result(result, input_declined=input_declined) == expected
    assert classify_server_call(answer=result, input_declined=input_declined) == expected


def test_an_error_after_a_declined_input_is_the_decline_but_timeouts_and_cancels_are_not() -> None:
    def client(rpc: RpcError, **facts: bool) -> CallOutcome:
        return classify_client_exception(
            RuntimeError(),
            is_cancellation=facts.get("is_cancellation", False),
            rpc_error=rpc,
            cancel_sent=False,
            transport_closed=False,
            input_declined=True,
        )

    assert client(RpcError(-1, "User rejected sampling request")) == DECLINED
    assert client(RpcError(-32603, "internal")) == DECLINED
    assert client(RpcError(-32001, "timed out")) == CallOutcome.failed("timeout", "timed out")
    assert client(RpcError(-32000, "closed")) == CallOutcome.failed("connection_closed", "closed")
    assert client(RpcError(-32603, "x"), is_cancellation=True) == CallOutcome.cancelled(CancelReason.CALLER)
    assert classify_server_call(rpc_error=RpcError(-32603, "x"), input_declined=True) == DECLINED
    assert classify_server_call(peer_cancelled=True, input_declined=True) == CallOutcome.cancelled(CancelReason.CLIENT)
    assert classify_server_call(answer={"action": "decline"}, answer_declined=True) == DECLINED


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (SimpleNamespace(result_type="input_required", input_requests={}), ResultType.INPUT_REQUIRED),
        ({"resultType": "input_required", "requestState": "s"}, ResultType.INPUT_REQUIRED),
        ({"resultType": "task", "task": {"taskId": "t"}}, ResultType.TASK),
        (SimpleNamespace(task=SimpleNamespace(taskId="t")), ResultType.TASK),  # mcp 1.x CreateTaskResult
        (SimpleNamespace(result_type="complete", task=None), None),
        ({"resultType": "complete", "content": []}, None),
        ({"content": [], "isError": True}, None),
        (SimpleNamespace(task=SimpleNamespace(status="working")), None),  # no task id: not a task answer
        (None, None),
        ("text", None),
    ],
)
def test_answers_that_are_not_results_yet(result: object, expected: ResultType | None) -> None:
    assert unfinished(result) is expected
