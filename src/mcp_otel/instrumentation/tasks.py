"""Tool calls answered with a task: the call's CLIENT span stays open while this client follows
the task, and ends with the task's terminal outcome.

A ``tools/call`` answered with a task (MCP 2025-11-25 ``params.task``, mcp 1.x's experimental
``session.experimental`` API) has not finished, so it is not ``ok``. While the client follows the
task (``tasks/get`` polls, ``tasks/result``, ``tasks/cancel``; each also a request with its own
span), their answers decide the call:

* ``tasks/result`` answered: the result's outcome (``isError`` is a tool error), or its error's;
* ``tasks/get`` says ``failed``: failed, ``error.type = task_failed``;
* ``tasks/get`` or ``tasks/cancel`` says ``cancelled``: cancelled, reason ``caller`` when this
  client cancelled it (``tasks/cancel``), else ``client`` (a client cancelled it elsewhere);
* the session closes first: a task seen ``completed`` is ok (its result was never read, so an
  ``isError`` is unknown); any other ends as a task creation with no outcome
  (``mcp.request.result_type = task``), as does a task answer that cannot be followed (mcp 2.x
  has no task runtime). Nothing is kept past the session.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

from mcp_otel.model import messages
from mcp_otel.model.classify import classify_client_exception, classify_client_result
from mcp_otel.model.fields import field
from mcp_otel.model.outcome import CallOutcome, Verdict
from mcp_otel.semconv import METHOD_TASKS_CANCEL, METHOD_TASKS_RESULT, CancelReason, ErrorType, ResultType

# Task.status values (MCP 2025-11-25 tasks) that end a task.
TASK_FAILED = "failed"
TASK_CANCELLED = "cancelled"
TASK_COMPLETED = "completed"


class TaskCall(Protocol):
    """What the follower needs of a client call (``client._ClientCall``)."""

    session: Any
    method: str
    task_id: str | None


Finish = Callable[[Any, Callable[[], "Verdict"]], None]


class _Followed:
    __slots__ = ("call", "cancel_sent", "completed")

    def __init__(self, call: Any) -> None:
        self.call = call
        self.completed = False
        self.cancel_sent = False


class TaskFollower:
    def __init__(self, finish: Finish) -> None:
        self._finish = finish
        # (id(session), task id) -> the tools/call answered with that task.
        self._followed: dict[tuple[int, str], _Followed] = {}

    def follows(self, call: TaskCall, result: Any) -> bool:
        """Whether ``call`` was answered with a task this client can follow (then it is kept)."""
        task_id = messages.task_id_of(result)
        if task_id is None or not messages.is_client_session(call.session):
            return False
        self._followed[(id(call.session), task_id)] = _Followed(call)
        return True

    def learn(self, request: TaskCall, result: Any, exc: BaseException | None) -> None:
        """A ``tasks/*`` request about a followed task was answered (``result``) or raised."""
        followed = self._followed.get((id(request.session), request.task_id or ""))
        if followed is None:
            return
        if request.method == METHOD_TASKS_RESULT:
            if exc is not None and messages.is_cancellation(exc):
                return  # the caller stopped waiting for the result, not the task
            self._end(request, followed, lambda: _result_outcome(result, exc))
            return
        if exc is not None:
            return
        status = field(result, "status")
        if request.method == METHOD_TASKS_CANCEL:
            followed.cancel_sent = True
        if status == TASK_FAILED:
            self._end(request, followed, lambda: CallOutcome.failed(ErrorType.TASK_FAILED))
        elif status == TASK_CANCELLED:
            reason = CancelReason.CALLER if followed.cancel_sent else CancelReason.CLIENT
            self._end(request, followed, lambda: CallOutcome.cancelled(reason))
        elif status == TASK_COMPLETED:
            followed.completed = True

    def session_closed(self, session: Any) -> None:
        for key in [key for key in self._followed if key[0] == id(session)]:
            followed = self._followed.pop(key)
            outcome: Verdict = CallOutcome.ok() if followed.completed else ResultType.TASK
            self._finish(followed.call, partial(_same, outcome))

    def _end(self, request: TaskCall, followed: _Followed, outcome: Callable[[], Verdict]) -> None:
        self._followed.pop((id(request.session), request.task_id or ""), None)
        self._finish(followed.call, outcome)


def _same(outcome: Verdict) -> Verdict:
    return outcome


def _result_outcome(result: Any, exc: BaseException | None) -> Verdict:
    if exc is None:
        return classify_client_result(result)
    return classify_client_exception(
        exc,
        is_cancellation=False,
        rpc_error=messages.rpc_error_of(exc),
        cancel_sent=False,
        transport_closed=messages.is_transport_closed(exc),
    )
