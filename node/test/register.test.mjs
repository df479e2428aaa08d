// Zero code: `node --import mcp-otel/register <app>` in a child process, its telemetry received by a
// fake OTLP receiver (node:http on 127.0.0.1) and checked: the exporters (otlp over http/json and
// http/protobuf, console, none), the resource from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES,
// ESM and CommonJS apps on both SDK generations, the flush on exit and on signals, the app's
// output and exit code untouched, and the one line on stderr without @opentelemetry/sdk-node.
//
// The children run with cwd = the package root, so `mcp-otel/register` resolves by the package's
// own name (self-reference through its `exports`); one test runs it as an installed dependency.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(ROOT, 'test', 'fixtures', 'register');
const REGISTER = ['--import', 'mcp-otel/register'];
const CHILD_TIMEOUT_MS = 10_000;
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const SDK_NODE_MISSING = 'mcp-otel: @opentelemetry/sdk-node is not installed, so there is no telemetry: npm install @opentelemetry/sdk-node\n';

assert.ok(existsSync(join(ROOT, 'dist', 'esm', 'register.js')), 'build first: npm run build');

/** The test's environment without OTEL_* (and Node's own options), plus `extra`. */
function childEnv(extra) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('OTEL_') && key !== 'NODE_OPTIONS' && key !== 'NODE_TEST_CONTEXT') env[key] = value;
  }
  // Nothing exported on a timer: what arrives was flushed at exit.
  return { ...env, OTEL_BSP_SCHEDULE_DELAY: '60000', OTEL_METRIC_EXPORT_INTERVAL: '60000', ...extra };
}

/** A fake OTLP/HTTP receiver: every request's path, content type and (decompressed) body. */
async function startReceiver() {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const contentType = req.headers['content-type'];
      requests.push({ path: req.url, contentType, body });
      const json = contentType === 'application/json';
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Run `node <args>`, `input` its stdin; with `signal`, send it once stdout has `ready`. Resolves with its exit code,
 * signal, stdout and stderr; killed (by PID) if it outlives CHILD_TIMEOUT_MS.
 */
async function run(args, { env = {}, cwd = ROOT, signal, input } = {}) {
  const stdin = input === undefined ? 'ignore' : 'pipe';
  const child = spawn(process.execPath, args, { cwd, env: childEnv(env), stdio: [stdin, 'pipe', 'pipe'] });
  child.stdin?.end(input);
  let stdout = '';
  let stderr = '';
  let signalled = false;
  child.stdout.setEncoding('utf8').on('data', (text) => {
    stdout += text;
    if (signal !== undefined && !signalled && stdout.includes('ready\n')) {
      signalled = true;
      process.kill(child.pid, signal);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (text) => { stderr += text; });
  let timer;
  try {
    const [code, exitSignal] = await Promise.race([
      new Promise((resolve) => child.on('close', (...ending) => resolve(ending))),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out: node ${args.join(' ')}\n${stderr}`)), CHILD_TIMEOUT_MS);
      }),
    ]);
    return { code, signal: exitSignal, stdout, stderr };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
  }
}

const fixture = (name) => join(FIXTURES, name);

// OTLP/JSON readers.
const value = (attributes, key) => {
  const found = attributes.find((each) => each.key === key)?.value;
  return found === undefined ? undefined : (found.stringValue ?? found.intValue ?? found.boolValue ?? found.doubleValue);
};
const jsonBodies = (requests, path) =>
  requests.filter((each) => each.path === path).map((each) => {
    assert.equal(each.contentType, 'application/json');
    return JSON.parse(each.body.toString('utf8'));
  });
const spansOf = (requests) =>
  jsonBodies(requests, '/v1/traces').flatMap((body) =>
    body.resourceSpans.flatMap((resourceSpans) =>
      resourceSpans.scopeSpans.flatMap((scopeSpans) =>
        scopeSpans.spans.map((span) => ({ ...span, resource: resourceSpans.resource, scope: scopeSpans.scope })),
      ),
    ),
  );
const metricsOf = (requests) =>
  jsonBodies(requests, '/v1/metrics').flatMap((body) =>
    body.resourceMetrics.flatMap((resourceMetrics) =>
      resourceMetrics.scopeMetrics.flatMap((scopeMetrics) =>
        scopeMetrics.metrics.map((metric) => ({ ...metric, resource: resourceMetrics.resource, scope: scopeMetrics.scope })),
      ),
    ),
  );

/** The call `tools/call echo` as two spans, CLIENT and SERVER, ok, one trace, server under client. */
function assertEchoSpans(requests, serviceName) {
  const spans = spansOf(requests).filter((span) => span.name === 'tools/call echo');
  assert.deepEqual(spans.map((span) => span.kind).sort(), [SPAN_KIND_SERVER, SPAN_KIND_CLIENT]);
  const client = spans.find((span) => span.kind === SPAN_KIND_CLIENT);
  const server = spans.find((span) => span.kind === SPAN_KIND_SERVER);
  for (const span of [client, server]) {
    assert.equal(span.scope.name, 'mcp_otel');
    assert.equal(value(span.attributes, 'mcp.method.name'), 'tools/call');
    assert.equal(value(span.attributes, 'gen_ai.tool.name'), 'echo');
    assert.equal(value(span.attributes, 'mcp.request.outcome'), 'ok');
    assert.equal(value(span.resource.attributes, 'service.name'), serviceName);
    assert.equal(value(span.resource.attributes, 'deployment.environment.name'), 'test');
    assert.equal(value(span.resource.attributes, 'team'), 'obs');
  }
  assert.equal(server.traceId, client.traceId);
  assert.equal(server.parentSpanId, client.spanId);
}

/** `mcp.client.operation.duration` (and the server's) with one ok `tools/call` point each. */
function assertEchoMetrics(requests, serviceName) {
  const metrics = metricsOf(requests);
  for (const name of ['mcp.client.operation.duration', 'mcp.server.operation.duration']) {
    const metric = metrics.find((each) => each.name === name);
    assert.ok(metric, `${name} exported`);
    assert.equal(metric.unit, 's');
    assert.equal(value(metric.resource.attributes, 'service.name'), serviceName);
    const points = metric.histogram.dataPoints.filter((point) => value(point.attributes, 'mcp.method.name') === 'tools/call');
    assert.equal(points.length, 1);
    assert.equal(Number(points[0].count), 1);
    assert.equal(value(points[0].attributes, 'mcp.request.outcome'), 'ok');
  }
}

const otlpJson = (endpoint, serviceName) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: serviceName,
  OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,team=obs',
});

for (const app of ['app-v1.mjs', 'app-v2.mjs', 'app-v1.cjs', 'app-v2.cjs']) {
  test(`otlp http/json: ${app} sends its spans and metrics at exit, its output and exit code unchanged`, async () => {
    const receiver = await startReceiver();
    try {
      const serviceName = `register-${app.replace('.', '-')}`;
      const result = await run([...REGISTER, fixture(app)], { env: otlpJson(receiver.endpoint, serviceName) });
      assert.deepEqual(result, { code: 0, signal: null, stdout: `${app}: hi\n`, stderr: '' });
      assertEchoSpans(receiver.requests, serviceName);
      assertEchoMetrics(receiver.requests, serviceName);
      assert.deepEqual(receiver.requests.filter((each) => each.path === '/v1/logs'), []);
    } finally {
      await receiver.close();
    }
  });
}

test('otlp http/protobuf (the default protocol): protobuf bodies with the spans and the metric', async () => {
  const receiver = await startReceiver();
  try {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: 'register-protobuf' };
    const result = await run([...REGISTER, fixture('app-v2.mjs')], { env });
    assert.deepEqual(result, { code: 0, signal: null, stdout: 'app-v2.mjs: hi\n', stderr: '' });
    const traces = receiver.requests.filter((each) => each.path === '/v1/traces');
    const metrics = receiver.requests.filter((each) => each.path === '/v1/metrics');
    assert.ok(traces.length > 0 && metrics.length > 0);
    for (const each of [...traces, ...metrics]) assert.equal(each.contentType, 'application/x-protobuf');
    const traceBytes = Buffer.concat(traces.map((each) => each.body));
    for (const text of ['tools/call echo', 'mcp.request.outcome', 'register-protobuf', 'mcp_otel']) {
      assert.ok(traceBytes.includes(Buffer.from(text)), `traces hold ${text}`);
    }
    const metricBytes = Buffer.concat(metrics.map((each) => each.body));
    for (const text of ['mcp.client.operation.duration', 'mcp.request.outcome', 'register-protobuf']) {
      assert.ok(metricBytes.includes(Buffer.from(text)), `metrics hold ${text}`);
    }
  } finally {
    await receiver.close();
  }
});

test('console exporter: the spans are printed on stdout (the user chose it), nothing is sent', async () => {
  const receiver = await startReceiver();
  try {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_EXPORTER: 'console', OTEL_METRICS_EXPORTER: 'none' };
    const result = await run([...REGISTER, fixture('app-v1.mjs')], { env });
    assert.equal(result.code, 0);
    assert.equal(result.stderr, '');
    // The console exporter writes each span as it ends: among the app's own lines.
    assert.match(result.stdout, /^app-v1\.mjs: hi$/m);
    assert.match(result.stdout, /name: 'tools\/call echo'/);
    assert.match(result.stdout, /'mcp\.request\.outcome': 'ok'/);
    assert.deepEqual(receiver.requests, []);
  } finally {
    await receiver.close();
  }
});

test('none: nothing is sent and the output is byte for byte the plain run\'s', async () => {
  const receiver = await startReceiver();
  try {
    for (const app of ['app-v1.mjs', 'app-v2.cjs']) {
      const plain = await run([fixture(app)]);
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' };
      const registered = await run([...REGISTER, fixture(app)], { env });
      assert.deepEqual(registered, plain);
      assert.deepEqual(plain, { code: 0, signal: null, stdout: `${app}: hi\n`, stderr: '' });
    }
    assert.deepEqual(receiver.requests, []);
  } finally {
    await receiver.close();
  }
});

test('a stdio server: its stdout (the protocol) is byte for byte the plain run\'s, flushed when stdin closes', async () => {
  const receiver = await startReceiver();
  try {
    const input = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } },
    ].map((message) => `${JSON.stringify(message)}\n`).join('');
    const plain = await run([fixture('server-stdio.mjs'), '--serve'], { input });
    assert.equal(plain.code, 0);
    assert.equal(plain.stdout.split('\n').length, 3); // two answers
    const result = await run([...REGISTER, fixture('server-stdio.mjs'), '--serve'], { env: otlpJson(receiver.endpoint, 'register-stdio'), input });
    assert.deepEqual(result, plain);
    const spans = spansOf(receiver.requests).filter((span) => span.name === 'tools/call echo');
    assert.deepEqual(spans.map((span) => [span.kind, value(span.attributes, 'mcp.request.outcome')]), [[SPAN_KIND_SERVER, 'ok']]);
    assert.equal(value(spans[0].resource.attributes, 'service.name'), 'register-stdio');
    assert.ok(metricsOf(receiver.requests).some((metric) => metric.name === 'mcp.server.operation.duration'));
  } finally {
    await receiver.close();
  }
});

test('OTEL_LOG_LEVEL: the SDK\'s diagnostics go to stderr, never stdout', async () => {
  const env = { OTEL_LOG_LEVEL: 'debug', OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' };
  const result = await run([...REGISTER, fixture('app-v2.mjs')], { env });
  assert.equal(result.code, 0);
  assert.equal(result.stdout, 'app-v2.mjs: hi\n');
  assert.match(result.stderr, /OTEL_METRICS_EXPORTER contains "none"/);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`${signal} with no handler of the app's: flushed, then the process ends by ${signal}`, async () => {
    const receiver = await startReceiver();
    try {
      const plain = await run([fixture('app-wait.mjs'), '--wait'], { signal });
      assert.deepEqual(plain, { code: null, signal, stdout: 'ready\n', stderr: '' });
      const serviceName = `register-${signal}`;
      const result = await run([...REGISTER, fixture('app-wait.mjs'), '--wait'], { env: otlpJson(receiver.endpoint, serviceName), signal });
      assert.deepEqual(result, plain);
      assertEchoSpans(receiver.requests, serviceName);
      assertEchoMetrics(receiver.requests, serviceName);
    } finally {
      await receiver.close();
    }
  });
}

test('SIGTERM handled by the app: its handler decides (exit code 3), the telemetry still arrives', async () => {
  const receiver = await startReceiver();
  try {
    const args = [fixture('app-wait.mjs'), '--wait', '--handle'];
    const plain = await run(args, { signal: 'SIGTERM' });
    assert.deepEqual(plain, { code: 3, signal: null, stdout: 'ready\nbye\n', stderr: '' });
    const result = await run([...REGISTER, ...args], { env: otlpJson(receiver.endpoint, 'register-handled'), signal: 'SIGTERM' });
    assert.deepEqual(result, plain);
    assertEchoSpans(receiver.requests, 'register-handled');
    assertEchoMetrics(receiver.requests, 'register-handled');
  } finally {
    await receiver.close();
  }
});

test('OTEL_SDK_DISABLED=true: no telemetry, the app unchanged', async () => {
  const receiver = await startReceiver();
  try {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' };
    const result = await run([...REGISTER, fixture('app-v1.mjs')], { env });
    assert.deepEqual(result, { code: 0, signal: null, stdout: 'app-v1.mjs: hi\n', stderr: '' });
    assert.deepEqual(receiver.requests, []);
  } finally {
    await receiver.close();
  }
});

/** A project in a temporary directory with `node_modules/<name>` a link to (or copy of) each given. */
function project(packages) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-otel-register-'));
  try {
    for (const [name, make] of Object.entries(packages)) {
      mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true });
      make(join(dir, 'node_modules', name));
    }
    return dir;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
const linkTo = (target) => (path) => symlinkSync(target, path, 'dir');

test('installed as a dependency (node_modules/mcp-otel): `--import mcp-otel/register` by name', async () => {
  const receiver = await startReceiver();
  const dir = project({ 'mcp-otel': linkTo(ROOT) });
  try {
    const result = await run([...REGISTER, fixture('app-v1.cjs')], { cwd: dir, env: otlpJson(receiver.endpoint, 'register-installed') });
    assert.deepEqual(result, { code: 0, signal: null, stdout: 'app-v1.cjs: hi\n', stderr: '' });
    assertEchoSpans(receiver.requests, 'register-installed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await receiver.close();
  }
});

test('without @opentelemetry/sdk-node: one line on stderr, the app runs unchanged', async () => {
  // mcp-otel copied (a link would resolve from its real path, next to the SDK), its dependencies linked.
  const dir = project({
    'mcp-otel': (path) => {
      mkdirSync(path);
      cpSync(join(ROOT, 'package.json'), join(path, 'package.json'));
      cpSync(join(ROOT, 'dist'), join(path, 'dist'), { recursive: true });
    },
    '@opentelemetry/api': linkTo(join(ROOT, 'node_modules', '@opentelemetry', 'api')),
    '@opentelemetry/instrumentation': linkTo(join(ROOT, 'node_modules', '@opentelemetry', 'instrumentation')),
    'require-in-the-middle': linkTo(join(ROOT, 'node_modules', 'require-in-the-middle')),
  });
  try {
    const from = createRequire(join(dir, 'node_modules', 'mcp-otel', 'dist', 'esm', 'register.js'));
    assert.throws(() => from.resolve('@opentelemetry/sdk-node'), { code: 'MODULE_NOT_FOUND' }, 'the SDK must not resolve from the copy');
    for (const app of ['app-v2.mjs', 'app-v1.cjs']) {
      const result = await run([...REGISTER, fixture(app)], { cwd: dir });
      assert.deepEqual(result, { code: 0, signal: null, stdout: `${app}: hi\n`, stderr: SDK_NODE_MISSING });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
