"""The request lifecycle every front end shares: the mcp 1.x and 2.x patches and the wire.

A request is opened on one side (its CLIENT or SERVER span started, its clock running) and
finished once: classified, its outcome written onto its span by
:func:`mcp_otel.model.outcome.finish_span`, and that same outcome recorded as its one metric point. A
request answered with no result yet (an input round, a task) gets neither an outcome nor a point.
What a request learns in between (its id, its answer, a cancel, a peer hanging up) each front end
reads from its own source; what happens to every request, whatever its source, happens here. A
request whose answer its front end cannot see (the wire's, on a stream the proxy does not hold)
is finished unobserved: no span exported, no point, a count.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind, Tracer

from mcp_otel.model.attributes import Request, server_identity
from mcp_otel.model.classify import RpcError
from mcp_otel.model.current import BAGGAGE_KEY, CURRENT_CONTEXT, DIRECT_BAGGAGE, baggage_of
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.model.outcome import Unfinished, Verdict, bounded, finish_span, finish_unfinished
from mcp_otel.model.safety import report_once
from mcp_otel.semconv import (
    GEN_AI_CONVERSATION_ID,
    MCP_SERVER_NAME,
    METHOD_SERVER_DISCOVER,
    NEGOTIATION_CODES,
    ResultType,
    UnobservedReason,
)

# A baggage value is the application's (or, received, a peer's): bounded like a name.
MAX_CONVERSATION_ID = 256

# How a request ended, asked once, when it is finished: a classifier, called with the facts it is
# given (Lifecycle.finish), or with its facts bound.
Classify = Callable[..., Verdict]


class Call:
    """One request in flight on one side, opened by :meth:`Lifecycle.open` (which sets these
    fields). Front ends add what their source tells: subclasses that declare their own fields
    with class defaults, not in a constructor (making a call is then one C call, no Python
    frame: a request's record is made on every request, on both sides)."""

    __slots__ = ("context", "finished", "kind", "method", "metric_attributes", "span", "started")

    kind: SpanKind
    method: str
    span: Span
    metric_attributes: Mapping[str, Any]  # shared with alike requests: read-only
    started: float  # time.perf_counter() at open
    finished: bool
    # The context its span was made current in (its side sets it, if any): its point's too.
    context: Context | None


C = TypeVar("C", bound=Call)


def unnamed_negotiation(call: Call, rpc_error: RpcError | None) -> bool:
    """A ``server/discover`` probe the server refused (a version negotiation step), its span not
    naming the server yet: the handshake that follows will."""
    return (
        call.method == METHOD_SERVER_DISCOVER
        and rpc_error is not None
        and rpc_error.code in NEGOTIATION_CODES
        and MCP_SERVER_NAME not in call.metric_attributes
    )


class Answered:
    """A request answered whose span is written later, once what it lacks is learnt (a refused
    probe's server, named by the handshake after it): :meth:`Lifecycle.finish`'s arguments, and
    when its answer came."""

    __slots__ = ("answered", "at", "call", "classify", "facts", "late")

    def __init__(self, call: Call, classify: Classify, late: dict[str, Any], facts: tuple[Any, ...]) -> None:
        self.call, self.classify, self.late, self.facts = call, classify, late, facts
        self.at = time.time_ns()
        self.answered = time.perf_counter()

    def finish(self, lifecycle: Lifecycle, learnt: Mapping[str, Any] | None = None) -> None:
        """Finish it as answered, at the time it was (its span's end, its point's duration), with
        the server's identity ``learnt``."""
        if learnt:
            self.late.update(server_identity(learnt))
        self.call.started += time.perf_counter() - self.answered  # the wait is no part of it
        lifecycle.finish(self.call, self.classify, self.late, self.facts, end_time=self.at)


class Lifecycle:
    def __init__(self, tracer: Tracer, metrics: CallMetrics) -> None:
        self._tracer = tracer
        self._metrics = metrics

    def open(
        self,
        call_type: type[C],
        kind: SpanKind,
        request: Request,
        attributes: Mapping[str, Any],
        metric_attributes: Mapping[str, Any] | None = None,
        *,
        parent: Context | None = None,
        links: Sequence[Link] | None = None,
    ) -> C:
        """Start the span of ``request`` on side ``kind``, all its attributes at once (each later
        ``set_attributes`` costs the SDK a lock and a copy). ``metric_attributes``: ``None`` to
        derive them from ``attributes``; ``parent``: the sender's context (default: the current
        one). The conversation the request belongs to (``gen_ai.conversation.id`` in the
        context's baggage: the sender's own, or what came in ``_meta``) goes on its span only."""
        name = request.name or request.span_name()  # made with the request (no call), or now
        if metric_attributes is None:
            metric_attributes = self._metrics.attributes(attributes)
        if DIRECT_BAGGAGE:  # baggage_of, inline (every request)
            bag = (CURRENT_CONTEXT.get() if parent is None else parent).get(BAGGAGE_KEY)  # type: ignore[union-attr]
            conversing = bag.__class__ is dict and GEN_AI_CONVERSATION_ID in bag
        else:
            conversing = GEN_AI_CONVERSATION_ID in baggage_of(parent)
        if conversing:  # rare: no call more for most requests
            attributes = self._in_conversation(attributes, parent)
        # By position, in the API's order (name, context, kind, attributes, links): keywords are
        # matched to parameters by name, on every request.
        span = self._tracer.start_span(name, parent, kind, attributes, links)
        call = call_type()
        call.kind, call.method, call.span, call.finished = kind, request.method, span, False
        call.metric_attributes, call.context = metric_attributes, None
        call.started = time.perf_counter()
        return call

    def notification(
        self,
        kind: SpanKind,
        request: Request,
        attributes: Mapping[str, Any],
        *,
        parent: Context | None = None,
        links: Sequence[Link] | None = None,
    ) -> Span:
        """Start the span of a notification sent (CLIENT) or received (SERVER); its caller ends
        it. A notification has no answer: no outcome, no duration point, only its span."""
        return self._tracer.start_span(
            request.name or request.span_name(),
            context=parent,
            kind=kind,
            attributes=self._in_conversation(attributes, parent),
            links=links,
        )

    @staticmethod
    def _in_conversation(attributes: Mapping[str, Any], parent: Context | None) -> Mapping[str, Any]:
        """``attributes`` with the conversation in the context's baggage (``gen_ai.conversation.id``:
        the sender's own, or what came in ``_meta``), if any."""
        conversation = baggage_of(parent).get(GEN_AI_CONVERSATION_ID)
        if conversation is None:
            return attributes
        # Rare: attributes are shared, so a copy.
        return {**attributes, GEN_AI_CONVERSATION_ID: bounded(str(conversation), MAX_CONVERSATION_ID)}

    def finish(
        self,
        call: Call,
        classify: Classify,
        late: Mapping[str, Any] | None = None,
        facts: tuple[Any, ...] = (),
        end_time: int | None = None,
        verdict: Verdict | None = None,
    ) -> None:
        """Classify ``call`` once (``classify(*facts)``: no ``partial`` per request, which costs
        about three plain calls; not asked when its side gives the ``verdict`` already), write the
        outcome (and ``late`` attributes, learnt since it opened) onto its span and end it (at
        ``end_time``, nanoseconds since the epoch, for a request answered earlier than it is
        written; else now), then record the same outcome as its point. A second finish changes
        nothing. Fails open: whatever fails here, the span is ended and the failure is logged once."""
        if call.finished:
            return
        call.finished = True
        span = call.span
        try:
            outcome = classify(*facts) if verdict is None else verdict
        except Exception as exc:
            report_once("could not classify a call", exc)
            span.end()
            return
        if isinstance(outcome, (ResultType, Unfinished)):
            try:
                finish_unfinished(span, outcome, late, end_time)
            except Exception as exc:
                report_once("could not finish a span", exc)
                span.end()
            return
        try:
            finish_span(span, outcome, late, call.method, end_time)
        except Exception as exc:
            report_once("could not finish a span", exc)
            span.end()
        try:
            self._metrics.record(call.kind, call.started, call.metric_attributes, span, outcome, call.context)
        except Exception as exc:
            report_once("could not record call metrics", exc)

    def unobserved(self, call: Call, reason: UnobservedReason) -> None:
        """``call``'s answer cannot be seen here (rule: no outcome that was not seen): its span is
        never ended, so never exported, and it has no duration point; it is counted by ``reason``.
        Finished all the same: nothing said of it later changes that."""
        if call.finished:
            return
        call.finished = True
        try:
            self._metrics.record_unobserved(call.metric_attributes, reason)
        except Exception as exc:
            report_once("could not count an unobserved call", exc)

    def relearn(self, call: Call, attributes: Mapping[str, Any]) -> None:
        """The request's point says what was learnt of it since it opened (the server's name in
        the handshake's answer)."""
        call.metric_attributes = self._metrics.attributes({**attributes, **call.metric_attributes})
