"""The outcome model: one classified outcome per request, and the only function that writes it to a span.

``CallOutcome`` is the value every classifier returns and every consumer (span, metrics) reads.
Its constructor refuses combinations that would make a span disagree with itself
(docs/decisions.md rule 4), and :func:`finish_span` is the one place that sets span status, ``error.type``,
``rpc.response.status_code``, ``mcp.request.outcome`` and ``mcp.request.cancel.reason`` (on
``tools/call`` also ``tool.outcome`` and ``tool.cancel.reason``, the same values). A request
answered with no result yet has no outcome: :func:`finish_unfinished` writes what it was
answered with (an :class:`Unfinished`) instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from opentelemetry.trace import Span, Status, StatusCode

from mcp_otel.semconv import (
    ERROR_TYPE,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_OUTCOME,
    MCP_REQUEST_RESULT_TYPE,
    METHOD_TOOLS_CALL,
    RPC_RESPONSE_STATUS_CODE,
    TOOL_CANCEL_REASON,
    TOOL_OUTCOME,
    CancelReason,
    Outcome,
    ResultType,
)

# Status descriptions come from peers (JSON-RPC error messages); keep them bounded.
MAX_DESCRIPTION_LENGTH = 512


def bounded(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marking the cut so a reader knows it happened."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


@dataclass(frozen=True)
class CallOutcome:
    """A classified outcome. Build it with :meth:`ok`, :meth:`failed` or :meth:`cancelled`."""

    outcome: Outcome
    error_type: str | None = None
    # Only codes a peer put on the wire; SDK-local codes never go here.
    rpc_code: str | None = None
    description: str | None = None
    cancel_reason: CancelReason | None = None
    # Server side: the caller sent a request the server could not serve (-32602 ..., or an HTTP
    # 4xx refusal). Still a failed call, but not the server's failure: status UNSET and no
    # error.type (semconv: error.type "if and only if the operation fails"); the code says why.
    caller_fault: bool = False
    # The HTTP status of a request refused before JSON-RPC answered it (the front end writes it
    # on the span as http.response.status_code): a caller fault's evidence when no code came.
    http_status: int | None = None
    # Whether the span status is ERROR: failures the span's owner is answerable for. A cancel is
    # not an error; neither, on a server, is a request the caller got wrong. (Set once, read for
    # every span.)
    is_error: bool = field(init=False, repr=False, compare=False)
    # Its attributes on a metric point and on a span, for (other requests, tool calls): indexed
    # by "is a tool call", built once, read for every request (shared: not to be changed). The
    # point has the span's strings, the cancel reason and the peer's error code included
    # (dashboards show a person's declines apart from other cancels, and keep callers' faults out
    # of server-fault rates by that code).
    point_attributes: tuple[Mapping[str, str], Mapping[str, str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.outcome is Outcome.FAILED:
            if self.cancel_reason is not None:
                raise ValueError("a failed outcome has no cancel reason")
            if self.caller_fault:
                if self.error_type is not None or self.description is not None or not _blames(self):
                    raise ValueError(
                        "a caller-fault outcome names its code (JSON-RPC, or HTTP 4xx), no error.type or description"
                    )
            elif not self.error_type:
                raise ValueError("a failed outcome needs an error.type")
        else:
            if self.caller_fault:
                raise ValueError(f"a {self.outcome.value} outcome is not a caller fault")
            if self.error_type is not None or self.description is not None:
                raise ValueError(f"a {self.outcome.value} outcome has no error.type or description")
            if self.outcome is Outcome.OK and (self.cancel_reason or self.rpc_code):
                raise ValueError("an ok outcome has no cancel reason or error code")
            if self.outcome is Outcome.CANCELLED and self.cancel_reason is None:
                raise ValueError("a cancelled outcome needs a cancel reason")
        if self.http_status is not None and not self.caller_fault:
            raise ValueError("only a caller-fault outcome carries the HTTP status it was refused with")
        other, tool = (
            _point_attributes(self.outcome, self.error_type, self.cancel_reason, self.rpc_code, t)
            for t in (False, True)
        )
        object.__setattr__(self, "point_attributes", (other, tool))
        object.__setattr__(self, "is_error", self.outcome is Outcome.FAILED and not self.caller_fault)

    @classmethod
    def ok(cls) -> CallOutcome:
        return OK

    @classmethod
    def failed(cls, error_type: str, description: str | None = None, rpc_code: int | None = None) -> CallOutcome:
        return cls(
            Outcome.FAILED,
            error_type=error_type,
            rpc_code=None if rpc_code is None else str(rpc_code),
            # An empty message is no description (as in Go, where "" is none).
            description=bounded(description, MAX_DESCRIPTION_LENGTH) if description else None,
        )

    @classmethod
    def caller_fault_error(cls, code: int) -> CallOutcome:
        """A server's JSON-RPC answer that blames the request (semconv: not a server error, so no
        ``error.type``; the code in ``rpc.response.status_code``)."""
        return cls(Outcome.FAILED, rpc_code=str(code), caller_fault=True)

    @classmethod
    def caller_fault_rejection(cls, status: int) -> CallOutcome:
        """A server's HTTP refusal that blames the request (4xx: not a server error, as HTTP's
        conventions say of SERVER spans: no ``error.type``); no JSON-RPC code came."""
        return cls(Outcome.FAILED, caller_fault=True, http_status=status)

    @classmethod
    def cancelled(cls, reason: CancelReason) -> CallOutcome:
        return cls(Outcome.CANCELLED, cancel_reason=reason)


def _blames(outcome: CallOutcome) -> bool:
    """A caller fault says who blamed the request: a JSON-RPC code from the wire, or (refused
    before JSON-RPC) an HTTP 4xx status."""
    return outcome.rpc_code is not None or (outcome.http_status is not None and 400 <= outcome.http_status < 500)


@lru_cache(maxsize=512)
def _point_attributes(
    outcome: Outcome, error_type: str | None, cancel_reason: CancelReason | None, rpc_code: str | None, tool_call: bool
) -> Mapping[str, str]:
    """Built once per combination: every request's span and point needs them (hot path)."""
    attributes = {MCP_REQUEST_OUTCOME: outcome.value}
    if tool_call:
        attributes[TOOL_OUTCOME] = outcome.value
    if error_type is not None:
        attributes[ERROR_TYPE] = error_type
    if rpc_code is not None:
        attributes[RPC_RESPONSE_STATUS_CODE] = rpc_code
    if cancel_reason is not None:
        attributes[MCP_REQUEST_CANCEL_REASON] = cancel_reason.value
        if tool_call:
            attributes[TOOL_CANCEL_REASON] = cancel_reason.value
    return attributes


OK = CallOutcome(Outcome.OK)  # the outcome of most requests: one object, compared by identity


def finish_span(
    span: Span,
    outcome: CallOutcome,
    extra: Mapping[str, Any] | None = None,
    method: str = METHOD_TOOLS_CALL,
    end_time: int | None = None,
) -> None:
    """Write ``outcome`` (and any late ``extra`` attributes) onto the span of a ``method`` request
    and end it.

    The only writer of status and outcome attributes: ok and cancelled leave the status UNSET
    (instrumentations must not set OK), failed sets ERROR with the description.
    """
    attributes = outcome.point_attributes[method == METHOD_TOOLS_CALL]
    span.set_attributes({**attributes, **extra} if extra else attributes)
    if outcome.is_error:
        span.set_status(Status(StatusCode.ERROR, outcome.description))
    span.end(end_time)


@dataclass(frozen=True)
class Unfinished:
    """A request answered with no result yet by a JSON-RPC error that says so: a server that
    needs a person first (-32042, ``input_required``), a ``server/discover`` probe the client
    goes on from (``negotiation``). Its code is on the span (the conventions' conditionally
    required ``rpc.response.status_code``); it has no outcome, like every unfinished answer."""

    result_type: ResultType
    rpc_code: str


# How a request ended: an outcome, or an answer with no result yet (the protocol's ``resultType``
# of a result, or an error that says the request is not done).
Verdict = CallOutcome | ResultType | Unfinished


def finish_unfinished(
    span: Span, answer: ResultType | Unfinished, extra: Mapping[str, Any] | None = None, end_time: int | None = None
) -> None:
    """End the span of a request answered with no result yet (an input round, a task, a
    negotiation step): it states what it was answered with and no outcome (docs/decisions.md rule 1: the
    outcome stays tri-state, and a request that has not finished has none)."""
    attributes: dict[str, Any]
    if isinstance(answer, Unfinished):
        attributes = {MCP_REQUEST_RESULT_TYPE: answer.result_type.value, RPC_RESPONSE_STATUS_CODE: answer.rpc_code}
    else:
        attributes = {MCP_REQUEST_RESULT_TYPE: answer.value}
    if extra:
        attributes.update(extra)
    span.set_attributes(attributes)
    span.end(end_time)


def outcome_of_span(attributes: Mapping[str, Any], status_is_error: bool) -> Outcome | None:
    """The outcome a finished span states, or, for spans without an outcome attribute (other
    instrumentations, older versions), the one its status implies (docs/decisions.md rule 5). ``None`` for
    a request answered with no result yet (``mcp.request.result_type``): it has no outcome."""
    if attributes.get(MCP_REQUEST_RESULT_TYPE) is not None:
        return None
    for key in (MCP_REQUEST_OUTCOME, TOOL_OUTCOME):
        value = attributes.get(key)
        if value is not None and (outcome := _OUTCOMES.get(value)) is not None:
            return outcome
    return Outcome.FAILED if status_is_error else Outcome.OK


# Each outcome by its value and by itself (a dict lookup: ``mcp-otel report`` reads millions).
_OUTCOMES: dict[Any, Outcome] = {**{outcome.value: outcome for outcome in Outcome}, **{o: o for o in Outcome}}
