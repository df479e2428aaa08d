// The OpenTelemetry JS SDK for the TypeScript programs the Python tests start (ts_agent.cjs,
// ts_server.cjs), with mcp-otel's built package registered in it. Everything is loaded from the
// npm package's own node_modules (/work/main/node), the built package from its dist/cjs.
//
// Where spans go, from the environment:
//   MCP_OTEL_TS_SPAN_FILE        each finished span as one JSON line in this file, written when it
//                                ends (nothing is lost when the process is stopped);
//   OTEL_EXPORTER_OTLP_ENDPOINT  OTLP/HTTP (JSON) traces and metrics to this collector, as service
//                                OTEL_SERVICE_NAME, metrics every OTEL_METRIC_EXPORT_INTERVAL ms.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

const PACKAGE = path.resolve(__dirname, '..', '..', 'node');
const requireFromPackage = createRequire(path.join(PACKAGE, 'package.json'));

const api = requireFromPackage('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = requireFromPackage('@opentelemetry/context-async-hooks');
const { W3CTraceContextPropagator, W3CBaggagePropagator, CompositePropagator, ExportResultCode } =
  requireFromPackage('@opentelemetry/core');
const { BasicTracerProvider, SimpleSpanProcessor, BatchSpanProcessor } =
  requireFromPackage('@opentelemetry/sdk-trace-base');
const { MeterProvider, PeriodicExportingMetricReader } = requireFromPackage('@opentelemetry/sdk-metrics');
const { resourceFromAttributes } = requireFromPackage('@opentelemetry/resources');
const { registerInstrumentations } = requireFromPackage('@opentelemetry/instrumentation');
const { McpInstrumentation } = require(path.join(PACKAGE, 'dist', 'cjs', 'index.js'));

const KINDS = ['INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUSES = ['UNSET', 'OK', 'ERROR'];

/** Finished spans as JSON lines, appended synchronously as each ends. */
class JsonLinesSpanExporter {
  constructor(file) {
    this.file = file;
  }

  export(spans, done) {
    const lines = spans.map((span) => {
      const context = span.spanContext();
      return `${JSON.stringify({
        name: span.name,
        kind: KINDS[span.kind],
        trace_id: context.traceId,
        span_id: context.spanId,
        parent_id: span.parentSpanContext?.spanId ?? null,
        attributes: span.attributes,
        status: STATUSES[span.status.code],
        scope: span.instrumentationScope.name,
        service: span.resource.attributes['service.name'],
      })}\n`;
    });
    fs.appendFileSync(this.file, lines.join(''));
    done({ code: ExportResultCode.SUCCESS });
  }

  shutdown() {
    return Promise.resolve();
  }

  forceFlush() {
    return Promise.resolve();
  }
}

/** Set up the SDK and mcp-otel (before the MCP SDK is loaded); returns `shutdown()`, which flushes. */
function setup() {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  const resource = resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? 'mcp-otel-ts-test' });
  const spanProcessors = [];
  const readers = [];
  if (process.env.MCP_OTEL_TS_SPAN_FILE) {
    spanProcessors.push(new SimpleSpanProcessor(new JsonLinesSpanExporter(process.env.MCP_OTEL_TS_SPAN_FILE)));
  }
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const { OTLPTraceExporter } = requireFromPackage('@opentelemetry/exporter-trace-otlp-http');
    const { OTLPMetricExporter } = requireFromPackage('@opentelemetry/exporter-metrics-otlp-http');
    spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 200 }));
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter(),
        exportIntervalMillis: Number(process.env.OTEL_METRIC_EXPORT_INTERVAL ?? 60000),
      }),
    );
  }
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors });
  const meterProvider = new MeterProvider({ resource, readers });
  registerInstrumentations({ instrumentations: [new McpInstrumentation()], tracerProvider, meterProvider });
  let finished;
  return {
    shutdown() {
      finished ??= Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
      return finished;
    },
  };
}

/** The MCP SDK of one generation (`v1`: @modelcontextprotocol/sdk; `v2`: client and server). */
function sdk(generation) {
  if (generation === 'v1') {
    const types = requireFromPackage('@modelcontextprotocol/sdk/types.js');
    return {
      Client: requireFromPackage('@modelcontextprotocol/sdk/client/index.js').Client,
      StdioClientTransport: requireFromPackage('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport,
      StreamableHTTPClientTransport: requireFromPackage('@modelcontextprotocol/sdk/client/streamableHttp.js')
        .StreamableHTTPClientTransport,
      McpServer: requireFromPackage('@modelcontextprotocol/sdk/server/mcp.js').McpServer,
      Server: requireFromPackage('@modelcontextprotocol/sdk/server/index.js').Server,
      StdioServerTransport: requireFromPackage('@modelcontextprotocol/sdk/server/stdio.js').StdioServerTransport,
      // A JSON-RPC error the server answers with.
      error: (code, message) => new types.McpError(code, message),
      // setRequestHandler's first argument for a method.
      method: { 'tools/list': types.ListToolsRequestSchema, 'tools/call': types.CallToolRequestSchema },
      // callTool(params, options) of either generation.
      callTool: (client, params, options) => client.callTool(params, undefined, options),
      // A handler's abort signal.
      signal: (extra) => extra.signal,
    };
  }
  if (generation === 'v2') {
    const client = requireFromPackage('@modelcontextprotocol/client');
    const server = requireFromPackage('@modelcontextprotocol/server');
    return {
      Client: client.Client,
      StdioClientTransport: requireFromPackage('@modelcontextprotocol/client/stdio').StdioClientTransport,
      StreamableHTTPClientTransport: client.StreamableHTTPClientTransport,
      McpServer: server.McpServer,
      Server: server.Server,
      StdioServerTransport: requireFromPackage('@modelcontextprotocol/server/stdio').StdioServerTransport,
      error: (code, message) => new server.ProtocolError(code, message),
      method: { 'tools/list': 'tools/list', 'tools/call': 'tools/call' },
      callTool: (client, params, options) => client.callTool(params, options),
      signal: (ctx) => ctx.mcpReq.signal,
    };
  }
  throw new Error(`unknown SDK generation ${generation} (v1 or v2)`);
}

module.exports = { setup, sdk };
