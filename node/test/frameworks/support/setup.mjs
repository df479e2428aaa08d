// `node --import ./support/setup.mjs program.mjs`: what an application does to trace its MCP calls
// when its framework loads the SDK with ESM `import` (all of these do): the import-in-the-middle
// loader hook, registered before the application imports anything, then the OpenTelemetry SDK
// (in-memory exporter) and `new McpInstrumentation()` through `registerInstrumentations`.
//
// The hook is import-in-the-middle's copy that mcp-otel itself uses (its own node_modules): the
// modules the loader rewrites call back into the copy whose `hook.mjs` was registered, and
// mcp-otel's `Hook`s are registered with its own copy. (Installed from the registry, there would
// be one copy; here mcp-otel is linked from `file:../..`.)
//
// The spans are on `globalThis.__mcpOtelTest` for the program to print (support/harness.mjs).
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

if (process.env.NODE_TEST_CONTEXT) process.exit(0); // globbed as a test file: none (harness.mjs)
const require = createRequire(import.meta.url);
const mcpOtelPackage = require.resolve('mcp-otel/package.json');
const fromMcpOtel = createRequire(mcpOtelPackage);
register(pathToFileURL(fromMcpOtel.resolve('import-in-the-middle/hook.mjs')));

const api = await import('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
const { registerInstrumentations } = fromMcpOtel('@opentelemetry/instrumentation');
const { McpInstrumentation } = await import('mcp-otel');

api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
api.trace.setGlobalTracerProvider(tracerProvider);
const meterProvider = new MeterProvider();
const instrumentation = new McpInstrumentation();
registerInstrumentations({ instrumentations: [instrumentation], tracerProvider, meterProvider });

globalThis.__mcpOtelTest = { exporter, instrumentation, tracerProvider };
