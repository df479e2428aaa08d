// @ai-sdk/mcp 2.0 has an MCP client of its own, not the official SDK's: mcp-otel in process has
// nothing to hook (no span, whatever is registered). What covers it is `mcp-otel proxy` (the
// Python package's) wrapping the server's command: the proxy records the spans of the calls from
// the wire, SERVER spans by default, CLIENT spans with `--as client`.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ROOT, mcpSpans, notInstalled, runProgram } from './support/run.mjs';

const PROXY = process.env.MCP_OTEL_PROXY ?? resolve(ROOT, '../../../.venv/mcp2/bin/mcp-otel');
const skip = notInstalled();
const skipProxy =
  skip ?? (existsSync(PROXY) ? undefined : `no mcp-otel proxy at ${PROXY} (the Python package; set MCP_OTEL_PROXY to its command)`);
const OTLP_KIND = { SERVER: 2, CLIENT: 3 };

/** The spans of the proxy's OTLP JSON lines file, their attributes as a plain object. */
function proxySpans(file) {
  const spans = [];
  if (!existsSync(file)) return spans;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    for (const resourceSpans of JSON.parse(line).resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans) {
        for (const span of scopeSpans.spans) {
          spans.push({ ...span, attributes: attributesOf(span.attributes), resource, scope: scopeSpans.scope?.name });
        }
      }
    }
  }
  return spans;
}

function attributesOf(list = []) {
  return Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));
}

/** The proxy writes its spans as it exits, after the program: wait for the tool call's. */
async function untilProxySpan(file, name, ms = 8000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const spans = proxySpans(file);
    if (spans.some((span) => span.name === name)) return spans;
    if (Date.now() > deadline) throw new Error(`no ${name} span in ${file}: ${JSON.stringify(spans, null, 1)}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

function withOutput(t) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-otel-proxy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'proxy.jsonl');
}

const dumpOf = (spans) => spans.map((span) => `${span.kind} ${span.name} status=${JSON.stringify(span.status)} ${JSON.stringify(span.attributes)}`).join('\n');

test('@ai-sdk/mcp: mcp-otel in process makes no span (its client is not the official SDK)', { skip }, async () => {
  const { result } = await runProgram('ai-sdk', 'quick');
  assert.equal(result.error, undefined, JSON.stringify(result.error));
  assert.match(result.value.toolOutput, /quick:hi traceparent=none/); // nothing injected either
  assert.deepEqual(mcpSpans(result), []);
  assert.deepEqual(result.spans.map((span) => span.name), ['ambient']);
});

test('@ai-sdk/mcp behind `mcp-otel proxy`: one SERVER span per call, ok', { skip: skipProxy }, async (t) => {
  const output = withOutput(t);
  const { result } = await runProgram('ai-sdk', 'quick', { extra: [PROXY, output] });
  assert.equal(result.error, undefined, JSON.stringify(result.error));
  const spans = await untilProxySpan(output, 'tools/call quick');
  const dump = dumpOf(spans);
  for (const span of spans) {
    assert.equal(span.kind, OTLP_KIND.SERVER, dump);
    assert.equal(span.scope, 'mcp_otel');
    assert.equal(span.resource['service.name'], 'frameworks-proxy');
    assert.equal(span.attributes['network.transport'], 'pipe');
    assert.equal(span.attributes['mcp.server.name'], 'frameworks-v2');
  }
  // @ai-sdk/mcp probes server/discover (2026-07-28) first; the server refuses it (-32601) and
  // the handshake goes on with initialize: a negotiation step, no outcome.
  assert.deepEqual(spans.map((span) => span.name).sort(), [
    'initialize', 'notifications/initialized', 'server/discover', 'tools/call quick', 'tools/list',
  ], dump);
  const discover = spans.find((span) => span.name === 'server/discover');
  assert.equal(discover.attributes['mcp.request.result_type'], 'negotiation');
  assert.equal(discover.attributes['rpc.response.status_code'], '-32601');
  assert.equal(discover.attributes['mcp.request.outcome'], undefined);
  for (const name of ['initialize', 'tools/list']) {
    assert.equal(spans.find((span) => span.name === name).attributes['mcp.request.outcome'], 'ok', dump);
  }
  const call = spans.find((span) => span.name === 'tools/call quick');
  assert.equal(call.attributes['mcp.method.name'], 'tools/call');
  assert.equal(call.attributes['gen_ai.tool.name'], 'quick');
  assert.equal(call.attributes['mcp.request.outcome'], 'ok');
  assert.equal(call.attributes['tool.outcome'], 'ok');
  assert.equal(call.attributes['mcp.protocol.version'], '2025-11-25');
  assert.equal(call.attributes['error.type'], undefined);
  assert.equal(call.status.code, undefined, 'status UNSET');
});

test('@ai-sdk/mcp behind `mcp-otel proxy --as client`: one CLIENT span per call, its context sent on', { skip: skipProxy }, async (t) => {
  const output = withOutput(t);
  const { result } = await runProgram('ai-sdk', 'quick', { extra: [PROXY, output, 'client'] });
  assert.equal(result.error, undefined, JSON.stringify(result.error));
  const spans = await untilProxySpan(output, 'tools/call quick');
  const dump = dumpOf(spans);
  const calls = spans.filter((span) => span.name === 'tools/call quick');
  assert.equal(calls.length, 1, dump);
  const [call] = calls;
  assert.equal(call.kind, OTLP_KIND.CLIENT, dump);
  assert.equal(call.attributes['gen_ai.tool.name'], 'quick');
  assert.equal(call.attributes['mcp.request.outcome'], 'ok');
  assert.equal(call.status.code, undefined, 'status UNSET');
  // The proxy put its span's context in params._meta: the server saw it.
  assert.match(result.value.toolOutput, new RegExp(`traceparent=00-${call.traceId}-${call.spanId}-0[13]`)); // sampled (and random: the Python SDK)

  // docs/proxy.md: given --name, the proxy's service.name is that name as it is.
  assert.equal(call.resource['service.name'], 'frameworks-proxy');
});

test('@ai-sdk/mcp behind `mcp-otel proxy`: the caller aborts the call', { skip: skipProxy }, async (t) => {
  const output = withOutput(t);
  const [{ result }, { result: bare }] = await Promise.all([
    runProgram('ai-sdk', 'abort', { extra: [PROXY, output] }),
    runProgram('ai-sdk', 'abort', { instrumented: false }),
  ]);
  // @ai-sdk/mcp rejects at once with its own error, the abort as its cause, the proxy or not.
  assert.ok(result.error, 'the call rejected');
  assert.deepEqual(result.error, bare.error);
  assert.equal(result.error.class, 'MCPClientError');
  assert.equal(result.error.message, 'Request was aborted');
  assert.equal(result.error.causes[0]?.name, 'AbortError');
  // It sends no notifications/cancelled: the server never hears of the abort, and the call is
  // in flight until the client's close() ends the proxy (SIGTERM, which the proxy passes on).
  assert.equal(result.slowAborted, false);
  assert.equal(bare.slowAborted, false);
  const spans = await untilProxySpan(output, 'tools/call slow');
  const dump = dumpOf(spans);
  assert.equal(spans.filter((span) => span.name === 'notifications/cancelled').length, 0, dump);
  const calls = spans.filter((span) => span.name === 'tools/call slow');
  assert.equal(calls.length, 1, dump);
  const [call] = calls;
  // The proxy knows the SIGTERM came from its client (the process that started it): the client
  // left, abandoning the call (cancelled, disconnect), not the server shutting down under it.
  assert.equal(call.attributes['mcp.request.outcome'], 'cancelled', dump);
  assert.equal(call.attributes['mcp.request.cancel.reason'], 'disconnect', dump);
  assert.equal(call.attributes['error.type'], undefined, dump);
  assert.equal(call.status.code, undefined, 'status UNSET');
});
