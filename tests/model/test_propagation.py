"""Trace context in ``params._meta``: the same context read as the global propagator's for every
carrier (the direct reading of a canonical traceparent included), the same fields written for
every span and baggage (the direct writing included), and any other propagator asked itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry import baggage, context, propagate, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.context import Context
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from mcp_otel.model import current as current_context
from mcp_otel.model import propagation
from mcp_otel.model.propagation import MetaPropagator

hex_digits = "0123456789abcdef"


def _hex(size: int) -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(hex_digits, min_size=size, max_size=size),
        st.just("0" * size),  # the invalid all-zero id
        st.text(hex_digits + "ABCDEF", min_size=size, max_size=size),  # uppercase: not W3C
        st.text(hex_digits, min_size=size - 1, max_size=size + 1),  # wrong length
    )


canonical = st.builds(
    lambda trace_id, span_id, flags: f"00-{trace_id}-{span_id}-{flags}",
    st.text(hex_digits, min_size=32, max_size=32),
    st.text(hex_digits, min_size=16, max_size=16),
    st.text(hex_digits, min_size=2, max_size=2),
)
traceparents = st.one_of(
    canonical,  # the form read directly: most carriers
    st.builds(
        lambda version, trace_id, span_id, flags, tail: f"{version}-{trace_id}-{span_id}-{flags}{tail}",
        st.sampled_from(["00", "01", "ff", "0g"]),
        _hex(32),
        _hex(16),
        st.sampled_from(["00", "01", "ff", "1"]),
        st.sampled_from(["", "-extra", " ", "\t", "x"]),
    ),
    st.text(max_size=60),
)
alone = st.builds(lambda traceparent: {"traceparent": traceparent}, traceparents)
with_others = st.builds(
    lambda traceparent, tracestate, entries: {
        "traceparent": traceparent,
        **({"tracestate": tracestate} if tracestate is not None else {}),
        **({"baggage": entries} if entries is not None else {}),
    },
    traceparents,
    st.one_of(st.none(), st.sampled_from(["vendor=value", "a=1,b=2", "bad state"])),
    st.one_of(st.none(), st.sampled_from(["user=alice", "k=v;p=1"])),
)
carriers = st.one_of(alone, with_others)


def _seen(context: Context) -> tuple[trace.SpanContext, Mapping[str, object]]:
    return trace.get_current_span(context).get_span_context(), baggage.get_all(context)


@contextmanager
def global_textmap_kept() -> Iterator[None]:
    """The global propagator as it was, whatever the block sets (hypothesis examples share one
    function-scoped fixture, so its tests restore it per example with this)."""
    previous = propagate.get_global_textmap()
    try:
        yield
    finally:
        propagate.set_global_textmap(previous)


@pytest.fixture
def textmap() -> Iterator[None]:
    with global_textmap_kept():
        yield


# The SDK's default propagators, both shapes: what MetaPropagator reads and writes directly.
default_propagators = pytest.mark.parametrize(
    "propagators",
    [[TraceContextTextMapPropagator(), W3CBaggagePropagator()], [TraceContextTextMapPropagator()]],
    ids=["tracecontext,baggage", "tracecontext"],
)


@default_propagators
@given(carrier=carriers)
def test_the_same_context_as_the_propagator(propagators: list[object], carrier: dict[str, str]) -> None:
    with global_textmap_kept():
        propagate.set_global_textmap(CompositePropagator(propagators))  # type: ignore[arg-type]
        assert _seen(MetaPropagator().extract(carrier) or Context()) == _seen(
            propagate.extract(carrier, context=Context())
        )


@pytest.mark.parametrize("made_as_its_tuple", [True, False], ids=["as-its-tuple", "by-its-constructor"])
def test_a_canonical_traceparent_is_read_exactly(
    textmap: None, made_as_its_tuple: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(propagation, "_SPAN_CONTEXT_IS_ITS_TUPLE", made_as_its_tuple)
    propagate.set_global_textmap(CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()]))
    carrier = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    extracted = MetaPropagator().extract(carrier)
    assert isinstance(extracted, Context)
    span = trace.get_current_span(extracted)
    assert span.get_span_context() == trace.SpanContext(
        trace_id=0x0AF7651916CD43DD8448EB211C80319C,
        span_id=0xB7AD6B7169203331,
        is_remote=True,
        trace_flags=trace.TraceFlags(1),
    )
    # The context holds the sender's span and nothing else, as the API would make it.
    assert extracted == trace.set_span_in_context(span, Context())


class _FixedTraceContext(TraceContextTextMapPropagator):
    """A subclass with its own extraction: it must be asked, never read around."""

    def extract(self, carrier: object, context: Context | None = None, getter: object = None) -> Context:  # type: ignore[override]
        span_context = trace.SpanContext(trace_id=7, span_id=9, is_remote=True)
        return trace.set_span_in_context(trace.NonRecordingSpan(span_context), context)

    def inject(self, carrier: object, context: Context | None = None, setter: object = None) -> None:  # type: ignore[override]
        carrier["traceparent"] = "fixed"  # type: ignore[index]


def test_another_propagator_is_asked_and_its_replacement_seen(textmap: None) -> None:
    reader = MetaPropagator()
    carrier = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    assert trace.get_current_span(reader.extract(carrier)).get_span_context().trace_id != 7
    assert baggage.get_all(reader.extract({"baggage": "user=alice"})) == {"user": "alice"}
    propagate.set_global_textmap(CompositePropagator([_FixedTraceContext()]))
    assert trace.get_current_span(reader.extract(carrier)).get_span_context().trace_id == 7
    propagate.set_global_textmap(_FixedTraceContext())
    assert trace.get_current_span(reader.extract(carrier)).get_span_context().span_id == 9
    assert reader.extract({"baggage": "user=alice"}) is None  # not a field of this propagator


span_contexts = st.builds(
    trace.SpanContext,
    trace_id=st.one_of(st.just(0), st.integers(1, 2**128 - 1), st.integers(1, 2**32)),
    span_id=st.one_of(st.just(0), st.integers(1, 2**64 - 1), st.integers(1, 2**16)),
    is_remote=st.booleans(),
    trace_flags=st.builds(trace.TraceFlags, st.integers(0, 255)),
    trace_state=st.one_of(
        st.just(trace.TraceState()),
        st.builds(trace.TraceState, st.just([("vendor", "value")])),
        st.builds(trace.TraceState, st.just([("a", "1"), ("b", "2")])),
    ),
)
baggages = st.one_of(st.just({}), st.just({"user": "alice"}), st.just({"k": "v", "p": "1"}))


@default_propagators
@given(span_context=span_contexts, entries=baggages)
def test_the_same_fields_written_as_the_propagator(
    propagators: list[object], span_context: trace.SpanContext, entries: dict[str, str]
) -> None:
    current = Context()
    for key, value in entries.items():
        current = baggage.set_baggage(key, value, current)
    with global_textmap_kept():
        propagate.set_global_textmap(CompositePropagator(propagators))  # type: ignore[arg-type]
        token = context.attach(current)
        try:
            span = trace.NonRecordingSpan(span_context)
            ours: dict[str, str] = {}
            MetaPropagator().inject(ours, span)
            expected: dict[str, str] = {}
            propagate.inject(expected, context=trace.set_span_in_context(span))
            assert ours == expected
        finally:
            context.detach(token)


def test_a_span_is_written_exactly(textmap: None) -> None:
    propagate.set_global_textmap(CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()]))
    span_context = trace.SpanContext(
        trace_id=0x0AF7651916CD43DD8448EB211C80319C,
        span_id=0xB7AD6B7169203331,
        is_remote=False,
        trace_flags=trace.TraceFlags(1),
        trace_state=trace.TraceState([("vendor", "value")]),
    )
    carrier: dict[str, str] = {"other": "kept"}
    MetaPropagator().inject(carrier, trace.NonRecordingSpan(span_context))
    assert carrier == {
        "other": "kept",
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "vendor=value",
    }
    empty: dict[str, str] = {}
    MetaPropagator().inject(empty, trace.INVALID_SPAN)
    assert empty == {}


def test_another_propagator_writes_itself(textmap: None) -> None:
    span = trace.NonRecordingSpan(trace.SpanContext(trace_id=5, span_id=6, is_remote=False))
    propagator = MetaPropagator()
    propagate.set_global_textmap(CompositePropagator([_FixedTraceContext(), W3CBaggagePropagator()]))
    written: dict[str, str] = {}
    propagator.inject(written, span)
    assert written == {"traceparent": "fixed"}
    propagate.set_global_textmap(CompositePropagator([W3CBaggagePropagator()]))  # no trace context at all
    token = context.attach(baggage.set_baggage("user", "alice"))
    try:
        written = {}
        propagator.inject(written, span)
        assert written == {"baggage": "user=alice"}
    finally:
        context.detach(token)


@pytest.mark.parametrize(
    "given_context",
    [
        Context(),
        baggage.set_baggage("gen_ai.conversation.id", "c-1", Context()),
        baggage.set_baggage("k", "v", baggage.set_baggage("user", "alice", Context())),
        context.set_value(current_context.BAGGAGE_KEY, "not a dict", Context()),
    ],
    ids=["none", "one", "two", "not-a-dict"],
)
def test_a_contexts_baggage_is_the_apis(given_context: Context) -> None:
    """Read directly (every request on both sides asks), a context's baggage is what the API's
    ``get_all`` says, given or current, and so is each value ``get_baggage`` reads."""
    assert dict(current_context.baggage_of(given_context)) == dict(baggage.get_all(given_context))
    token = context.attach(given_context)
    try:
        assert dict(current_context.baggage_of()) == dict(baggage.get_all())
        for key in ("gen_ai.conversation.id", "user", "missing"):
            assert current_context.baggage_of().get(key) == baggage.get_baggage(key)
    finally:
        context.detach(token)


_A_SPAN = trace.NonRecordingSpan(trace.SpanContext(1, 2, is_remote=False))


@pytest.mark.parametrize(
    "current",
    [
        Context(),
        trace.set_span_in_context(trace.NonRecordingSpan(trace.SpanContext(3, 4, is_remote=True)), Context()),
        baggage.set_baggage("gen_ai.conversation.id", "c-1", Context()),
        context.set_value(current_context.SPAN_KEY, "not a span", Context()),
    ],
    ids=["empty", "a-span", "baggage", "not-a-span"],
)
def test_the_current_span_and_a_spans_context_are_the_apis(current: Context) -> None:
    """Read and made directly (every request on both sides), the current span and the current
    context with a span in it are what the API's ``get_current_span`` and ``set_span_in_context``
    give, and attaching and resetting the API's variable directly is attach and detach."""
    token = current_context.CURRENT_CONTEXT.set(current)  # type: ignore[union-attr]
    try:
        assert context.get_current() is current
        assert current_context.current_span() is trace.get_current_span()
        made = current_context.in_span_context(_A_SPAN)
        assert type(made) is Context
        assert made == trace.set_span_in_context(_A_SPAN)
        assert context.get_current() is current  # made, not attached
    finally:
        current_context.CURRENT_CONTEXT.reset(token)  # type: ignore[union-attr]
    assert context.get_current() is not current
