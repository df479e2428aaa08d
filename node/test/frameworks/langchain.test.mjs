// @langchain/mcp-adapters 1.1.4 on v1 @modelcontextprotocol/sdk, its tools in a LangGraph ReAct
// agent: one CLIENT span per MCP call, the caller's abort included. LangChain traces through its
// callbacks (LangSmith), not OpenTelemetry, so the MCP spans' parent is the OTel span the
// application has open around the run: the test's ambient span. mcp-otel needs the ESM loader hook
// (`--import`): the adapters import the SDK's ESM files.
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
const SERVER = 'frameworks-v1';

test('@langchain/mcp-adapters: one tools/call CLIENT span under the ambient span, ok', { skip }, async () => {
  const { result } = await runProgram('langchain', 'quick');
  assert.equal(result.error, undefined, JSON.stringify(result.error));
  const span = onlyClientSpan(assert, result, 'tools/call quick');
  assertToolCallSpan(assert, result, span, { tool: 'quick', server: SERVER, outcome: 'ok' });
  assert.match(result.value.toolOutput, new RegExp(`traceparent=00-${span.traceId}-${span.spanId}-01`));
  assert.equal(result.value.finalOutput, `done: ${JSON.parse(result.value.toolOutput)}`);
  // What the adapters send: the handshake and one tool list, at getTools(), before the run.
  assert.deepEqual(spanNames(result), ['initialize', 'notifications/initialized', 'tools/call quick', 'tools/list']);
  assertEveryRequestHasAnOutcome(assert, result);
  assert.deepEqual(result.langchainRuns, [{ type: 'tool', name: 'quick' }]);

  // The handshake settled the protocol version; every later span of the connection says it, also
  // through the Proxy the adapters wrap their Client in (mcp-otel keeps it per transport).
  const initialize = onlyClientSpan(assert, result, 'initialize');
  assert.equal(span.attributes['mcp.protocol.version'], initialize.attributes['mcp.protocol.version']);
});

test('@langchain/mcp-adapters: the caller aborts the run: cancelled/caller, UNSET, the same rejection', { skip }, async () => {
  const [{ result }, { result: bare }] = await Promise.all([
    runProgram('langchain', 'abort'),
    runProgram('langchain', 'abort', { instrumented: false }),
  ]);
  // The graph rejects with the abort; the tool itself failed with the SDK's -32001 error (v1
  // rejects a caller's abort with its timeout code), which the adapters wrap in a ToolException.
  assert.ok(result.error, 'the run rejected');
  assert.deepEqual(result.error, bare.error);
  assert.equal(result.error.name, 'AbortError');
  assert.deepEqual(result.langchainRuns, bare.langchainRuns);
  assert.match(result.langchainRuns.at(-1).message, /MCP error -32001: AbortError/);
  assert.equal(result.slowAborted, true);
  assert.equal(bare.slowAborted, true);
  const span = onlyClientSpan(assert, result, 'tools/call slow');
  assertToolCallSpan(assert, result, span, { tool: 'slow', server: SERVER, outcome: 'cancelled', cancelReason: 'caller' });
  assert.deepEqual(spanNames(result), ['initialize', 'notifications/cancelled', 'notifications/initialized', 'tools/call slow', 'tools/list']);
  assertEveryRequestHasAnOutcome(assert, result);
});
