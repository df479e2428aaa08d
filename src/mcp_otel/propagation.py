"""Reading the sender's trace context from a request's ``params._meta``: the configured (global)
propagator's fields, and what it extracts from them.

Every request a receiver handles goes through here, and the API's W3C ``traceparent`` parser is
the largest single cost of it (a regular expression search, the match's groups, its
checks: ~10 µs per request on this project's benchmark machine). So when the global propagator
is the SDK's default (``tracecontext``, optionally with ``baggage``) and the carrier is a lone
``traceparent`` in the canonical version-00 form, that form is read directly, with the same
result as the propagator (tested against it); anything else goes to the propagator itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.context import Context
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from mcp_otel.adapters.common import meta_carrier

TRACEPARENT = "traceparent"
# W3C Trace Context, version 00: exactly version-trace_id-parent_id-flags, lowercase hex.
_CANONICAL_TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_INVALID_TRACE_ID = "0" * 32
_INVALID_SPAN_ID = "0" * 16
# The propagators whose extraction from a lone canonical traceparent is read directly.
_DEFAULT_SHAPES = (
    (TraceContextTextMapPropagator,),
    (TraceContextTextMapPropagator, W3CBaggagePropagator),
)


class ContextReader:
    """The global propagator's fields and extraction, read again only when it is replaced."""

    def __init__(self) -> None:
        self._textmap: Any = None
        self._fields: frozenset[str] = frozenset()
        self._direct = False  # the default propagators: a lone canonical traceparent is read directly

    def read(self, meta: Any) -> Context | None:
        """What the global propagator extracts from ``meta`` (its own fields only, bounded) into an
        empty context; ``None`` when none of its fields came."""
        self._refresh()
        carrier = meta_carrier(meta, self._fields)
        return self._extract(carrier) if carrier else None

    def _extract(self, carrier: Mapping[str, str]) -> Context:
        if self._direct and len(carrier) == 1:
            header = carrier.get(TRACEPARENT)
            found = _CANONICAL_TRACEPARENT.fullmatch(header) if isinstance(header, str) else None
            if found is not None:
                trace_id, span_id, flags = found.groups()
                if trace_id == _INVALID_TRACE_ID or span_id == _INVALID_SPAN_ID:
                    return Context()
                span_context = trace.SpanContext(
                    trace_id=int(trace_id, 16),
                    span_id=int(span_id, 16),
                    is_remote=True,
                    trace_flags=trace.TraceFlags(int(flags, 16)),
                )
                return trace.set_span_in_context(trace.NonRecordingSpan(span_context), Context())
        return propagate.extract(carrier, context=Context())

    def _refresh(self) -> None:
        """Its fields (a composite builds the set anew on every read) and whether it is the
        default, computed again only when the global propagator is replaced."""
        textmap = propagate.get_global_textmap()
        if textmap is not self._textmap:
            self._fields = frozenset(textmap.fields)
            self._direct = _is_default(textmap)
            self._textmap = textmap


def _is_default(textmap: Any) -> bool:
    """The SDK's default propagators (``OTEL_PROPAGATORS`` unset: tracecontext and baggage), exact
    types only: a subclass or any other propagator is always asked itself."""
    if type(textmap) is not CompositePropagator:
        return False
    inner = getattr(textmap, "_propagators", None)  # the API keeps them here; absent: not known
    return isinstance(inner, list) and tuple(type(p) for p in inner) in _DEFAULT_SHAPES
