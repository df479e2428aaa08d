"""The configurations the benchmark compares, each set up in its own process.

Every variant that records telemetry uses the same SDK configuration: a BatchSpanProcessor with
an exporter that drops spans, and a periodic metric reader (hourly) with one that drops metrics,
so what is measured is the instrumentation, not an exporter.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

# The bench server's name and version, both majors (benchmarks.server serves under them): what
# the spans and points record, and so what the floors record too.
SERVER_NAME, SERVER_VERSION = "bench", "1.30.0"

# Variants per SDK major; "peers" are other instrumentations, run where they support the major.
VARIANTS = {
    1: [
        *("baseline", "floor", "floor-context", "floor-propagated", "mcp-otel", "mcp-otel-local"),
        *("traceloop", "logfire", "openinference"),
    ],
    2: ["baseline", "floor", "mcp-otel", "mcp-otel-local", "sdk-builtin"],
}
DESCRIPTIONS = {
    "baseline": "uninstrumented, no TracerProvider",
    "floor": "uninstrumented call + 2 SDK spans + 2 histogram records (each in its span's context) by hand, the "
    "attributes mcp-otel records on that transport",
    "floor-context": "the floor, its CLIENT span's context injected into params._meta and carried there by the SDK "
    "(not read at the server)",
    "floor-propagated": "the floor made by two wrapt patches (call_tool, the server's _handle_request) that carry the "
    "CLIENT span's context in params._meta and make the SERVER span its child, nothing else: the least an "
    "instrumentation that propagates does",
    "mcp-otel": "mcp-otel: CLIENT + SERVER span, 2 histogram records",
    "mcp-otel-local": "mcp-otel with OTEL_INSTRUMENTATION_MCP_PROPAGATE=false (no context on the wire)",
    "sdk-builtin": "mcp 2.x's own spans (SDK TracerProvider set)",
    "traceloop": "Traceloop opentelemetry-instrumentation-mcp",
    "logfire": "logfire.instrument_mcp() (sending off)",
    "openinference": "OpenInference MCP instrumentation (propagation only)",
}

Call = Callable[..., Awaitable[Any]]
# The peers are about tool calls: other requests are measured against the baseline and the floor
# (and mcp 2.x's own spans, which cover every request).
OTHER_OPERATION_VARIANTS = ("baseline", "floor", "mcp-otel", "sdk-builtin")


def variants_of(major: int, operation: str) -> list[str]:
    """The variants measured for ``operation`` on SDK ``major``."""
    return [v for v in VARIANTS[major] if operation == "tools/call" or v in OTHER_OPERATION_VARIANTS]


def sdk_providers(set_global: bool) -> tuple[Any, Any]:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class DropSpans(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    class DropMetrics(MetricExporter):
        def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
            pass

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(DropSpans()))
    reader = PeriodicExportingMetricReader(DropMetrics(), export_interval_millis=3_600_000)
    meter_provider = MeterProvider(metric_readers=[reader])
    if set_global:
        trace.set_tracer_provider(tracer_provider)
        metrics.set_meter_provider(meter_provider)
    return tracer_provider, meter_provider


def set_up(variant: str, transport: str, operation: str = "tools/call") -> Callable[[Call], Call]:
    """Configure this process for ``variant`` over ``transport``; returns how to wrap each
    measured ``operation``."""
    if variant == "baseline":
        return lambda call: call
    if variant in ("floor", "floor-context"):
        return _floor(operation, transport, carry_context=variant == "floor-context")
    if variant == "floor-propagated":
        return _floor_propagated(operation, transport)
    if variant == "logfire":
        import logfire

        logfire.configure(send_to_logfire=False, console=False)
        logfire.instrument_mcp()
        return lambda call: call
    sdk_providers(set_global=True)
    if variant in ("mcp-otel", "mcp-otel-local"):
        from mcp_otel import McpInstrumentor

        McpInstrumentor().instrument(propagate=variant == "mcp-otel")
    elif variant == "traceloop":
        from opentelemetry.instrumentation.mcp import McpInstrumentor as TraceloopInstrumentor

        TraceloopInstrumentor().instrument()
    elif variant == "openinference":
        from openinference.instrumentation.mcp import MCPInstrumentor

        MCPInstrumentor().instrument()
    elif variant != "sdk-builtin":
        raise ValueError(variant)
    return lambda call: call


# The operations measured: tool calls, and a resource read (a request that is not a tool call).
OPERATIONS = ("tools/call", "resources/read")
RESOURCE = "bench://ok"
# The attributes mcp-otel's spans and metric points carry for this benchmark's requests over stdio:
# the floor records the same data, so it measures what the SDK costs for it, not fewer attributes.
# In memory there is no transport to name, and neither records network.transport (``recorded``).
_COMMON = {
    "mcp.protocol.version": "2025-11-25",
    "mcp.server.name": SERVER_NAME,
    "mcp.server.version": SERVER_VERSION,
    "network.transport": "pipe",
    "jsonrpc.request.id": "7",
}
SPAN_ATTRIBUTES = {
    "tools/call": {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "ok",
        **_COMMON,
    },
    "resources/read": {"mcp.method.name": "resources/read", "mcp.resource.uri": RESOURCE, **_COMMON},
}
END_ATTRIBUTES = {
    "tools/call": {"mcp.request.outcome": "ok", "tool.outcome": "ok"},
    "resources/read": {"mcp.request.outcome": "ok"},
}
_POINTED = (
    "mcp.method.name",
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "mcp.server.name",
    "network.transport",
    "mcp.protocol.version",
)
POINT_ATTRIBUTES = {
    operation: {key: value for key, value in attributes.items() if key in _POINTED} | END_ATTRIBUTES[operation]
    for operation, attributes in SPAN_ATTRIBUTES.items()
}
SPAN_NAMES = {"tools/call": "tools/call ok", "resources/read": "resources/read"}


def recorded(operation: str, transport: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """What mcp-otel records for ``operation`` over ``transport``: the attributes a span starts
    with, those it ends with, and a metric point's."""
    span, point = SPAN_ATTRIBUTES[operation], POINT_ATTRIBUTES[operation]
    if transport == "memory":
        span, point = ({k: v for k, v in a.items() if k != "network.transport"} for a in (span, point))
    return span, END_ATTRIBUTES[operation], point


_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]


def _floor_instruments(providers: tuple[Any, Any]) -> tuple[Any, Any, Any]:
    """The floor's tracer and its client and server histograms, from (tracer, meter) providers."""
    tracer_provider, meter_provider = providers
    meter = meter_provider.get_meter("floor")
    histograms = (
        meter.create_histogram(side, unit="s", explicit_bucket_boundaries_advisory=_BUCKETS)
        for side in ("client", "server")
    )
    return tracer_provider.get_tracer("floor"), *histograms


def _floor(operation: str, transport: str, carry_context: bool = False) -> Callable[[Call], Call]:
    """What recording a call costs the SDK at least: two spans and two histogram records with
    mcp-otel's attributes (each point in its span's context, as mcp-otel records it), with a
    tracer that is not the global one (so mcp 2.x's own spans stay off), and nothing else: no
    propagation, no classification, no bookkeeping. ``carry_context``
    (mcp 1.x tool calls): the client span's ``traceparent`` is handed to ``call_tool(meta=...)``,
    so the SDK carries it in ``params._meta`` as it does mcp-otel's (not read at the server)."""
    from opentelemetry.propagate import inject
    from opentelemetry.trace import SpanKind, set_span_in_context

    tracer, client, server = _floor_instruments(sdk_providers(set_global=False))
    name, (attributes, end, point) = SPAN_NAMES[operation], recorded(operation, transport)

    def wrap(call: Call) -> Call:
        async def measured() -> Any:
            started = time.perf_counter()
            with (
                tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes) as a,
                tracer.start_as_current_span(name, kind=SpanKind.SERVER, attributes=attributes) as b,
            ):
                if carry_context:
                    carrier: dict[str, str] = {}
                    inject(carrier, context=set_span_in_context(a))
                    result = await call(meta=carrier)
                else:
                    result = await call()
                a.set_attributes(end)
                b.set_attributes(end)
            elapsed = time.perf_counter() - started
            client.record(elapsed, point, context=set_span_in_context(a))
            server.record(elapsed, point, context=set_span_in_context(b))
            return result

        return measured

    return wrap


def _floor_propagated(
    operation: str, transport: str, providers: tuple[Any, Any] | None = None
) -> Callable[[Call], Call]:
    """The floor as the least instrumentation that propagates would make it (mcp 1.x tool calls):
    ``ClientSession.call_tool`` and ``Server._handle_request`` wrapped with wrapt, the CLIENT
    span's context handed to ``call_tool(meta=...)``, the SERVER span a child of what the server
    extracts from ``params._meta``; the same spans, attributes and points as the floor, and no
    classification, bookkeeping or suppression. Both patches are installed in each process (over
    stdio the client's fires in the worker, the server's in the server). ``providers``: the
    tracer and meter providers to record with (default: the benchmark's, not the global ones)."""
    import wrapt
    from opentelemetry import context, propagate
    from opentelemetry.trace import SpanKind, set_span_in_context

    tracer, client, server = _floor_instruments(providers or sdk_providers(set_global=False))
    name, (attributes, end, point) = SPAN_NAMES[operation], recorded(operation, transport)

    # Both wrappers written out, as the floor's own calls are: a helper they shared would add its
    # calls to the path this variant exists to measure.
    async def call_tool(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        started = time.perf_counter()
        span = tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        token = context.attach(set_span_in_context(span))
        try:
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            result = await wrapped(*args, **kwargs, meta=carrier)
        finally:
            context.detach(token)
        span.set_attributes(end)
        span.end()
        client.record(time.perf_counter() - started, point, context=set_span_in_context(span))
        return result

    async def handle_request(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        started = time.perf_counter()
        meta = args[0].request_meta  # the RequestResponder's params._meta (extras: the carrier)
        parent = propagate.extract(meta.model_extra) if meta is not None else None
        span = tracer.start_span(name, context=parent, kind=SpanKind.SERVER, attributes=attributes)
        token = context.attach(set_span_in_context(span))
        try:
            result = await wrapped(*args, **kwargs)
        finally:
            context.detach(token)
        span.set_attributes(end)
        span.end()
        server.record(time.perf_counter() - started, point, context=set_span_in_context(span))
        return result

    wrapt.wrap_function_wrapper("mcp.client.session", "ClientSession.call_tool", call_tool)
    wrapt.wrap_function_wrapper("mcp.server.lowlevel.server", "Server._handle_request", handle_request)
    return lambda call: call
