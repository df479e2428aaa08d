"""Metrics: the operation-duration histograms of every request, recorded from the very outcome that
finished the span (one object, one string), for every outcome, cancelled included, and whether or
not the span was sampled; in the span's context, so that exemplars link a point to its request.
A request the proxy could not see the answer of has no point; it is counted
(``mcp_otel.proxy.unobserved_requests``).

Method, tool, prompt and server names come from peers, so their metric values are bounded: the
first ``max_metric_names`` distinct names are kept, later ones are recorded as ``_OTHER`` (spans
keep the real, length-bounded name); the methods the MCP specification defines always pass.
Session ids and request ids never become metric attributes; resource URIs only when the user
opts in (``metrics_resource_uri``), bounded the same way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.metrics import Meter
from opentelemetry.trace import Span, SpanKind

from mcp_otel.model.config import Settings
from mcp_otel.model.current import in_span_context
from mcp_otel.model.outcome import CallOutcome
from mcp_otel.semconv import (
    DURATION_BUCKETS,
    DURATION_UNIT,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROMPT_NAME,
    GEN_AI_TOOL_NAME,
    KNOWN_METHODS,
    MCP_CLIENT_OPERATION_DURATION,
    MCP_CLIENT_SESSION_DURATION,
    MCP_METHOD_NAME,
    MCP_OTEL_UNOBSERVED_REASON,
    MCP_OTEL_UNOBSERVED_REQUESTS,
    MCP_PROTOCOL_VERSION,
    MCP_RESOURCE_URI,
    MCP_SERVER_NAME,
    MCP_SERVER_OPERATION_DURATION,
    MCP_SERVER_SESSION_DURATION,
    METHOD_TOOLS_CALL,
    NETWORK_TRANSPORT,
    OTHER_VALUE,
    UnobservedReason,
)

# The span attributes a metric point copies (besides the outcome's).
_COPIED = (
    MCP_METHOD_NAME,
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_NAME,
    GEN_AI_PROMPT_NAME,
    MCP_SERVER_NAME,
    NETWORK_TRANSPORT,
    MCP_PROTOCOL_VERSION,
)


# Points' attributes kept (CallMetrics.record): starts over when full.
MAX_POINTS = 1024


class NameBound:
    """Admits the first ``limit`` distinct names; any later one reads ``_OTHER``."""

    def __init__(self, limit: int, always: frozenset[str] = frozenset()) -> None:
        self._limit = limit
        self._always = always  # admitted without counting against the limit
        self._names: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, name: str) -> str:
        if name in self._names or name in self._always:
            return name
        with self._lock:
            if name in self._names or len(self._names) < self._limit:
                self._names.add(name)
                return name
        return OTHER_VALUE


class CallMetrics:
    def __init__(self, meter: Meter, settings: Settings) -> None:
        def histogram(name: str, description: str) -> Any:
            return meter.create_histogram(
                name, unit=DURATION_UNIT, description=description, explicit_bucket_boundaries_advisory=DURATION_BUCKETS
            )

        self._client_durations = histogram(
            MCP_CLIENT_OPERATION_DURATION, "Duration of MCP requests as their sender saw them."
        )
        self._server_durations = histogram(
            MCP_SERVER_OPERATION_DURATION, "Duration of MCP requests as their receiver handled them."
        )
        self._session_durations = {
            SpanKind.CLIENT: histogram(MCP_CLIENT_SESSION_DURATION, "Duration of MCP sessions as clients saw them."),
            SpanKind.SERVER: histogram(MCP_SERVER_SESSION_DURATION, "Duration of MCP sessions as servers saw them."),
        }
        self._unobserved = meter.create_counter(
            MCP_OTEL_UNOBSERVED_REQUESTS, unit="{request}", description="Requests whose answer the proxy did not see."
        )
        self._copied = (*_COPIED, MCP_RESOURCE_URI) if settings.metrics_resource_uri else _COPIED
        # (id(request's attributes), id(outcome)) -> (them, it, the point's attributes): see record.
        self._points: dict[tuple[int, int], tuple[Mapping[str, Any], CallOutcome, Mapping[str, Any]]] = {}
        self._bounds = {
            MCP_METHOD_NAME: NameBound(settings.max_metric_names, KNOWN_METHODS),
            GEN_AI_TOOL_NAME: NameBound(settings.max_metric_names),
            GEN_AI_PROMPT_NAME: NameBound(settings.max_metric_names),
            MCP_SERVER_NAME: NameBound(settings.max_metric_names),
            MCP_RESOURCE_URI: NameBound(settings.max_metric_names),
        }

    def attributes(self, span_attributes: Mapping[str, Any]) -> dict[str, Any]:
        """The metric attributes of a request, from its span's (names bounded)."""
        attributes = {key: span_attributes[key] for key in self._copied if key in span_attributes}
        for key, bound in self._bounds.items():
            if key in attributes:
                attributes[key] = bound(attributes[key])
        return attributes

    def record(
        self,
        kind: SpanKind,
        started: float,
        attributes: Mapping[str, Any],
        span: Span,
        outcome: CallOutcome,
        context: Context | None = None,
    ) -> None:
        """Record one request: ``started`` is its ``time.perf_counter()`` at start, ``span`` its
        span. The point is recorded in the span's context, so that an exemplar (the SDK's default
        filter keeps one for a sampled span) links it to its own request, not to whatever span is
        current when it ends (the caller's, or none): ``context``, one holding ``span`` already
        (the one it was current in: an exemplar reads only the span), else one made now."""
        # A point's attributes are a pure function of the request's (shared by alike requests) and
        # its outcome (most are the one OK): made once per pair, then found by identity (a merge
        # costs more than the lookup). Each entry holds both, so neither id can be reused.
        key = (id(attributes), id(outcome))
        found = self._points.get(key)
        if found is not None and found[0] is attributes and found[1] is outcome:
            point = found[2]
        else:
            method = attributes.get(MCP_METHOD_NAME, METHOD_TOOLS_CALL)
            point = {**attributes, **outcome.point_attributes[method == METHOD_TOOLS_CALL]}
            if len(self._points) >= MAX_POINTS:
                self._points.clear()
            self._points[key] = (attributes, outcome, point)
        # Told apart by identity: an enum's hash is a Python call, and this runs for every request.
        durations = self._client_durations if kind is SpanKind.CLIENT else self._server_durations
        if context is None:
            context = in_span_context(span)
        durations.record(time.perf_counter() - started, point, context=context)

    def record_unobserved(self, attributes: Mapping[str, Any], reason: UnobservedReason) -> None:
        """Count one request whose answer was not seen (it has no duration point)."""
        self._unobserved.add(1, {**attributes, MCP_OTEL_UNOBSERVED_REASON: reason.value})

    def record_session(self, kind: SpanKind, seconds: float, attributes: Mapping[str, Any]) -> None:
        """Record one session that lasted ``seconds``."""
        self._session_durations[kind].record(seconds, attributes)
