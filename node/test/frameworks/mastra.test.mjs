// @mastra/mcp 2.0 on v2 @modelcontextprotocol/client (2.0.0, the copy it pins), its tools in a
// Mastra Agent: one CLIENT span per MCP call, the caller's abort included. Mastra traces with its
// own observability, not OpenTelemetry (none configured here), so the MCP spans' parent is the
// OTel span the application has open around the run: the test's ambient span. mcp-otel needs the
// ESM loader hook (`--import`): Mastra imports the SDK as ES modules.
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

test('@mastra/mcp: one tools/call CLIENT span under the ambient span, ok', { skip }, async () => {
  const { result } = await runProgram('mastra', 'quick');
  assert.equal(result.error, undefined, JSON.stringify(result.error));
  assert.equal(result.value.finalOutput, 'done');
  assert.equal(result.value.finishReason, 'stop');
  assert.equal(result.sdkVersion, '2.0.0'); // its own pinned copy, hooked by the package's name too
  const span = onlyClientSpan(assert, result, 'tools/call quick');
  assertToolCallSpan(assert, result, span, { tool: 'quick', server: SERVER, outcome: 'ok' });
  assert.match(result.value.toolOutput, new RegExp(`traceparent=00-${span.traceId}-${span.spanId}-01`));
  // What Mastra sends: v2's connect-time probe (refused: a negotiation step), the handshake and
  // one tool list, at listTools(), before the run.
  assert.deepEqual(spanNames(result), ['initialize', 'notifications/initialized', 'server/discover', 'tools/call quick', 'tools/list']);
  assertEveryRequestHasAnOutcome(assert, result);
});

test('@mastra/mcp: the caller aborts the agent: cancelled/caller, UNSET, the same result', { skip }, async () => {
  const [{ result }, { result: bare }] = await Promise.all([
    runProgram('mastra', 'abort'),
    runProgram('mastra', 'abort', { instrumented: false }),
  ]);
  // Mastra's generate() does not reject on the abort: it resolves, the tool call without a
  // result (finishReason tool-calls), and logs the tool's error. The same with mcp-otel.
  assert.equal(result.error, undefined, JSON.stringify(result.error));
  assert.deepEqual(result.value, bare.value);
  assert.equal(result.value.finishReason, 'tool-calls');
  assert.equal(result.value.toolOutput, '[]');
  assert.equal(result.slowAborted, true);
  assert.equal(bare.slowAborted, true);
  const span = onlyClientSpan(assert, result, 'tools/call slow');
  assertToolCallSpan(assert, result, span, { tool: 'slow', server: SERVER, outcome: 'cancelled', cancelReason: 'caller' });
  assert.deepEqual(spanNames(result), ['initialize', 'notifications/cancelled', 'notifications/initialized', 'server/discover', 'tools/call slow', 'tools/list']);
  assertEveryRequestHasAnOutcome(assert, result);
});

test('@mastra/mcp: the caller aborts the tool itself: the SDK timeout error it rejects with is still cancelled/caller', { skip }, async () => {
  const [{ result }, { result: bare }] = await Promise.all([
    runProgram('mastra', 'abort-tool'),
    runProgram('mastra', 'abort-tool', { instrumented: false }),
  ]);
  // The tool's execute() rejects with the SDK's own error for an abort: an SdkError whose code
  // is REQUEST_TIMEOUT. mcp-otel tells it from a timeout: the caller's abort.
  assert.ok(result.error, 'the tool rejected');
  assert.deepEqual(result.error, bare.error);
  assert.equal(result.error.class, 'SdkError');
  assert.equal(result.error.code, 'REQUEST_TIMEOUT');
  assert.equal(result.slowAborted, true);
  const span = onlyClientSpan(assert, result, 'tools/call slow');
  assertToolCallSpan(assert, result, span, { tool: 'slow', server: SERVER, outcome: 'cancelled', cancelReason: 'caller' });
  assertEveryRequestHasAnOutcome(assert, result);
});
