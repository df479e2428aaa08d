"""The client-side scenario matrix: how each case is driven, and what its span must say.

A case drives one ``call_tool`` on a fresh session and returns what the caller observed, so the
same case runs with and without instrumentation and both observations can be compared.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import anyio
from opentelemetry.trace import StatusCode

from tests.harness import MCP_MAJOR, cancel_notification, read_timeout
from tests.servers.tools import RPC_ERROR_CODE

CANCEL_AFTER = 0.3


@dataclass(frozen=True)
class Expect:
    status: StatusCode
    outcome: str
    description: str | None = None
    error_type: str | None = None
    rpc_code: str | None = None
    cancel_reason: str | None = None


@dataclass(frozen=True)
class Observed:
    """What the caller saw: the returned object, the raised exception, or that it was cancelled."""

    returned: Any = None
    raised: BaseException | None = None
    cancelled: bool = False

    def comparable(self) -> Any:
        """A value equal between two runs iff the caller saw the same thing."""
        if self.cancelled:
            return "cancelled"
        if self.raised is not None:
            error = getattr(self.raised, "error", None)
            return (type(self.raised), str(self.raised), getattr(error, "code", None))
        return (type(self.returned), self.returned.model_dump())


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    drive: str  # call | timeout | scope_cancel | task_cancel | cancel_reply
    expect: Expect
    transports: tuple[str, ...] | None = None  # None: every transport
    majors: tuple[int, ...] = (1, 2)

    def applies(self, transport: str) -> bool:
        return MCP_MAJOR in self.majors and (self.transports is None or transport in self.transports)


ERROR = StatusCode.ERROR
UNSET = StatusCode.UNSET
CANCELLED = Expect(UNSET, "cancelled", cancel_reason="caller")
TIMEOUT_MESSAGE = (
    "Timed out while waiting for response to ClientRequest. Waited 0.3 seconds."
    if MCP_MAJOR == 1
    else "Request 'tools/call' timed out"
)


def crash_expectation(transport: str) -> Expect:
    """A handler's unexpected exception: the SDK answers code 0 (local-only code), or on mcp
    2.x's 2026-era direct path -32603 (a real JSON-RPC error). The server's message is not
    recorded (it is the tool's own text: test_privacy.py)."""
    if transport == "direct":
        return Expect(ERROR, "failed", None, "-32603", "-32603")
    return Expect(ERROR, "failed", None, "0")


def timeout_expectation(transport: str) -> Expect:
    message = "Timed out after 0.3s waiting for 'tools/call'" if transport == "direct" else TIMEOUT_MESSAGE
    return Expect(ERROR, "failed", message, "timeout")


CASES = (
    Case("ok", "ok", "call", Expect(UNSET, "ok")),
    Case("tool_error", "tool_error", "call", Expect(ERROR, "failed", None, "tool_error")),
    Case(
        "rpc_error",
        "rpc_error",
        "call",
        Expect(ERROR, "failed", None, str(RPC_ERROR_CODE), str(RPC_ERROR_CODE)),
    ),
    Case("crash", "crash", "call", Expect(ERROR, "failed")),  # expectation per transport
    Case("timeout", "slow", "timeout", Expect(ERROR, "failed")),  # expectation per transport
    Case(
        "connection_closed",
        "die",
        "call",
        Expect(ERROR, "failed", "Connection closed", "connection_closed"),
        transports=("memory", "stdio"),
    ),
    Case("other_exception", "bad_output", "call", Expect(ERROR, "failed", None, "RuntimeError")),
    Case("scope_cancel", "slow", "scope_cancel", CANCELLED),
    Case("task_cancel", "slow", "task_cancel", CANCELLED),
    Case("cancel_reply", "slow", "cancel_reply", CANCELLED, majors=(1,)),
)


def expectation(case: Case, transport: str) -> Expect:
    if case.id == "crash":
        return crash_expectation(transport)
    if case.id == "timeout":
        return timeout_expectation(transport)
    return case.expect


async def drive(session: Any, case: Case) -> Observed:
    arguments = {"seconds": 5} if case.tool == "slow" else {}
    if case.drive == "call":
        return await _call(session, case.tool, arguments)
    if case.drive == "timeout":
        return await _call(session, case.tool, arguments, read_timeout_seconds=read_timeout(CANCEL_AFTER))
    if case.drive == "scope_cancel":
        with anyio.move_on_after(CANCEL_AFTER) as scope:
            await session.call_tool(case.tool, arguments)
        assert scope.cancelled_caught
        return Observed(cancelled=True)
    if case.drive == "task_cancel":
        task = asyncio.ensure_future(session.call_tool(case.tool, arguments))
        await asyncio.sleep(CANCEL_AFTER)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return Observed(cancelled=True)
        raise AssertionError("the task was not cancelled")
    if case.drive == "cancel_reply":
        # This client sends notifications/cancelled for its own request while awaiting it; the
        # mcp 1.x server answers code 0 "Request cancelled".
        task = asyncio.ensure_future(_call(session, case.tool, arguments))
        await asyncio.sleep(CANCEL_AFTER)
        await session.send_notification(cancel_notification(session._request_id - 1))
        return await task
    raise ValueError(case.drive)


async def _call(session: Any, tool: str, arguments: dict[str, Any], **kwargs: Any) -> Observed:
    try:
        return Observed(returned=await session.call_tool(tool, arguments, **kwargs))
    except Exception as exc:
        return Observed(raised=exc)
