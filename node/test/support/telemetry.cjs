// The real OpenTelemetry SDK (2.x) with in-memory exporters, and the instrumentation registered
// with it: what every test reads spans and metric points from.
'use strict';
const api = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { W3CTraceContextPropagator, W3CBaggagePropagator, CompositePropagator } = require('@opentelemetry/core');
const {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  AlwaysOffSampler,
} = require('@opentelemetry/sdk-trace-base');
const {
  MeterProvider,
  MetricReader,
  AggregationTemporality,
} = require('@opentelemetry/sdk-metrics');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  onForceFlush() {
    return Promise.resolve();
  }
  onShutdown() {
    return Promise.resolve();
  }
}

/** Set up the SDK and `new McpInstrumentation(config)` (from `mcpOtel`, the built package). */
function setup(mcpOtel, config = {}, { sampled = true } = {}) {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(sampled ? {} : { sampler: new AlwaysOffSampler() }),
  });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const instrumentation = new mcpOtel.McpInstrumentation(config);
  registerInstrumentations({ instrumentations: [instrumentation], tracerProvider, meterProvider });
  return {
    instrumentation,
    exporter,
    tracerProvider,
    spans: () => exporter.getFinishedSpans(),
    /** Every data point of metric `name`: its attributes and count. */
    async points(name) {
      const { resourceMetrics } = await reader.collect();
      const found = [];
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== name) continue;
          for (const point of metric.dataPoints) found.push({ attributes: point.attributes, value: point.value, scope: scope.scope });
        }
      }
      return found;
    },
    reset() {
      exporter.reset();
    },
  };
}

/** Wait until `predicate()` holds (spans end after the promise the application awaited). */
async function until(predicate, what = 'condition', ms = 5000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

module.exports = { setup, until };
