// @openai/agents 0.20 on v2 @modelcontextprotocol/client: one CLIENT span per MCP call, the
// caller's abort included. Its own tracing is not OpenTelemetry (a `function` span per tool call
// in its own traces), so the MCP spans' parent is the OTel span the application has open around
// the run: the test's ambient span. mcp-otel needs the ESM loader hook (`--import`): the Agents
// SDK loads the MCP client with `import()`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEveryRequestHasAnOutcome,
  assertToolCallSpan,
  notInstalled,
  onlyClientSpan,
  runProgram,
  spanNames,
} from './support/run.mjs';

const skip = notInstalled();
const SERVER = 'frameworks-v2';

test('@openai/agents: one tools/call CLIENT span under the ambient span, ok', { skip }, async () => {
  const { result } = await runProgram('openai-agents', 'quick');
  assert.equal(result.error, undefined, JSON.stringify(result.error));
  assert.equal(result.value.finalOutput, 'done');
  const span = onlyClientSpan(assert, result, 'tools/call quick');
  assertToolCallSpan(assert, result, span, { tool: 'quick', server: SERVER, outcome: 'ok' });
  // mcp-otel's context reached the server through the framework (params._meta.traceparent).
  assert.match(result.value.toolOutput, new RegExp(`traceparent=00-${span.traceId}-${span.spanId}-01`));
  // What the framework sends: v2's probe (refused) and the handshake at connect(), the tool list on
  // each turn (two turns).
  assert.deepEqual(spanNames(result), ['initialize', 'notifications/initialized', 'server/discover', 'tools/call quick', 'tools/list', 'tools/list']);
  assertEveryRequestHasAnOutcome(assert, result);
  for (const each of result.spans.filter((s) => s.name === 'tools/list')) assert.equal(each.parentSpanId, result.ambientSpanId);
  // The framework's own span of the call is in its own tracing, not OTel.
  assert.ok(result.agentsSpans.some((s) => s.type === 'function' && s.name === 'quick'), JSON.stringify(result.agentsSpans));
});

test('@openai/agents: the caller aborts the run: cancelled/caller, UNSET, the same rejection', { skip }, async () => {
  const [{ result }, { result: bare }] = await Promise.all([
    runProgram('openai-agents', 'abort'),
    runProgram('openai-agents', 'abort', { instrumented: false }),
  ]);
  // What the application sees is what it sees without mcp-otel: run() rejects with the abort.
  assert.ok(result.error, 'the run rejected');
  assert.deepEqual(result.error, bare.error);
  assert.equal(result.error.class, 'DOMException');
  assert.equal(result.error.name, 'AbortError');
  // The framework told the server (notifications/cancelled), both times.
  assert.equal(result.slowAborted, true);
  assert.equal(bare.slowAborted, true);
  assert.equal(bare.spans.length, 0);
  const span = onlyClientSpan(assert, result, 'tools/call slow');
  assertToolCallSpan(assert, result, span, { tool: 'slow', server: SERVER, outcome: 'cancelled', cancelReason: 'caller' });
  assert.deepEqual(spanNames(result), ['initialize', 'notifications/cancelled', 'notifications/initialized', 'server/discover', 'tools/call slow', 'tools/list']);
  assertEveryRequestHasAnOutcome(assert, result);
  assert.ok(result.agentsSpans.some((s) => s.type === 'function' && s.name === 'slow'), JSON.stringify(result.agentsSpans));
});
