"""Every row of the client-side classification table, exhaustively, without any SDK."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import anyio
import pytest

from mcp_otel.classify import (
    SDK_LOCAL_CODES,
    RpcError,
    classify_client_exception,
    classify_client_result,
    classify_server_call,
)
from mcp_otel.outcome import CallOutcome
from mcp_otel.semconv import CancelReason, ToolOutcome


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
) -> CallOutcome:
    """With the server's message kept (content capture on); test_messages_* cover the default."""
    return classify_client_exception(
        exc,
        is_cancellation=cancellation,
        rpc_error=rpc,
        cancel_sent=cancel_sent,
        transport_closed=closed,
        keep_message=keep_message,
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
    assert outcome == CallOutcome.failed("connection_closed", "ClosedResourceError")


@pytest.mark.parametrize(
    "exc", [RuntimeError("Invalid structured content: secret"), ValueError("x"), KeyboardInterrupt()]
)
def test_other_exceptions_record_only_the_class(exc: BaseException) -> None:
    outcome = classify(exc)
    assert outcome.outcome is ToolOutcome.FAILED
    assert outcome.error_type == type(exc).__qualname__
    assert outcome.description is None  # messages can quote tool output
    assert outcome.rpc_code is None


# --- server side -------------------------------------------------------------------------------

CALLER_FAULTS = (-32700, -32600, -32601, -32602, -32002)


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
        (
            {"rpc_error": RpcError(-32042, "elicit first")},
            CallOutcome.failed("-32042", "elicit first", rpc_code=-32042),
        ),
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
def test_server_calls(facts: dict[str, object], expected: CallOutcome) -> None:
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
    outcome = classify_server_call(rpc_error=RpcError(code, "your request was wrong"))
    assert outcome.outcome is ToolOutcome.FAILED
    assert outcome.error_type == str(code)
    assert outcome.rpc_code == str(code)
    assert outcome.is_error is False  # span status stays UNSET
    assert outcome.description is None
