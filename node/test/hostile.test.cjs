// Bad input and faults: a peer's hostile `_meta`, huge names, an exporter that throws or hangs, and
// the instrumentation disabled. The application's traffic is never blocked and never changed.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { SpanKind } = require('@opentelemetry/api');
const { isWrapped } = require('@opentelemetry/instrumentation');
const mcpOtel = require('../dist/cjs/index.js');
const { setup, until } = require('./support/telemetry.cjs');
const { load, connect, makeServer } = require('./support/sdk.cjs');

const telemetry = setup(mcpOtel);
const semconv = require('../dist/cjs/semconv.js'); // the names module: the package keeps it inside
const PATCHED = {
  v1: ['request', '_onrequest', '_onnotification', '_oncancel', '_onclose', 'close', 'connect'],
  v2: ['_requestWithSchemaViaCodec', '_onrequest', '_onnotification', '_oncancel', '_onclose', 'close', 'connect'],
};

/** A server alone, driven by raw JSON-RPC messages: what a hostile peer can send. */
async function rawPeer(sdk) {
  const { server } = makeServer(sdk);
  const [peer, serverSide] = sdk.InMemoryTransport.createLinkedPair();
  const answers = new Map();
  peer.onmessage = (message) => {
    if (message.id !== undefined) answers.set(message.id, message);
  };
  await peer.start();
  await server.connect(serverSide);
  let id = 1000;
  return {
    async request(method, params) {
      const sent = ++id;
      await peer.send({ jsonrpc: '2.0', id: sent, method, params });
      await until(() => answers.has(sent), `answer ${sent}`);
      return answers.get(sent);
    },
  };
}

for (const generation of ['v1', 'v2']) {
  const sdk = load(generation);

  test(`${generation}: a peer's hostile _meta is ignored, never followed, and the answer is the same`, async () => {
    const peer = await rawPeer(sdk);
    await peer.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'hostile', version: '0' },
    });
    const hostile = [
      { traceparent: 12345, tracestate: { nested: true }, baggage: ['a'] },
      { traceparent: 'garbage', baggage: 'x'.repeat(100_000) },
      { traceparent: `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01` },
      { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, baggage: `gen_ai.conversation.id=${'c'.repeat(10_000)}` },
      { traceparent: [`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`], ['x'.repeat(1000)]: 'y'.repeat(100_000) },
      // (A `_meta` that is no object is refused by the SDK before any handler: no answer, no span.)
    ];
    for (const meta of hostile) {
      telemetry.reset();
      const answer = await peer.request('tools/call', { name: 'echo', arguments: { text: 'x' }, _meta: meta });
      assert.deepEqual(answer.result.content, [{ type: 'text', text: 'x' }], JSON.stringify(meta).slice(0, 80));
      await until(() => telemetry.spans().some((span) => span.kind === SpanKind.SERVER), 'the server span');
      const span = telemetry.spans().find((s) => s.kind === SpanKind.SERVER && s.name === 'tools/call echo');
      assert.equal(span.attributes[semconv.MCP_REQUEST_OUTCOME], 'ok');
      const followed = span.parentSpanContext?.traceId === 'a'.repeat(32);
      assert.equal(followed, meta.traceparent === `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, 'only a valid traceparent is a parent');
      const conversation = span.attributes[semconv.GEN_AI_CONVERSATION_ID];
      assert.ok(conversation === undefined || conversation.length <= 256, 'a conversation id is bounded');
    }
  });

  test(`${generation}: a huge tool name is cut on the span and bounded on the point; the answer is the same`, async () => {
    telemetry.reset();
    const { client } = await connect(sdk);
    const name = 'n'.repeat(100_000);
    const seen = await client.callTool({ name, arguments: {} }).then(
      (result) => ({ result }),
      (error) => ({ code: error.code, message: error.message }),
    );
    telemetry.instrumentation.disable();
    const { client: bare } = await connect(sdk);
    const without = await bare.callTool({ name, arguments: {} }).then(
      (result) => ({ result }),
      (error) => ({ code: error.code, message: error.message }),
    );
    telemetry.instrumentation.enable();
    assert.deepEqual(seen, without);
    await until(() => telemetry.spans().filter((span) => span.attributes[semconv.GEN_AI_TOOL_NAME]).length === 2, 'both spans');
    for (const span of telemetry.spans().filter((s) => s.attributes[semconv.GEN_AI_TOOL_NAME])) {
      assert.equal(span.attributes[semconv.GEN_AI_TOOL_NAME].length, 256);
      assert.equal(span.name.length, 'tools/call '.length + 256);
    }
  });

  test(`${generation}: an exporter that throws, or never answers, blocks and changes nothing`, async () => {
    for (const exporter of [
      { export: () => { throw new Error('collector down'); }, shutdown: async () => {} },
      { export: () => {}, shutdown: async () => {} }, // never calls back
    ]) {
      const { BasicTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
      telemetry.instrumentation.setTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
      try {
        const { client } = await connect(sdk);
        for (let i = 0; i < 20; i++) {
          const result = await client.callTool({ name: 'echo', arguments: { text: `x${i}` } });
          assert.deepEqual(result.content, [{ type: 'text', text: `x${i}` }]);
        }
      } finally {
        telemetry.instrumentation.setTracerProvider(telemetry.tracerProvider);
      }
    }
  });

  test(`${generation}: tool content is recorded only when opted in, secrets redacted, bounded`, async () => {
    telemetry.reset();
    const args = { text: 'hello' };
    let { client } = await connect(sdk);
    await client.callTool({ name: 'echo', arguments: args });
    await until(() => telemetry.spans().filter((s) => s.name === 'tools/call echo').length === 2, 'both spans');
    for (const span of telemetry.spans()) {
      assert.ok(!(semconv.GEN_AI_TOOL_CALL_ARGUMENTS in span.attributes));
      assert.ok(!(semconv.GEN_AI_TOOL_CALL_RESULT in span.attributes));
    }
    telemetry.instrumentation.setConfig({ captureContent: true, maxContentLength: 40 });
    try {
      telemetry.reset();
      ({ client } = await connect(sdk));
      await client.callTool({ name: 'echo', arguments: { text: 'hello', api_key: 'sk-secret' } }).catch(() => undefined);
      await client.callTool({ name: 'echo', arguments: args });
      await until(() => telemetry.spans().filter((s) => s.name === 'tools/call echo').length === 4, 'four spans');
      const spans = telemetry.spans().filter((s) => s.name === 'tools/call echo');
      for (const span of spans.slice(0, 2)) {
        assert.equal(span.attributes[semconv.GEN_AI_TOOL_CALL_ARGUMENTS], '{"api_key":"[REDACTED]","text":"hello"}');
      }
      for (const span of spans.slice(2)) {
        assert.equal(span.attributes[semconv.GEN_AI_TOOL_CALL_ARGUMENTS], '{"text":"hello"}');
        assert.equal(span.attributes[semconv.GEN_AI_TOOL_CALL_RESULT], '{"content":[{"text":"hello","type":"text"}]}'.slice(0, 39) + '…');
      }
    } finally {
      telemetry.instrumentation.setConfig({});
    }
  });

  test(`${generation}: disable() leaves nothing patched and makes no span; enable() patches again`, async () => {
    const { client, clientTransport } = await connect(sdk);
    const protocol = generation === 'v1'
      ? Object.getPrototypeOf(Object.getPrototypeOf(client))
      : Object.getPrototypeOf(sdk.Client.prototype);
    for (const name of PATCHED[generation]) assert.ok(isWrapped(protocol[name]), `${name} patched`);
    for (const name of ['callTool', 'connect']) assert.ok(isWrapped(sdk.Client.prototype[name]), `Client.${name} patched`);
    assert.ok(Object.prototype.hasOwnProperty.call(clientTransport, 'send'), 'the transport is watched');
    telemetry.instrumentation.disable();
    try {
      for (const name of PATCHED[generation]) assert.ok(!isWrapped(protocol[name]), `${name} restored`);
      for (const name of ['callTool', 'connect']) assert.ok(!isWrapped(sdk.Client.prototype[name]), `Client.${name} restored`);
      assert.ok(!Object.prototype.hasOwnProperty.call(clientTransport, 'send'), 'the transport restored');
      telemetry.reset();
      const { client: bare } = await connect(sdk);
      await bare.callTool({ name: 'echo', arguments: { text: 'x' } });
      assert.deepEqual(telemetry.spans(), []);
    } finally {
      telemetry.instrumentation.enable();
    }
    for (const name of PATCHED[generation]) assert.ok(isWrapped(protocol[name]), `${name} patched again`);
    // A connection that lived through it is watched again: its answers end SERVER spans.
    assert.ok(Object.prototype.hasOwnProperty.call(clientTransport, 'send'), 'the transport watched again');
    telemetry.reset();
    await client.callTool({ name: 'echo', arguments: { text: 'again' } });
    await until(() => telemetry.spans().filter((s) => s.name === 'tools/call echo').length === 2, 'both spans');
  });
}
