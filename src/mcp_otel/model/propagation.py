"""Trace context in a request's ``params._meta``: what the configured (global) propagator
injects for the sender's span, and what it extracts from the fields it reads.

Every request goes through here on both sides, and the API's W3C ``traceparent`` parser is the
largest single cost of it (a regular expression search, the match's groups, its checks: ~10 µs
per request on this project's benchmark machine). So when the global propagator is the SDK's
default (``tracecontext``, optionally with ``baggage``), the common forms are read and written
directly, with the same result as the propagator (tested against it): a lone ``traceparent`` in
the canonical version-00 form on the way in, a span's ``traceparent`` (and ``tracestate``) with
no baggage on the way out. Anything else goes to the propagator itself.
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
from opentelemetry.trace.span import DEFAULT_TRACE_STATE

from mcp_otel.model.current import BAGGAGE_KEY, CURRENT_CONTEXT, DIRECT_BAGGAGE, SPAN_KEY, baggage_of
from mcp_otel.model.messages import meta_carrier, meta_entries

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
# W3C Trace Context, version 00: exactly version-trace_id-parent_id-flags, lowercase hex.
_CANONICAL_TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_INVALID_TRACE_ID = "0" * 32
_INVALID_SPAN_ID = "0" * 16
_FLAGS = {f"{flags:02x}": trace.TraceFlags(flags) for flags in range(256)}
_FLAGS_TEXT = {flags: text for text, flags in _FLAGS.items()}  # formatting an int subclass is dear
_IS_VALID = 5  # a SpanContext's is_valid, read from its tuple (the property is a Python call)
# A SpanContext is the tuple (trace_id, span_id, is_remote, trace_flags, trace_state, is_valid).
_PROBE = (1, 2, True, trace.TraceFlags(1))
_SPAN_CONTEXT_IS_ITS_TUPLE = tuple(trace.SpanContext(*_PROBE)) == (*_PROBE, DEFAULT_TRACE_STATE, True)
_new_tuple = tuple.__new__
# The API keeps the global propagator in this module variable (get_global_textmap returns it):
# read directly where every request asks, the getter called if it ever moves.
_TEXTMAP_IN_MODULE = hasattr(propagate, "_HTTP_TEXT_FORMAT")
# The propagators whose extraction from a lone canonical traceparent, and whose injection of a
# span's context without baggage, are done directly.
_DEFAULT_SHAPES = (
    (TraceContextTextMapPropagator,),
    (TraceContextTextMapPropagator, W3CBaggagePropagator),
)


class MetaPropagator:
    """The global propagator's fields, injection and extraction; what it is, looked at again only
    when it is replaced."""

    def __init__(self) -> None:
        self._textmap: Any = None
        self._fields: frozenset[str] = frozenset()
        self._other_fields: tuple[str, ...] = ()  # the fields but traceparent
        self._direct = False  # the default propagators: their common forms are done directly
        self._baggage = False  # ... and they include baggage

    def inject(self, carrier: dict[str, str], span: trace.Span) -> None:
        """What the global propagator injects into ``carrier`` for ``span`` (with the current
        context's baggage)."""
        textmap = propagate._HTTP_TEXT_FORMAT if _TEXTMAP_IN_MODULE else propagate.get_global_textmap()
        if textmap is not self._textmap:
            self._refresh(textmap)
        if self._direct and not (
            self._baggage
            and (
                CURRENT_CONTEXT.get().get(BAGGAGE_KEY)  # type: ignore[union-attr]  # baggage_of, inline
                if DIRECT_BAGGAGE
                else baggage_of()
            )
        ):
            span_context = span.get_span_context()
            if span_context != trace.INVALID_SPAN_CONTEXT:  # the propagator's own test
                # A tuple (trace_id, span_id, is_remote, trace_flags, trace_state, is_valid): one
                # read, not four properties (tested against the propagator's own output).
                trace_id, span_id, _, flags, trace_state = span_context[:5]
                carrier[TRACEPARENT] = f"00-{trace_id:032x}-{span_id:016x}-{_FLAGS_TEXT[flags]}"
                if trace_state is not DEFAULT_TRACE_STATE and trace_state:  # the shared empty one: no call
                    carrier[TRACESTATE] = trace_state.to_header()
            return
        propagate.inject(carrier, context=trace.set_span_in_context(span))

    def extract(self, meta: Any) -> Context | None:
        """What the global propagator extracts from ``meta`` (its own fields only, bounded) into an
        empty context; ``None`` when none of its fields came."""
        found = self._extract(meta)
        return None if found is None else found[0]

    def remote(self, meta: Any) -> tuple[Context, trace.SpanContext] | None:
        """The sender's context in ``meta`` and its span's, when a valid span context came (a
        malformed carrier is none)."""
        try:
            found = self._extract(meta)
        except Exception:
            return None
        return found if found is not None and found[1][_IS_VALID] else None

    def _extract(self, meta: Any) -> tuple[Context, trace.SpanContext] | None:
        textmap = propagate._HTTP_TEXT_FORMAT if _TEXTMAP_IN_MODULE else propagate.get_global_textmap()
        if textmap is not self._textmap:
            self._refresh(textmap)
        # meta_entries, inline for mcp 1.x's RequestParams.Meta (its extras: every request's).
        extra = getattr(meta, "__pydantic_extra__", None)
        entries = extra if extra.__class__ is dict else meta_entries(meta)
        if not entries:
            return None
        if self._direct and (direct := self._lone_traceparent(entries)) is not None:
            return direct
        carrier = meta_carrier(entries, self._fields)
        if not carrier:
            return None
        context = propagate.extract(carrier, context=Context())
        return context, trace.get_current_span(context).get_span_context()

    def _lone_traceparent(self, entries: Mapping[str, Any]) -> tuple[Context, trace.SpanContext] | None:
        """A canonical ``traceparent`` and none of the propagator's other fields, read directly."""
        header = entries.get(TRACEPARENT)
        found = _CANONICAL_TRACEPARENT.fullmatch(header) if header.__class__ is str else None
        if found is None:
            return None
        for key in self._other_fields:
            if key in entries:
                return None
        trace_id, span_id, flags = found.groups()
        if trace_id == _INVALID_TRACE_ID or span_id == _INVALID_SPAN_ID:
            return Context(), trace.INVALID_SPAN_CONTEXT
        fields = (int(trace_id, 16), int(span_id, 16), True, _FLAGS[flags], DEFAULT_TRACE_STATE, True)
        # Made as SpanContext.__new__ makes it, without its checks (the match made them: both ids
        # in range and not zero): half its cost. By its constructor if its layout ever changes.
        span_context = (
            _new_tuple(trace.SpanContext, fields) if _SPAN_CONTEXT_IS_ITS_TUPLE else trace.SpanContext(*fields[:5])
        )
        span = trace.NonRecordingSpan(span_context)
        if SPAN_KEY is None:
            return trace.set_span_in_context(span, Context()), span_context
        return Context({SPAN_KEY: span}), span_context

    def _refresh(self, textmap: Any) -> None:
        """Learn the global propagator ``textmap`` (its callers ask only when it was replaced): its
        fields (a composite builds the set anew on every read) and whether it is a default."""
        self._fields = frozenset(textmap.fields)
        self._other_fields = tuple(self._fields - {TRACEPARENT})
        shape = _shape(textmap)
        self._direct = shape in _DEFAULT_SHAPES
        self._baggage = W3CBaggagePropagator in (shape or ())
        self._textmap = textmap


def _shape(textmap: Any) -> tuple[type, ...] | None:
    """The exact types a composite propagator is made of (``None``: not a composite, or its
    propagators not known): a subclass or any other propagator is always asked itself."""
    if type(textmap) is not CompositePropagator:
        return None
    inner = getattr(textmap, "_propagators", None)  # the API keeps them here; absent: not known
    return tuple(type(p) for p in inner) if isinstance(inner, list) else None
