// What every process of the Node benchmark shares: the packages (resolved from node/, where
// they are installed), the OpenTelemetry SDK every variant runs on, the MCP SDK of either
// generation, the echo server, and the floor (mcp-otel's data made by hand).
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(HERE, '..', '..');
// node/ (built), or a copy of it: MCP_BENCH_NODE_DIR (a snapshot keeps a long run safe from a
// rebuild or `npm ci` in node/ while it runs).
export const NODE_DIR = process.env.MCP_BENCH_NODE_DIR ?? join(ROOT, 'node');
// Packages are required (CommonJS builds) from node/, whose node_modules holds them all; the
// per-call code is the same in either build.
export const require = createRequire(join(NODE_DIR, 'package.json'));

export const VARIANTS = ['bare', 'floor', 'mcp-otel'];
export const SDKS = ['1', '2'];
export const TRANSPORTS = ['memory', 'stdio'];
// Candidates: other builds of mcp-otel, measured beside it in the same run (a change's effect).
// MCP_BENCH_CANDIDATES: {"name": "its node/ directory (built), or its dist/"}; variant
// `candidate:name`.
export const CANDIDATE_PREFIX = 'candidate:';

export function candidates() {
  return JSON.parse(process.env.MCP_BENCH_CANDIDATES ?? '{}');
}

/** `new McpInstrumentation()` of this variant's build, or none (bare, floor). */
export function instrumentFor(variant, generation, otel) {
  if (variant === 'mcp-otel') return instrument(generation, otel);
  if (!variant.startsWith(CANDIDATE_PREFIX)) return undefined;
  const dir = candidates()[variant.slice(CANDIDATE_PREFIX.length)];
  if (!dir) throw new Error(`${variant}: not in MCP_BENCH_CANDIDATES`);
  return instrument(generation, otel, existsSync(join(dir, 'dist')) ? join(dir, 'dist') : dir);
}

/** The version of an installed package (read from its package.json, which v2 does not export). */
export function versionOf(name) {
  return JSON.parse(readFileSync(join(NODE_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
}

export function versions() {
  const names = [
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/client',
    '@modelcontextprotocol/server',
    '@opentelemetry/api',
    '@opentelemetry/sdk-trace-base',
    '@opentelemetry/sdk-metrics',
    '@opentelemetry/context-async-hooks',
  ];
  const found = { node: process.version, 'mcp-otel': JSON.parse(readFileSync(join(NODE_DIR, 'package.json'), 'utf8')).version };
  for (const name of names) found[name] = versionOf(name);
  return found;
}

// ---------------------------------------------------------------------------------------------
// The OpenTelemetry SDK: the same for every variant, the uninstrumented one included.

/**
 * Set up the global context manager and propagator, a tracer provider whose BatchSpanProcessor
 * hands spans to an exporter that drops them, and a meter provider with a reader that is never
 * collected (points aggregate in memory, as between two exports). `verify`: keep spans in memory
 * instead, and collect the points (the check that floor and mcp-otel record the same data).
 */
export function telemetry({ verify = false } = {}) {
  const api = require('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator, W3CBaggagePropagator, CompositePropagator, ExportResultCode } = require('@opentelemetry/core');
  const { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
  const { MeterProvider, MetricReader, AggregationTemporality } = require('@opentelemetry/sdk-metrics');

  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  const dropping = {
    export(_spans, done) { done({ code: ExportResultCode.SUCCESS }); },
    shutdown() { return Promise.resolve(); },
    forceFlush() { return Promise.resolve(); },
  };
  const memory = verify ? new InMemorySpanExporter() : undefined;
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [verify ? new SimpleSpanProcessor(memory) : new BatchSpanProcessor(dropping)],
  });
  api.trace.setGlobalTracerProvider(tracerProvider);
  class Reader extends MetricReader {
    constructor() { super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE }); }
    onForceFlush() { return Promise.resolve(); }
    onShutdown() { return Promise.resolve(); }
  }
  const reader = new Reader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  api.metrics.setGlobalMeterProvider(meterProvider);
  return {
    api,
    tracerProvider,
    meterProvider,
    flush: () => tracerProvider.forceFlush(),
    /** Verify mode: the spans ended so far, as plain data. */
    spans() {
      return (memory?.getFinishedSpans() ?? []).map((span) => ({
        name: span.name,
        kind: span.kind,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId,
        attributes: { ...span.attributes },
        status: span.status.code,
      }));
    },
    /** Verify mode: every histogram point: metric name, attributes, count. */
    async points() {
      const { resourceMetrics } = await reader.collect();
      const found = [];
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          for (const point of metric.dataPoints) {
            found.push({ metric: metric.descriptor.name, attributes: { ...point.attributes }, count: point.value.count });
          }
        }
      }
      return found;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The MCP SDK of either generation.

export function mcpSdk(sdk) {
  const z = require('zod');
  if (sdk === '1') {
    const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
    const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
    const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
    const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
    const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
    return {
      Client, McpServer, InMemoryTransport, StdioClientTransport, StdioServerTransport,
      inputSchema: { text: z.string() },
      // The request's `_meta` and JSON-RPC id as the tool handler is given them.
      meta: (extra) => extra?._meta,
      requestId: (extra) => extra?.requestId,
    };
  }
  const { Client, InMemoryTransport } = require('@modelcontextprotocol/client');
  const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');
  const { McpServer } = require('@modelcontextprotocol/server');
  const { StdioServerTransport } = require('@modelcontextprotocol/server/stdio');
  return {
    Client, McpServer, InMemoryTransport, StdioClientTransport, StdioServerTransport,
    inputSchema: z.object({ text: z.string() }),
    meta: (ctx) => ctx?.mcpReq?._meta,
    requestId: (ctx) => ctx?.mcpReq?.id,
  };
}

export const SERVER_INFO = { name: 'bench-server', version: '1.0.0' };
export const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };
export const CALL = { name: 'echo', arguments: { text: 'x' } };

/** The McpServer with its one tool, `echo`; the floor's server side wraps its handler. */
export function echoServer(sdk, floor) {
  const { McpServer, inputSchema } = mcpSdk(sdk);
  const server = new McpServer(SERVER_INFO);
  if (floor) floor.state.server = server.server;
  const echo = async ({ text }) => ({ content: [{ type: 'text', text }] });
  server.registerTool('echo', { description: 'Echoes its text.', inputSchema }, floor ? floor.handler(echo) : echo);
  return server;
}

// ---------------------------------------------------------------------------------------------
// The floor: what mcp-otel records for a tool call, made by hand around the same call.

/**
 * The floor's client wrapper and server handler wrapper. Both take their attributes from
 * mcp-otel's own names (its semconv module: no instrumentation is loaded or enabled), and record
 * exactly what mcp-otel records for a `tools/call` answered with a result: one span with the
 * same name, kind and attributes, its context in `params._meta` (client) or taken from it
 * (server), ended with the outcome attributes, and one duration point with the same
 * attributes, in the span's context. The span is the current one while the call runs (the
 * SDK's sending of it; the tool handler), as mcp-otel's is.
 */
export function floor({ sdk, transport }) {
  const S = require(join(NODE_DIR, 'dist', 'cjs', 'semconv.js'));
  const { trace, context, propagation, metrics, SpanKind } = require('@opentelemetry/api');
  const tracer = trace.getTracer('mcp_otel_floor');
  const meter = metrics.getMeter('mcp_otel_floor');
  const histogram = (name) => meter.createHistogram(name, {
    unit: S.DURATION_UNIT,
    advice: { explicitBucketBoundaries: [...S.DURATION_BUCKETS] },
  });
  const clientDuration = histogram(S.MCP_CLIENT_OPERATION_DURATION);
  const serverDuration = histogram(S.MCP_SERVER_OPERATION_DURATION);
  const { meta: metaOf, requestId: requestIdOf } = mcpSdk(sdk);
  const pipe = transport === 'stdio' ? { [S.NETWORK_TRANSPORT]: S.TRANSPORT_PIPE } : {};
  const ok = { [S.MCP_REQUEST_OUTCOME]: S.Outcome.OK, [S.TOOL_OUTCOME]: S.Outcome.OK };
  const toolError = {
    [S.MCP_REQUEST_OUTCOME]: S.Outcome.FAILED,
    [S.TOOL_OUTCOME]: S.Outcome.FAILED,
    [S.ERROR_TYPE]: S.ErrorType?.TOOL_ERROR ?? 'tool_error',
  };
  // What a connection knows once its handshake is done: the same on every call.
  const connection = (protocolVersion) => ({
    [S.MCP_METHOD_NAME]: S.METHOD_TOOLS_CALL,
    [S.GEN_AI_OPERATION_NAME]: S.OPERATION_EXECUTE_TOOL,
    [S.MCP_PROTOCOL_VERSION]: protocolVersion,
    [S.MCP_SERVER_NAME]: SERVER_INFO.name,
    ...pipe,
  });
  const spanOnly = (protocolVersion) => ({ ...connection(protocolVersion), [S.MCP_SERVER_VERSION]: SERVER_INFO.version });
  // The protocol version the handshake settled: v2 keeps it on the object; v1 keeps none, and
  // both v1 sides settle on the SDK's latest (a hand-written instrumentation would read it from
  // the handshake's answer once).
  const latest = sdk === '1' ? require('@modelcontextprotocol/sdk/types.js').LATEST_PROTOCOL_VERSION : undefined;
  const negotiated = (protocol) => protocol?._negotiatedProtocolVersion ?? latest;
  const state = { server: undefined };

  return {
    /** The server whose handler `handler` wraps (its `Server`: the one that did the handshake). */
    state,

    /** `client.callTool(params)` as one CLIENT span and one point. */
    callTool: function floorCallTool(client, params) {
      const protocolVersion = negotiated(client);
      const base = connection(protocolVersion);
      const span = tracer.startSpan(`${S.METHOD_TOOLS_CALL} ${params.name}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          ...spanOnly(protocolVersion),
          [S.GEN_AI_TOOL_NAME]: params.name,
          [S.JSONRPC_REQUEST_ID]: String(client._requestMessageId),
        },
      });
      const current = trace.setSpan(context.active(), span);
      const carrier = {};
      propagation.inject(current, carrier);
      const sent = { ...params, _meta: { ...params._meta, ...carrier } };
      const started = performance.now();
      const finish = function floorClientFinish(outcome) {
        span.setAttributes(outcome);
        span.end();
        clientDuration.record((performance.now() - started) / 1000, { ...base, [S.GEN_AI_TOOL_NAME]: params.name, ...outcome }, current);
      };
      return context.with(current, function floorSend() { return client.callTool(sent); }).then(
        function floorAnswered(result) {
          finish(result?.isError ? toolError : ok);
          return result;
        },
        function floorRejected(error) {
          span.setStatus({ code: 2, message: String(error?.message) });
          finish({ [S.MCP_REQUEST_OUTCOME]: S.Outcome.FAILED, [S.ERROR_TYPE]: error?.constructor?.name ?? 'Error' });
          throw error;
        },
      );
    },

    /** A tool handler as one SERVER span (child of the context in `_meta`) and one point. */
    handler(handle) {
      return async function floorHandler(args, extra) {
        const remote = propagation.extract(context.active(), metaOf(extra) ?? {});
        const protocolVersion = negotiated(state.server);
        const span = tracer.startSpan(`${S.METHOD_TOOLS_CALL} echo`, {
          kind: SpanKind.SERVER,
          attributes: {
            ...spanOnly(protocolVersion),
            [S.GEN_AI_TOOL_NAME]: 'echo',
            [S.JSONRPC_REQUEST_ID]: String(requestIdOf(extra)),
          },
        }, remote);
        const current = trace.setSpan(remote, span);
        const started = performance.now();
        let outcome = toolError;
        try {
          const result = await context.with(current, function floorHandle() { return handle(args, extra); });
          if (!result?.isError) outcome = ok;
          return result;
        } finally {
          span.setAttributes(outcome);
          span.end();
          serverDuration.record(
            (performance.now() - started) / 1000,
            { ...connection(protocolVersion), [S.GEN_AI_TOOL_NAME]: 'echo', ...outcome },
            current,
          );
        }
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// mcp-otel.

/** `new McpInstrumentation()` registered with this process's providers, the SDK's classes patched. */
export function instrument(generation, { tracerProvider, meterProvider }, dist = join(NODE_DIR, 'dist')) {
  const { McpInstrumentation } = require(join(dist, 'cjs', 'index.js'));
  const { registerInstrumentations } = require('@opentelemetry/instrumentation');
  const instrumentation = new McpInstrumentation();
  registerInstrumentations({ instrumentations: [instrumentation], tracerProvider, meterProvider });
  const classes =
    generation === '1'
      ? [require('@modelcontextprotocol/sdk/client/index.js').Client, require('@modelcontextprotocol/sdk/server/index.js').Server]
      : [require('@modelcontextprotocol/client').Client, require('@modelcontextprotocol/server').Server];
  // Already patched by its load hooks when loaded after it; `instrument` is a no-op then.
  instrumentation.instrument(...classes);
  return instrumentation;
}

// ---------------------------------------------------------------------------------------------
// CPU time of another process (the stdio server): every thread's time on a CPU, in
// nanoseconds, from /proc/<pid>/task/*/schedstat (the first field: sum_exec_runtime). Exact,
// unlike /proc/<pid>/stat's utime+stime in 10 ms ticks.

export function processCpuNs(pid) {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that exited between the listing and the read
    }
  }
  return total;
}

export function selfCpuUs() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

// ---------------------------------------------------------------------------------------------
// A worker process (worker.mjs) of one variant, asked over IPC.

export class Worker {
  constructor(sdk, transport, variant, { mode, execArgv = [], env } = {}) {
    Object.assign(this, { sdk, transport, variant });
    this.process = fork(join(HERE, 'worker.mjs'), [sdk, transport, variant, ...(mode ? [mode] : [])], {
      execArgv,
      env: env ?? process.env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.pending = new Map();
    this.next = 0;
    this.exited = new Promise((resolve) => this.process.once('exit', resolve));
    this.ready = new Promise((resolve, reject) => {
      this.process.on('message', (message) => {
        if (message.ready) return resolve();
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.ok) waiting.resolve(message.value);
        else waiting.reject(new Error(`${this.name}: ${message.error}`));
      });
      this.process.on('exit', (code) => {
        const error = new Error(`${this.name}: worker exited (${code})`);
        reject(error);
        for (const waiting of this.pending.values()) waiting.reject(error);
      });
    });
  }

  get name() {
    return `v${this.sdk} ${this.transport} ${this.variant}`;
  }

  ask(command, args = {}) {
    return new Promise((resolve, reject) => {
      const id = this.next++;
      this.pending.set(id, { resolve, reject });
      this.process.send({ id, command, ...args });
    });
  }

  async close() {
    await this.ask('exit').catch(() => {});
  }
}
