"""The OpenTelemetry API's current context, read and set directly where every request passes.

The API's ``get_current``, ``attach``, ``detach``, ``set_span_in_context`` and ``baggage.get_all``
are two to four Python calls each (~0.9k instructions under cachegrind), and each request needs
several on each side. When the API keeps the current context in its default runtime context (a
``ContextVar``), it is read and set here directly, with the same result (held to the API's by
``tests/model/test_propagation.py``); with any other runtime context, or if the API's keys move,
the API's own functions are called.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from opentelemetry import baggage, trace
from opentelemetry import context as otel_context
from opentelemetry.context import Context
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext

# The key the API keeps a context's span under: a context holding only the sender's span is made
# at once (set_span_in_context copies an empty context through two calls); the API's own function
# if the key moved.
SPAN_KEY: Any = getattr(getattr(trace, "propagation", None), "_SPAN_KEY", None)


# A context's baggage, read as ``baggage.get_all`` does but without its four calls and the
# read-only copy it makes (every request is asked, on both sides); the API's own function if its
# key moved.
BAGGAGE_KEY: Any = getattr(baggage, "_BAGGAGE_KEY", None)
_NO_BAGGAGE: Mapping[str, object] = {}


# The API's current context as its default runtime context keeps it (a ContextVar), or ``None``
# when another is configured. Read and set directly where every request passes: the API's
# get_current, attach and detach are two Python calls each (~0.9k instructions under cachegrind).
_RUNTIME: Any = getattr(otel_context, "_RUNTIME_CONTEXT", None)
CURRENT_CONTEXT: ContextVar[Context] | None = (
    _RUNTIME._current_context if type(_RUNTIME) is ContextVarsRuntimeContext else None
)


def in_span_context(span: trace.Span) -> Context:
    """The current context with ``span`` as its span: the API's ``set_span_in_context(span)``,
    without its three Python calls (every request makes a context for its span on each side,
    and one for its point)."""
    if CURRENT_CONTEXT is None or SPAN_KEY is None:
        return trace.set_span_in_context(span)
    values = CURRENT_CONTEXT.get().copy()
    values[SPAN_KEY] = span
    return Context(values)


def current_span() -> trace.Span:
    """The current context's span, or ``INVALID_SPAN``: the API's ``get_current_span()``, without
    its three Python calls when the context has none (most requests a server handles)."""
    if CURRENT_CONTEXT is None or SPAN_KEY is None:
        return trace.get_current_span()
    span = CURRENT_CONTEXT.get().get(SPAN_KEY)
    return trace.INVALID_SPAN if span is None else trace.get_current_span()


# A context's baggage can be read where every request asks, inline, as baggage_of reads it:
# ``(CURRENT_CONTEXT.get() if context is None else context).get(BAGGAGE_KEY)``, a dict or none.
DIRECT_BAGGAGE = CURRENT_CONTEXT is not None and BAGGAGE_KEY is not None


def baggage_of(context: Context | None = None) -> Mapping[str, object]:
    """The baggage of ``context`` (default: the current one), empty when it has none."""
    if BAGGAGE_KEY is None:
        return baggage.get_all(context)
    if context is None:
        context = otel_context.get_current() if CURRENT_CONTEXT is None else CURRENT_CONTEXT.get()
    found = context.get(BAGGAGE_KEY)
    return found if isinstance(found, dict) else _NO_BAGGAGE
