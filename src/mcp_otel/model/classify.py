"""Pure classification: what a request returned or raised -> one :class:`CallOutcome` (the same
rules for every method; only a tool call's result can carry ``isError``).

No OpenTelemetry and no MCP SDK in here: the patches extract facts (the SDK's error code, whether
the exception is the running async library's cancellation, whether this client cancelled the
request) and these functions decide. That keeps every rule in one table, unit tested
exhaustively, and documented in docs/outcomes.md; spec/verdicts.json holds its cases as data, which
the TypeScript and Go classifiers' tests run too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_otel.model.fields import field
from mcp_otel.model.outcome import OK, CallOutcome, Unfinished, Verdict
from mcp_otel.semconv import (
    CALLER_FAULT_CODES,
    DECLINING_ACTIONS,
    ELICITATION_ACTIONS,
    METHOD_ELICITATION_CREATE,
    METHOD_SAMPLING_CREATE_MESSAGE,
    METHOD_SERVER_DISCOVER,
    NEGOTIATION_CODES,
    URL_ELICITATION_REQUIRED_CODE,
    USER_REJECTED_CODE,
    CancelReason,
    ErrorType,
    ResultType,
)

# Codes the Python SDKs raise locally, or answer a cancel with. They are not a server's verdict
# on the call, so they never go into rpc.response.status_code.
SDK_TIMEOUT_CODES = frozenset({408, -32001})  # mcp 1.x httpx.codes.REQUEST_TIMEOUT, mcp 2.x REQUEST_TIMEOUT
CONNECTION_CLOSED_CODE = -32000  # both majors: transport closed while waiting
V1_CANCEL_REPLY = (0, "Request cancelled")  # mcp 1.x server's answer to notifications/cancelled
REQUEST_CANCELLED_CODE = -32800  # mcp 2.x streamable HTTP (2025 era) answer to a cancel
SDK_LOCAL_CODES = SDK_TIMEOUT_CODES | {CONNECTION_CLOSED_CODE, 0, REQUEST_CANCELLED_CODE}


@dataclass(frozen=True)
class RpcError:
    """The code and message of the SDK's MCP error exception (mcp 1.x McpError, 2.x MCPError)."""

    code: int
    message: str

    def is_cancel_reply(self) -> bool:
        return (self.code, self.message) == V1_CANCEL_REPLY or self.code == REQUEST_CANCELLED_CODE


_DECLINED = CallOutcome.cancelled(CancelReason.INPUT_DECLINED)
# A closed stream says no more than its error.type (its class is no message).
_CONNECTION_CLOSED = CallOutcome.failed(ErrorType.CONNECTION_CLOSED)


def classify_client_result(
    result: object, *, answer_declined: bool = False, input_declined: bool = False
) -> CallOutcome | ResultType:
    """A returned result: not its result yet (:func:`unfinished`), or ``isError`` (1.x) /
    ``is_error`` (2.x) true: a tool error, unless the person declined an input request of the
    call (``input_declined``). ``answer_declined``: the result is itself a person's no (an
    elicitation declined or dismissed)."""
    if answer_declined:
        return _DECLINED
    answer = classify_answer(result)
    return _DECLINED if answer is _TOOL_ERROR and input_declined else answer


def unfinished(result: object) -> ResultType | None:
    """What a request was answered with when it is not its result yet (the protocol's
    ``resultType``: ``input_required``, ``task``; mcp 1.x's ``CreateTaskResult`` has a ``task``
    and no ``resultType``), else ``None``."""
    # Models first (what the SDKs return): an ABC check is a Python call, a dict check is not.
    fields = None if isinstance(result, dict) else getattr(result, "__dict__", None)
    if isinstance(fields, dict):
        tag = fields.get("result_type")
        task = fields.get("task")
    elif isinstance(result, Mapping):
        tag = result.get("resultType")
        task = result.get("task")
    else:
        return None
    if tag is None and task is None:  # a result: most answers
        return None
    return _unfinished_type(tag, task)


def _unfinished_type(tag: object, task: object) -> ResultType | None:
    """``unfinished`` of an answer's ``resultType`` and ``task`` (not both ``None``)."""
    # A str enum compares equal to its value (and ``.value`` is a Python-level descriptor call).
    if tag == ResultType.INPUT_REQUIRED:
        return ResultType.INPUT_REQUIRED
    if tag == ResultType.TASK or (tag is None and task is not None and _field(task, "taskId", "task_id")):
        return ResultType.TASK
    return None


_TOOL_ERROR = CallOutcome.failed(ErrorType.TOOL_ERROR)


def classify_answer(result: object) -> CallOutcome | ResultType:
    """A request answered with ``result``, where nothing but the answer decides (no exception,
    no cancel, no person's no, either side): not its result yet (:func:`unfinished`), a tool
    error (``isError``), or ok, with the answer's fields read once: most requests end here, on
    both sides (:func:`classify_client_result` and :func:`classify_server_call` end here too)."""
    fields = None if isinstance(result, dict) else getattr(result, "__dict__", None)
    if isinstance(fields, dict):
        tag, task, is_error = fields.get("result_type"), fields.get("task"), fields.get("is_error")
        if is_error is None:
            is_error = fields.get("isError")
    elif isinstance(result, Mapping):
        tag, task, is_error = result.get("resultType"), result.get("task"), result.get("isError")
    else:
        return _TOOL_ERROR if _is_error_result(result) else OK
    if (tag is not None or task is not None) and (result_type := _unfinished_type(tag, task)) is not None:
        return result_type
    return _TOOL_ERROR if is_error is True else OK


def is_declined_answer(method: str, answer: object = None, rpc_error: RpcError | None = None) -> bool:
    """Whether the answer to an input request is a person's no: an ``elicitation/create``
    answered ``decline`` or ``cancel``, a ``sampling/createMessage`` answered with the
    specification's "user rejected" error (code -1)."""
    if method == METHOD_ELICITATION_CREATE:
        return rpc_error is None and elicitation_action(answer) in DECLINING_ACTIONS
    if method == METHOD_SAMPLING_CREATE_MESSAGE:
        return rpc_error is not None and rpc_error.code == USER_REJECTED_CODE
    return False


def elicitation_action(answer: object) -> str | None:
    """``ElicitResult.action`` of an answer (model or wire dict), when it is one of the three."""
    action = _field(answer, "action")
    return action if action in ELICITATION_ACTIONS else None


def declined_in(input_responses: object) -> bool:
    """Whether a round's ``inputResponses`` (2026-07-28) hold an elicitation the person declined
    or dismissed (only the ``action`` of each response is read, never its content)."""
    if input_responses is None or not isinstance(input_responses, Mapping):
        return False
    return any(elicitation_action(response) in DECLINING_ACTIONS for response in input_responses.values())


def _field(value: object, *names: str) -> Any:
    """A field of a wire dict or a model, by its first name present."""
    for name in names:
        found = field(value, name)
        if found is not None:
            return found
    return None


def _is_error_result(result: object) -> bool:
    """``isError`` on a 1.x model, ``is_error`` on a 2.x model, ``"isError"`` in a wire dict."""
    if isinstance(result, dict):
        return result.get("isError") is True
    # Pydantic models keep their fields in __dict__; reading it avoids a failing getattr per call.
    fields = getattr(result, "__dict__", None)
    if not isinstance(fields, dict):
        fields = {"is_error": getattr(result, "is_error", None), "isError": getattr(result, "isError", None)}
    is_error = fields.get("is_error")
    return (is_error if is_error is not None else fields.get("isError")) is True


def classify_client_exception(
    exc: BaseException,
    *,
    is_cancellation: bool,
    rpc_error: RpcError | None,
    cancel_sent: bool,
    transport_closed: bool,
    keep_message: bool = False,
    answer_declined: bool = False,
    input_declined: bool = False,
    method: str = "",
) -> CallOutcome | Unfinished:
    """An exception that left the SDK's sending of a ``method`` request (``call_tool``,
    ``send_request``).

    ``is_cancellation``: ``exc`` is the running async library's cancellation exception (or
    ``GeneratorExit``: the awaiting coroutine was closed). ``rpc_error``: ``exc`` is the SDK's
    MCP error. ``cancel_sent``: this client sent ``notifications/cancelled`` for the request.
    ``transport_closed``: ``exc`` is the stream library's "the other end is gone" exception.
    ``keep_message``: a server's JSON-RPC error message may become the description (it is the
    tool's own text, recorded only when the user opted in to content capture).
    ``answer_declined``: the error is the person's rejection of this input request.
    ``input_declined``: the person declined an input request of this call.
    """
    if is_cancellation:
        return CallOutcome.cancelled(CancelReason.CALLER)
    if rpc_error is not None:
        return classify_client_error(
            rpc_error,
            cancel_sent=cancel_sent,
            keep_message=keep_message,
            answer_declined=answer_declined,
            input_declined=input_declined,
            method=method,
        )
    if answer_declined:
        return _DECLINED
    if transport_closed:
        return _CONNECTION_CLOSED
    # Other exceptions (e.g. the SDK's output-schema RuntimeError) can quote tool output in their
    # message, so only the class is recorded.
    return CallOutcome.failed(type(exc).__qualname__)


def classify_client_error(
    error: RpcError,
    *,
    cancel_sent: bool = False,
    keep_message: bool = False,
    answer_declined: bool = False,
    input_declined: bool = False,
    method: str = "",
) -> CallOutcome | Unfinished:
    """A JSON-RPC error answer (or the SDK's own error for a request) as its sender sees it: the
    SDK's timeout and closed connection, this client's cancel answered, the person's no, an
    answer that says the request is not done (:func:`not_done`), or a failure by its code. The
    arguments are :func:`classify_client_exception`'s."""
    if answer_declined:
        return _DECLINED
    if error.code in SDK_TIMEOUT_CODES:
        return CallOutcome.failed(ErrorType.TIMEOUT, error.message)
    if error.code == CONNECTION_CLOSED_CODE:
        return CallOutcome.failed(ErrorType.CONNECTION_CLOSED, error.message)
    if cancel_sent and error.is_cancel_reply():
        return CallOutcome.cancelled(CancelReason.CALLER)
    if input_declined:  # the server's error, or the SDK's of the refusal (2026-07-28 sampling)
        return _DECLINED
    return not_done(method, error.code) or _rpc_failure(error, keep_message)


def not_done(method: str, code: int) -> Unfinished | None:
    """An error answer that says the request has no result yet, on either side: the server needs
    a person to complete a URL elicitation first (-32042: the caller retries after), or a
    ``server/discover`` probe the server does not speak at that version (the client negotiates on:
    falls back to ``initialize``, or probes again at a version the server names). ``None`` for
    every other answer."""
    if code == URL_ELICITATION_REQUIRED_CODE:
        return Unfinished(ResultType.INPUT_REQUIRED, str(code))
    if method == METHOD_SERVER_DISCOVER and code in NEGOTIATION_CODES:
        return Unfinished(ResultType.NEGOTIATION, str(code))
    return None


def _rpc_failure(error: RpcError, keep_message: bool) -> CallOutcome:
    """A JSON-RPC error that failed the call, either side: its code is the error type; only a
    code from the wire is the response status code; its message (the tool's own text) only
    with content capture."""
    wire_code = None if error.code in SDK_LOCAL_CODES else error.code
    return CallOutcome.failed(str(error.code), error.message if keep_message else None, rpc_code=wire_code)


def classify_server_call(
    *,
    answer: object = None,
    rpc_error: RpcError | None = None,
    peer_cancelled: bool = False,
    is_cancellation: bool = False,
    transport_closed: bool = False,
    keep_message: bool = False,
    answer_declined: bool = False,
    input_declined: bool = False,
    method: str = "",
) -> Verdict:
    """How a ``method`` request ended on its receiver (a server's dispatch, or an agent's
    callback).

    ``answer``: the result the server answered. ``rpc_error``: the JSON-RPC error it answered
    (for a handler exception: the error the SDK turns it into). ``peer_cancelled``: the
    client's ``notifications/cancelled`` arrived before the answer was written, so no answer
    reached it. ``is_cancellation``: the handler was cancelled by the async library.
    ``transport_closed``: the client closed the connection, or on 2026-07-28 HTTP the
    request's stream, before the answer. ``keep_message``: the JSON-RPC error's message (the
    tool's own text) may become the description (content capture opted in).
    ``answer_declined``: an agent's answer to its server's input request is the person's no.
    ``input_declined``: the person declined an input request of this call (an elicitation this
    server sent while handling it, or one answered in the round's ``inputResponses``). An
    ``answer`` that is not its result yet is its :class:`ResultType` (:func:`unfinished`).
    """
    if peer_cancelled:
        return CallOutcome.cancelled(CancelReason.CLIENT)
    if is_cancellation:
        if transport_closed:
            return CallOutcome.cancelled(CancelReason.DISCONNECT)
        return CallOutcome.failed(ErrorType.SHUTDOWN, "server shut down with the call in flight")
    if answer_declined or (input_declined and (rpc_error is not None or _is_error_result(answer))):
        return _DECLINED
    if rpc_error is not None:
        if (unfinished_answer := not_done(method, rpc_error.code)) is not None:
            return unfinished_answer
        if rpc_error.code in CALLER_FAULT_CODES:
            return CallOutcome.caller_fault_error(rpc_error.code)
        return _rpc_failure(rpc_error, keep_message)
    return classify_answer(answer)


def classify_http_rejection(status: int, *, receiver: bool) -> CallOutcome:
    """A request the HTTP layer refused before JSON-RPC answered it (401, 403, 404 for an expired
    session, 5xx): ``error.type`` is the status. On its receiver (a SERVER span) a 4xx is the
    caller's fault, status UNSET, as the JSON-RPC caller faults are; a 5xx is the server's."""
    if receiver and 400 <= status < 500:
        return CallOutcome.caller_fault_rejection(status)
    return CallOutcome.failed(str(status))


def classify_callback_crash(exception_name: str, wire_code: int) -> CallOutcome:
    """An agent's callback raised while answering its server's request: the agent's own failure,
    whatever code the SDK answers for it (mcp 1.x answers -32602, a caller-fault code)."""
    return CallOutcome.failed(exception_name, rpc_code=wire_code)
