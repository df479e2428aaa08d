// Every outcome, both sides, both SDK generations, in memory: the span each side makes, the point
// it records, and what the application sees (the same with the instrumentation disabled).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { SpanKind, SpanStatusCode } = require('@opentelemetry/api');
const mcpOtel = require('../dist/cjs/index.js');
const { setup, until } = require('./support/telemetry.cjs');
const { load, connect, SDK_DIR } = require('./support/sdk.cjs');
const sdkRequireTypes = () => require('node:module').createRequire(require('node:path').join(SDK_DIR, 'package.json'))('@modelcontextprotocol/sdk/types.js');

const telemetry = setup(mcpOtel);
const semconv = require('../dist/cjs/semconv.js'); // the names module: the package keeps it inside

/** The CLIENT and SERVER span named `name` (the latest of each). */
function sides(name) {
  const spans = telemetry.spans().filter((span) => span.name === name);
  const of = (kind) => spans.filter((span) => span.kind === kind).at(-1);
  return { client: of(SpanKind.CLIENT), server: of(SpanKind.SERVER) };
}

/** What a span states: its outcome attributes and status, exactly. */
function stated(span) {
  const keys = [
    semconv.MCP_REQUEST_OUTCOME,
    semconv.MCP_REQUEST_CANCEL_REASON,
    semconv.TOOL_OUTCOME,
    semconv.TOOL_CANCEL_REASON,
    semconv.ERROR_TYPE,
    semconv.RPC_RESPONSE_STATUS_CODE,
    semconv.MCP_REQUEST_RESULT_TYPE,
    semconv.MCP_ELICITATION_ACTION,
  ];
  const attributes = Object.fromEntries(keys.filter((key) => key in span.attributes).map((key) => [key, span.attributes[key]]));
  return { ...attributes, status: span.status.code === SpanStatusCode.ERROR ? 'ERROR' : 'UNSET' };
}

/** What the application saw: a result, or a rejection's class, code and message. */
async function seen(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { rejected: error.constructor.name, code: error.code, message: error.message };
  }
}

/** Run `action(connection)` instrumented, then with the instrumentation disabled: the same seen. */
async function transparently(sdk, action, options) {
  const instrumented = await connect(sdk, options);
  const withUs = await seen(action(instrumented));
  telemetry.instrumentation.disable();
  let without;
  try {
    without = await seen(action(await connect(sdk, options)));
  } finally {
    telemetry.instrumentation.enable();
  }
  assert.deepEqual(withUs, without, 'the application sees the same with and without mcp-otel');
  return { seen: withUs, connection: instrumented };
}

const ok = (tool = false) => ({ [semconv.MCP_REQUEST_OUTCOME]: 'ok', ...(tool ? { [semconv.TOOL_OUTCOME]: 'ok' } : {}), status: 'UNSET' });
const cancelled = (reason) => ({
  [semconv.MCP_REQUEST_OUTCOME]: 'cancelled',
  [semconv.TOOL_OUTCOME]: 'cancelled',
  [semconv.MCP_REQUEST_CANCEL_REASON]: reason,
  [semconv.TOOL_CANCEL_REASON]: reason,
  status: 'UNSET',
});
const failed = (errorType, { tool = true, code } = {}) => ({
  [semconv.MCP_REQUEST_OUTCOME]: 'failed',
  ...(tool ? { [semconv.TOOL_OUTCOME]: 'failed' } : {}),
  [semconv.ERROR_TYPE]: errorType,
  ...(code === undefined ? {} : { [semconv.RPC_RESPONSE_STATUS_CODE]: String(code) }),
  status: 'ERROR',
});

for (const generation of ['v1', 'v2']) {
  const sdk = load(generation);

  test(`${generation} ${sdk.version}: a result is ok on both sides, one trace, the same point attributes`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client }) => client.callTool({ name: 'echo', arguments: { text: 'hi' } }));
    assert.deepEqual(got.result.content, [{ type: 'text', text: 'hi' }]);
    await until(() => sides('tools/call echo').server && sides('tools/call echo').client, 'both spans');
    const { client, server } = sides('tools/call echo');
    assert.deepEqual(stated(client), ok(true));
    assert.deepEqual(stated(server), ok(true));
    assert.equal(server.spanContext().traceId, client.spanContext().traceId);
    assert.equal(server.parentSpanContext.spanId, client.spanContext().spanId);
    for (const span of [client, server]) {
      assert.equal(span.attributes[semconv.MCP_METHOD_NAME], 'tools/call');
      assert.equal(span.attributes[semconv.GEN_AI_TOOL_NAME], 'echo');
      assert.equal(span.attributes[semconv.GEN_AI_OPERATION_NAME], 'execute_tool');
      assert.equal(span.attributes[semconv.MCP_SERVER_NAME], 'outcomes');
      assert.equal(span.attributes[semconv.MCP_SERVER_VERSION], '2.1.0');
      assert.equal(span.attributes[semconv.JSONRPC_REQUEST_ID], client.attributes[semconv.JSONRPC_REQUEST_ID]);
      assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], client.attributes[semconv.MCP_PROTOCOL_VERSION]);
      assert.ok(!(semconv.GEN_AI_TOOL_CALL_ARGUMENTS in span.attributes), 'no arguments unless opted in');
    }
    const points = await telemetry.points(semconv.MCP_CLIENT_OPERATION_DURATION);
    const point = points.find((p) => p.attributes[semconv.GEN_AI_TOOL_NAME] === 'echo');
    assert.deepEqual(point.attributes, {
      [semconv.MCP_METHOD_NAME]: 'tools/call',
      [semconv.GEN_AI_OPERATION_NAME]: 'execute_tool',
      [semconv.GEN_AI_TOOL_NAME]: 'echo',
      [semconv.MCP_SERVER_NAME]: 'outcomes',
      [semconv.MCP_PROTOCOL_VERSION]: client.attributes[semconv.MCP_PROTOCOL_VERSION],
      [semconv.MCP_REQUEST_OUTCOME]: 'ok',
      [semconv.TOOL_OUTCOME]: 'ok',
    });
    assert.deepEqual(point.value.buckets.boundaries, [...semconv.DURATION_BUCKETS]);
    // The handshake's spans: the version the server answered with, on both sides.
    const handshake = sides('initialize');
    assert.equal(handshake.server.attributes[semconv.MCP_PROTOCOL_VERSION], handshake.client.attributes[semconv.MCP_PROTOCOL_VERSION]);
    assert.match(handshake.server.attributes[semconv.MCP_PROTOCOL_VERSION], /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(point.scope.name, 'mcp_otel');
  });

  test(`${generation}: isError is a tool error on both sides`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client }) => client.callTool({ name: 'fail', arguments: {} }));
    assert.equal(got.result.isError, true);
    await until(() => sides('tools/call fail').server, 'server span');
    const { client, server } = sides('tools/call fail');
    assert.deepEqual(stated(client), failed('tool_error'));
    assert.deepEqual(stated(server), failed('tool_error'));
  });

  test(`${generation}: the caller's abort is cancelled/caller, the server's cancelled/client, never a timeout`, async () => {
    telemetry.reset();
    const { seen: got, connection } = await transparently(sdk, ({ client }) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 30);
      return sdk.callTool(client, { name: 'slow', arguments: {} }, { signal: controller.signal });
    });
    // What the SDK itself rejects a caller's abort with: its request-timeout error.
    assert.equal(got.code, generation === 'v1' ? -32001 : 'REQUEST_TIMEOUT');
    await until(() => connection.handled.slowAborted === true, 'the handler aborted');
    await until(() => sides('tools/call slow').server, 'server span');
    const { client, server } = sides('tools/call slow');
    assert.deepEqual(stated(client), cancelled('caller'));
    assert.deepEqual(stated(server), cancelled('client'));
    const cancel = sides('notifications/cancelled');
    assert.equal(cancel.client.parentSpanContext.spanId, client.spanContext().spanId, 'the cancel sent is the request it cancels');
    assert.equal(cancel.server.parentSpanContext.spanId, cancel.client.spanContext().spanId);
    for (const span of [cancel.client, cancel.server]) assert.ok(!(semconv.MCP_REQUEST_OUTCOME in span.attributes));
  });

  test(`${generation}: the SDK's own timeout is failed/timeout for the caller, a cancel for the server`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client }) =>
      sdk.callTool(client, { name: 'slow', arguments: {} }, { timeout: 30 }),
    );
    assert.match(got.message, /Request timed out/);
    await until(() => sides('tools/call slow').server, 'server span');
    const { client, server } = sides('tools/call slow');
    assert.deepEqual(stated(client), failed('timeout'));
    assert.deepEqual(stated(server), cancelled('client'));
  });

  test(`${generation}: a server's JSON-RPC error is its code, ERROR on both sides`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client }) => client.listResources());
    assert.equal(got.code, -32603);
    await until(() => sides('resources/list').server, 'server span');
    const { client, server } = sides('resources/list');
    assert.deepEqual(stated(client), failed('-32603', { tool: false, code: -32603 }));
    assert.deepEqual(stated(server), failed('-32603', { tool: false, code: -32603 }));
  });

  test(`${generation}: a caller's fault (-32602) fails the caller only: the server's span is UNSET, no error.type`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client }) => client.getPrompt({ name: 'no-such-prompt' }));
    assert.equal(got.code, -32602);
    await until(() => sides('prompts/get no-such-prompt').server, 'server span');
    const { client, server } = sides('prompts/get no-such-prompt');
    assert.deepEqual(stated(client), failed('-32602', { tool: false, code: -32602 }));
    assert.deepEqual(stated(server), {
      [semconv.MCP_REQUEST_OUTCOME]: 'failed',
      [semconv.RPC_RESPONSE_STATUS_CODE]: '-32602',
      status: 'UNSET',
    });
    const points = await telemetry.points(semconv.MCP_SERVER_OPERATION_DURATION);
    const point = points.find((p) => p.attributes[semconv.MCP_METHOD_NAME] === 'prompts/get');
    assert.equal(point.attributes[semconv.RPC_RESPONSE_STATUS_CODE], '-32602');
    assert.ok(!(semconv.ERROR_TYPE in point.attributes));
  });

  test(`${generation}: an unknown method is the SDK's -32601, a caller's fault on the server`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client }) => client.complete({ ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'x', value: 'y' } }));
    assert.equal(got.code, -32601);
    await until(() => sides('completion/complete').server, 'server span');
    const { client, server } = sides('completion/complete');
    assert.deepEqual(stated(client), failed('-32601', { tool: false, code: -32601 }));
    assert.deepEqual(stated(server), { [semconv.MCP_REQUEST_OUTCOME]: 'failed', [semconv.RPC_RESPONSE_STATUS_CODE]: '-32601', status: 'UNSET' });
  });

  test(`${generation}: a person's decline is input_declined on the elicitation's spans and the call's, never a failure`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client }) => client.callTool({ name: 'ask', arguments: {} }));
    assert.equal(got.result.isError, true);
    await until(() => sides('tools/call ask').server && sides('tools/call ask').client, 'the call spans');
    const elicitation = sides('elicitation/create');
    const declined = { ...cancelled('input_declined') };
    delete declined[semconv.TOOL_OUTCOME];
    delete declined[semconv.TOOL_CANCEL_REASON];
    assert.deepEqual(stated(elicitation.client), { ...declined, [semconv.MCP_ELICITATION_ACTION]: 'decline' });
    assert.deepEqual(stated(elicitation.server), { ...declined, [semconv.MCP_ELICITATION_ACTION]: 'decline' });
    const call = sides('tools/call ask');
    assert.deepEqual(stated(call.server), cancelled('input_declined'));
    assert.deepEqual(stated(call.client), cancelled('input_declined'));
    // One trace: the elicitation is the child of the call's SERVER span.
    assert.equal(elicitation.client.parentSpanContext.spanId, call.server.spanContext().spanId);
    assert.equal(elicitation.server.parentSpanContext.spanId, elicitation.client.spanContext().spanId);
  });

  test(`${generation}: an accepted elicitation leaves the call ok`, async () => {
    telemetry.reset();
    await transparently(sdk, ({ client }) => client.callTool({ name: 'ask', arguments: {} }), {
      elicitAnswer: { action: 'accept', content: { name: 'Ada' } },
    });
    await until(() => sides('tools/call ask').client, 'the call span');
    assert.deepEqual(stated(sides('tools/call ask').client), ok(true));
    assert.deepEqual(stated(sides('elicitation/create').client), { ...ok(), [semconv.MCP_ELICITATION_ACTION]: 'accept' });
  });

  test(`${generation}: the connection closing mid-call is failed/connection_closed for the caller, cancelled/disconnect for the server`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client, clientTransport }) => {
      const call = client.callTool({ name: 'slow', arguments: {} });
      setTimeout(() => void clientTransport.close(), 30);
      return call;
    });
    assert.equal(got.code, generation === 'v1' ? -32000 : 'CONNECTION_CLOSED');
    await until(() => sides('tools/call slow').server, 'server span');
    const { client, server } = sides('tools/call slow');
    assert.deepEqual(stated(client), failed('connection_closed'));
    assert.deepEqual(stated(server), cancelled('disconnect'));
  });

  test(`${generation}: a caller whose signal is already aborted sends nothing, so has no span`, async () => {
    telemetry.reset();
    const { seen: got } = await transparently(sdk, ({ client }) =>
      sdk.callTool(client, { name: 'echo', arguments: { text: 'x' } }, { signal: AbortSignal.abort() }),
    );
    assert.ok(got.rejected);
    assert.equal(sides('tools/call echo').client, undefined);
    assert.equal(sides('tools/call echo').server, undefined);
  });
}

for (const generation of ['v1', 'v2']) {
  const sdk = load(generation);
  test(`${generation}: callTool's own check of the answer (the tool's output schema) is on the call's span`, async () => {
    telemetry.reset();
    const z = require('zod');
    const { client, server } = await connect(sdk);
    // The server lists a tool with an output schema, then answers the call without structured
    // content: the client's own check rejects what the server answered.
    server.registerTool('typed', { outputSchema: sdk.schema({ n: z.number() }) }, async () => ({ content: [], structuredContent: { n: 1 } }));
    server.server.setRequestHandler(...sdk.callToolHandler(async () => ({ content: [{ type: 'text', text: 'no structure' }] })));
    await client.listTools();
    const got = await seen(client.callTool({ name: 'typed', arguments: {} }));
    assert.ok(got.rejected, JSON.stringify(got));
    await until(() => sides('tools/call typed').client && sides('tools/call typed').server, 'both spans');
    const { client: callSpan, server: handled } = sides('tools/call typed');
    assert.deepEqual(stated(handled), ok(true), 'the server answered');
    assert.deepEqual(stated(callSpan), failed(got.rejected), 'the caller got an error');
  });
}

for (const generation of ['v1', 'v2']) {
  const sdk = load(generation);
  test(`${generation}: a Client used through a Proxy (LangChain's adapters) keeps its connection's facts`, async () => {
    telemetry.reset();
    const { client } = await connect(sdk);
    const proxied = new Proxy(client, { get: (target, name) => target[name] });
    await proxied.callTool({ name: 'echo', arguments: { text: 'x' } });
    await until(() => sides('tools/call echo').client, 'client span');
    const { client: span } = sides('tools/call echo');
    const handshake = telemetry.spans().find((s) => s.name === 'initialize' && s.kind === SpanKind.CLIENT);
    assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], handshake.attributes[semconv.MCP_PROTOCOL_VERSION]);
    assert.ok(span.attributes[semconv.MCP_PROTOCOL_VERSION]);
    const controller = new AbortController();
    const call = sdk.callTool(proxied, { name: 'slow', arguments: {} }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await call.catch(() => undefined);
    await until(() => sides('notifications/cancelled').client, 'the cancel sent');
    assert.equal(sides('notifications/cancelled').client.parentSpanContext.spanId, sides('tools/call slow').client.spanContext().spanId);
  });
}

for (const generation of ['v1', 'v2']) {
  const sdk = load(generation);
  test(`${generation}: a tools/call another client sends inside a callTool is its own request, ended by its own answer`, async () => {
    telemetry.reset();
    const outer = await connect(sdk);
    const inner = await connect(sdk);
    const schema = generation === 'v1' ? sdkRequireTypes().CallToolResultSchema : undefined;
    outer.server.registerTool('relay', { description: 'asks another server' }, async () => {
      const request = { method: 'tools/call', params: { name: 'echo', arguments: { text: 'inner' } } };
      return schema ? inner.client.request(request, schema) : inner.client.request(request);
    });
    // Not trusting the sender's context, the handler runs in the caller's (both are in this process).
    telemetry.instrumentation.setConfig({ trustRemoteContext: false });
    try {
      const answer = await outer.client.callTool({ name: 'relay', arguments: {} });
      assert.deepEqual(answer.content, [{ type: 'text', text: 'inner' }]);
    } finally {
      telemetry.instrumentation.setConfig({});
    }
    await until(() => sides('tools/call relay').server && sides('tools/call echo').client, 'both calls');
    const relay = sides('tools/call relay').server;
    const echo = sides('tools/call echo').client;
    assert.deepEqual(stated(echo), ok(true));
    assert.deepEqual(stated(sides('tools/call relay').client), ok(true));
    // Spans are exported as they end, one at a time (a simple processor): their order is the
    // order they ended in (end times are not comparable below a millisecond across spans).
    const order = telemetry.spans();
    assert.ok(order.indexOf(echo) < order.indexOf(relay), 'the inner request ended with its answer, before the relay answered');
  });
}

for (const generation of ['v1', 'v2']) {
  const sdk = load(generation);
  test(`${generation}: what a connection's requests share is built once, yet each request states its own`, async () => {
    telemetry.reset();
    // The client's ok echo points (the metrics live on from test to test), by the server they name.
    const echoes = async () => {
      const count = { outcomes: 0, renamed: 0 };
      for (const point of await telemetry.points(semconv.MCP_CLIENT_OPERATION_DURATION)) {
        const server = point.attributes[semconv.MCP_SERVER_NAME];
        if (point.attributes[semconv.GEN_AI_TOOL_NAME] === 'echo' && server in count) count[server] += point.value.count;
      }
      return count;
    };
    const before = await echoes();
    const { client } = await connect(sdk);
    const names = Array.from({ length: 300 }, (_, i) => `tool${i}`); // more than a connection keeps
    for (const name of ['echo', 'echo', ...names, 'echo']) await seen(client.callTool({ name, arguments: { text: 'x' } }));
    telemetry.instrumentation.setConfig({ serverName: 'renamed' });
    try {
      await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    } finally {
      telemetry.instrumentation.setConfig({});
    }
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await until(() => telemetry.spans().filter((s) => s.kind === SpanKind.SERVER && s.name.startsWith('tools/call')).length === 305, 'every server span');
    for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
      const calls = telemetry.spans().filter((s) => s.kind === kind && s.name.startsWith('tools/call'));
      assert.deepEqual(calls.map((s) => s.attributes[semconv.GEN_AI_TOOL_NAME]), ['echo', 'echo', ...names, 'echo', 'echo', 'echo']);
      assert.equal(new Set(calls.map((s) => s.attributes[semconv.JSONRPC_REQUEST_ID])).size, 305, 'each its own id');
      // The setting names the server (both sides are in this process), from the next request on.
      assert.deepEqual(calls.slice(-3).map((s) => s.attributes[semconv.MCP_SERVER_NAME]), ['outcomes', 'renamed', 'outcomes']);
      const [first, second] = calls.map((s) => ({ ...s.attributes, [semconv.JSONRPC_REQUEST_ID]: undefined }));
      assert.deepEqual(second, first);
    }
    const after = await echoes();
    assert.deepEqual([after.outcomes - before.outcomes, after.renamed - before.renamed], [4, 1], 'the points say the same');
  });
}

for (const generation of ['v1', 'v2']) {
  const sdk = load(generation);
  test(`${generation}: a session's duration is one point per side when it closes, naming its server and version only`, async () => {
    const before = async (name) => (await telemetry.points(name)).reduce((sum, point) => sum + point.value.count, 0);
    const clients = await before(semconv.MCP_CLIENT_SESSION_DURATION);
    const servers = await before(semconv.MCP_SERVER_SESSION_DURATION);
    const { client } = await connect(sdk);
    await client.close();
    assert.equal(await before(semconv.MCP_CLIENT_SESSION_DURATION), clients + 1);
    assert.equal(await before(semconv.MCP_SERVER_SESSION_DURATION), servers + 1);
    for (const name of [semconv.MCP_CLIENT_SESSION_DURATION, semconv.MCP_SERVER_SESSION_DURATION]) {
      for (const point of await telemetry.points(name)) {
        assert.deepEqual(Object.keys(point.attributes).sort(), [semconv.MCP_PROTOCOL_VERSION, semconv.MCP_SERVER_NAME].sort());
      }
    }
  });
}
