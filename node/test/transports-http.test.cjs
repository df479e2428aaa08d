// Both SDK generations over real streamable HTTP (127.0.0.1, an ephemeral port): the agent in this
// process (instrumented, spans in memory), the server a process of its own
// (fixtures/transports/server.cjs: v1 StreamableHTTPServerTransport, stateful; v2
// createMcpHandler, both eras), its spans written to a file as they end. The transport's
// attributes, the session where one exists, one trace, the caller's abort as each server sees it,
// and the 2026-07-28 negotiation; what the application sees is the same with mcp-otel on both
// sides and on neither.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const mcpOtel = require('../dist/cjs/index.js');
const { setup } = require('./support/telemetry.cjs');
const {
  plain,
  remoteSpans,
  until,
  seen,
  stated,
  ok,
  cancelled,
  find,
  eventOf,
  withHttp,
  transparently,
} = require('./fixtures/transports/harness.cjs');

const telemetry = setup(mcpOtel);
const semconv = require('../dist/cjs/semconv.js'); // the names module: the package keeps it inside
const LEGACY = '2025-11-25';
const MODERN = '2026-07-28';
const AUTO = { versionNegotiation: { mode: 'auto' } };

const agentSpans = () => telemetry.spans().map(plain);

/** The agent's span and the server's span of `name`, once both have ended. */
async function both(file, name) {
  const client = await until(() => find(agentSpans(), name, 'CLIENT'), `the CLIENT span ${name}`);
  const server = await until(() => find(remoteSpans(file), name, 'SERVER'), `the SERVER span ${name}`);
  return { client, server };
}

function oneTrace(client, server) {
  assert.equal(server.traceId, client.traceId, 'one trace');
  assert.equal(server.parentSpanId, client.spanId, "the server's span is the child of the agent's");
}

/** A CLIENT span over HTTP: tcp, the server's address and port from the URL. */
function overTcp(span, port) {
  assert.equal(span.attributes[semconv.NETWORK_TRANSPORT], 'tcp');
  assert.equal(span.attributes[semconv.SERVER_ADDRESS], '127.0.0.1');
  assert.equal(span.attributes[semconv.SERVER_PORT], port);
}

/** `slow` called with an AbortSignal the caller aborts (reason 'user-cancel') once the handler runs. */
async function abortedMidCall(sdk, client, file) {
  const controller = new AbortController();
  const call = seen(sdk.callTool(client, { name: 'slow', arguments: {} }, { signal: controller.signal }));
  await until(() => eventOf(file, 'slow-started'), 'the slow handler to start');
  controller.abort('user-cancel');
  return call;
}

const ECHOED = { content: [{ type: 'text', text: 'hi' }] };

test('v1 HTTP (stateful): ok on both sides, tcp, the server address and port, the session id, one trace', async () => {
  telemetry.reset();
  const got = await transparently(telemetry, (instrumented) =>
    withHttp('v1', { instrumented }, async ({ sdk, client, transport, file, port }) => {
      const answer = await seen(sdk.callTool(client, { name: 'echo', arguments: { text: 'hi' } }));
      if (!instrumented) return answer;
      const sessionId = transport.sessionId;
      assert.match(sessionId, /^[0-9a-f-]{36}$/);
      const { client: sent, server: handled } = await both(file, 'tools/call echo');
      const common = {
        [semconv.MCP_METHOD_NAME]: 'tools/call',
        [semconv.GEN_AI_OPERATION_NAME]: 'execute_tool',
        [semconv.GEN_AI_TOOL_NAME]: 'echo',
        [semconv.MCP_PROTOCOL_VERSION]: LEGACY,
        [semconv.MCP_SESSION_ID]: sessionId,
        [semconv.MCP_SERVER_NAME]: 'transports-v1',
        [semconv.MCP_SERVER_VERSION]: '3.1.4',
        [semconv.NETWORK_TRANSPORT]: 'tcp',
        [semconv.JSONRPC_REQUEST_ID]: '1',
        [semconv.MCP_REQUEST_OUTCOME]: 'ok',
        [semconv.TOOL_OUTCOME]: 'ok',
      };
      assert.deepEqual(sent.attributes, { ...common, [semconv.SERVER_ADDRESS]: '127.0.0.1', [semconv.SERVER_PORT]: port });
      // The server's span has no server.address or server.port (they name the peer on a client).
      assert.deepEqual(handled.attributes, common);
      oneTrace(sent, handled);
      // The session id is the server's from initialize on (its answer carries it to the client).
      const handshake = await both(file, 'initialize');
      assert.equal(handshake.server.attributes[semconv.MCP_SESSION_ID], sessionId);
      assert.equal(handshake.client.attributes[semconv.MCP_SESSION_ID], undefined, 'not known before its answer');
      overTcp(handshake.client, port);
      oneTrace(handshake.client, handshake.server);
      return answer;
    }),
  );
  assert.deepEqual(got, { result: ECHOED });
});

test('v2 HTTP (createMcpHandler, 2025 era by its stateless fallback): ok on both sides, tcp, no session, one trace', async () => {
  telemetry.reset();
  const got = await transparently(telemetry, (instrumented) =>
    withHttp('v2', { instrumented }, async ({ sdk, client, transport, file, port }) => {
      const answer = await seen(sdk.callTool(client, { name: 'echo', arguments: { text: 'hi' } }));
      if (!instrumented) return answer;
      assert.equal(transport.sessionId, undefined);
      assert.equal(client.getNegotiatedProtocolVersion(), LEGACY);
      const { client: sent, server: handled } = await both(file, 'tools/call echo');
      const common = {
        [semconv.MCP_METHOD_NAME]: 'tools/call',
        [semconv.GEN_AI_OPERATION_NAME]: 'execute_tool',
        [semconv.GEN_AI_TOOL_NAME]: 'echo',
        [semconv.MCP_SERVER_NAME]: 'transports-v2',
        [semconv.MCP_SERVER_VERSION]: '3.1.4',
        [semconv.NETWORK_TRANSPORT]: 'tcp',
        [semconv.JSONRPC_REQUEST_ID]: '1',
        [semconv.MCP_REQUEST_OUTCOME]: 'ok',
        [semconv.TOOL_OUTCOME]: 'ok',
      };
      assert.deepEqual(sent.attributes, {
        ...common,
        [semconv.MCP_PROTOCOL_VERSION]: LEGACY,
        [semconv.SERVER_ADDRESS]: '127.0.0.1',
        [semconv.SERVER_PORT]: port,
      });
      // Each POST is served by a fresh server instance that never saw initialize: the version
      // comes from the request's mcp-protocol-version header.
      assert.deepEqual(handled.attributes, { ...common, [semconv.MCP_PROTOCOL_VERSION]: LEGACY });
      oneTrace(sent, handled);
      return answer;
    }),
  );
  assert.deepEqual(got, { result: ECHOED });
});

test(
  'v2 HTTP (2025 era, stateless): the SERVER span names the protocol version from the header of its request',
  async () => {
    telemetry.reset();
    await withHttp('v2', {}, async ({ sdk, client, file }) => {
      await sdk.callTool(client, { name: 'echo', arguments: { text: 'hi' } });
      const { server: handled } = await both(file, 'tools/call echo');
      assert.equal(handled.attributes[semconv.MCP_PROTOCOL_VERSION], LEGACY);
    });
  },
);

test("v1 HTTP: the caller's abort is cancelled/caller, the server's cancelled/client (notifications/cancelled in the session)", async () => {
  telemetry.reset();
  const got = await transparently(telemetry, (instrumented) =>
    withHttp('v1', { instrumented }, async ({ sdk, client, transport, file, port }) => {
      const answer = await abortedMidCall(sdk, client, file);
      await until(() => eventOf(file, 'slow-aborted'), 'the handler aborted');
      assert.equal(eventOf(file, 'slow-aborted').reason, 'user-cancel');
      if (!instrumented) return answer;
      const { client: sent, server: handled } = await both(file, 'tools/call slow');
      assert.deepEqual(stated(sent), cancelled('caller'));
      assert.deepEqual(stated(handled), cancelled('client'));
      overTcp(sent, port);
      for (const span of [sent, handled]) assert.equal(span.attributes[semconv.MCP_SESSION_ID], transport.sessionId);
      oneTrace(sent, handled);
      const cancel = await both(file, 'notifications/cancelled');
      assert.equal(cancel.client.parentSpanId, sent.spanId);
      oneTrace(cancel.client, cancel.server);
      return answer;
    }),
  );
  assert.deepEqual(got, { rejected: 'McpError', code: -32001, message: 'MCP error -32001: user-cancel' });
});

test("v2 HTTP (2025 era, stateless): the cancel reaches another instance; the handler runs on until the client closes: cancelled/disconnect", async () => {
  telemetry.reset();
  const got = await transparently(telemetry, (instrumented) =>
    withHttp('v2', { instrumented }, async ({ sdk, client, file }) => {
      const answer = await abortedMidCall(sdk, client, file);
      if (instrumented) {
        // The cancel was handled (by the fresh instance its own POST got) ...
        const cancel = await both(file, 'notifications/cancelled');
        const sent = await until(() => find(agentSpans(), 'tools/call slow', 'CLIENT'), 'the CLIENT span');
        assert.deepEqual(stated(sent), cancelled('caller'));
        assert.equal(cancel.client.parentSpanId, sent.spanId);
        oneTrace(cancel.client, cancel.server);
        // ... and the handler, in the instance that has the call, was not told.
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(eventOf(file, 'slow-aborted'), undefined, 'the handler runs on');
        assert.equal(find(remoteSpans(file), 'tools/call slow', 'SERVER'), undefined, 'its span is open');
      }
      // The client closing ends the call's response stream: the server aborts the handler.
      await client.close();
      await until(() => eventOf(file, 'slow-aborted'), 'the handler aborted');
      assert.equal(eventOf(file, 'slow-aborted').reason, 'SdkError CONNECTION_CLOSED');
      if (!instrumented) return answer;
      const { client: sent, server: handled } = await both(file, 'tools/call slow');
      assert.deepEqual(stated(handled), cancelled('disconnect'));
      oneTrace(sent, handled);
      return answer;
    }),
  );
  assert.deepEqual(got, { rejected: 'SdkError', code: 'REQUEST_TIMEOUT', message: 'user-cancel' });
});

test("v2 HTTP 2026-07-28: the caller's abort closes the request's stream: cancelled/caller, the server's cancelled/disconnect", async () => {
  telemetry.reset();
  const got = await transparently(telemetry, (instrumented) =>
    withHttp('v2', { instrumented, clientOptions: AUTO }, async ({ sdk, client, file, port }) => {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      const answer = await abortedMidCall(sdk, client, file);
      await until(() => eventOf(file, 'slow-aborted'), 'the handler aborted');
      assert.equal(eventOf(file, 'slow-aborted').reason, 'SdkError CONNECTION_CLOSED');
      if (!instrumented) return answer;
      const { client: sent, server: handled } = await both(file, 'tools/call slow');
      assert.deepEqual(stated(sent), cancelled('caller'));
      assert.deepEqual(stated(handled), cancelled('disconnect'));
      overTcp(sent, port);
      for (const span of [sent, handled]) {
        assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], MODERN);
        assert.equal(span.attributes[semconv.MCP_SESSION_ID], undefined);
      }
      oneTrace(sent, handled);
      // On 2026-07-28 HTTP the client aborts the POST instead of sending a cancel.
      assert.equal(find(agentSpans(), 'notifications/cancelled', 'CLIENT'), undefined);
      assert.equal(find(remoteSpans(file), 'notifications/cancelled', 'SERVER'), undefined);
      return answer;
    }),
  );
  assert.deepEqual(got, { rejected: 'SdkError', code: 'REQUEST_TIMEOUT', message: 'user-cancel' });
});

test('v2 HTTP 2026-07-28: the probe, server/discover and the tool call all carry 2026-07-28, no session', async () => {
  telemetry.reset();
  const got = await transparently(telemetry, (instrumented) =>
    withHttp('v2', { instrumented, clientOptions: AUTO }, async ({ sdk, client, file, port }) => {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      const discovered = await seen(client.discover());
      const answer = await seen(sdk.callTool(client, { name: 'echo', arguments: { text: 'hi' } }));
      if (!instrumented) return { discovered, answer };
      // The connect-time probe: the SDK sends it on the transport itself, before its Protocol
      // connects, past the request funnel; its CLIENT span all the same, the parent of the server's.
      const probe = await until(
        () => remoteSpans(file).find((span) => span.name === 'server/discover' && span.attributes[semconv.JSONRPC_REQUEST_ID] === 'server-discover-probe-1'),
        "the probe's SERVER span",
      );
      assert.deepEqual(probe.attributes, {
        [semconv.MCP_METHOD_NAME]: 'server/discover',
        [semconv.MCP_PROTOCOL_VERSION]: MODERN,
        [semconv.MCP_SERVER_NAME]: 'transports-v2',
        [semconv.MCP_SERVER_VERSION]: '3.1.4',
        [semconv.NETWORK_TRANSPORT]: 'tcp',
        [semconv.JSONRPC_REQUEST_ID]: 'server-discover-probe-1',
        [semconv.MCP_REQUEST_OUTCOME]: 'ok',
      });
      const isProbe = (span) => span.attributes[semconv.JSONRPC_REQUEST_ID] === 'server-discover-probe-1';
      const sentProbe = await until(() => agentSpans().find((span) => span.kind === 'CLIENT' && isProbe(span)), "the probe's CLIENT span");
      assert.deepEqual(sentProbe.attributes, {
        ...probe.attributes,
        [semconv.SERVER_ADDRESS]: '127.0.0.1',
        [semconv.SERVER_PORT]: port,
      });
      assert.equal(sentProbe.status, 'UNSET');
      oneTrace(sentProbe, probe);
      assert.equal(find(agentSpans(), 'initialize', 'CLIENT'), undefined, 'no initialize on 2026-07-28');

      const sentDiscover = await until(
        () => agentSpans().find((span) => span.name === 'server/discover' && span.kind === 'CLIENT' && !isProbe(span)),
        'the discover CLIENT span',
      );
      const handledDiscover = await until(
        () => remoteSpans(file).find((span) => span.name === 'server/discover' && span.parentSpanId === sentDiscover.spanId),
        'the discover SERVER span',
      );
      const call = await both(file, 'tools/call echo');
      for (const [sent, handled] of [[sentDiscover, handledDiscover], [call.client, call.server]]) {
        overTcp(sent, port);
        for (const span of [sent, handled]) {
          assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], MODERN);
          assert.equal(span.attributes[semconv.MCP_SERVER_NAME], 'transports-v2');
          assert.equal(span.attributes[semconv.MCP_SESSION_ID], undefined, 'no session on 2026-07-28');
          assert.equal(span.attributes[semconv.NETWORK_TRANSPORT], 'tcp');
        }
        assert.equal(handled.attributes[semconv.JSONRPC_REQUEST_ID], sent.attributes[semconv.JSONRPC_REQUEST_ID]);
        oneTrace(sent, handled);
      }
      assert.deepEqual(stated(sentDiscover), ok(false));
      assert.deepEqual(stated(handledDiscover), ok(false));
      assert.deepEqual(stated(call.client), ok());
      assert.deepEqual(stated(call.server), ok());
      return { discovered, answer };
    }),
  );
  assert.deepEqual(got.discovered.result.supportedVersions, [MODERN]);
  assert.deepEqual(got.answer.result.content, ECHOED.content);
});

test('v2 HTTP 2026-07-28 against a v1 server: the probe is refused before any MCP server sees it; the call at 2025-11-25', async () => {
  telemetry.reset();
  await withHttp('v2', { server: 'v1', clientOptions: AUTO }, async ({ sdk, client, transport, file }) => {
    assert.equal(client.getNegotiatedProtocolVersion(), LEGACY);
    const answer = await seen(sdk.callTool(client, { name: 'echo', arguments: { text: 'hi' } }));
    assert.deepEqual(answer, { result: ECHOED });
    const call = await both(file, 'tools/call echo');
    for (const span of [call.client, call.server]) {
      assert.deepEqual(stated(span), ok());
      assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], LEGACY);
      assert.equal(span.attributes[semconv.MCP_SESSION_ID], transport.sessionId);
    }
    oneTrace(call.client, call.server);
    // The v1 application answers a request without a session HTTP 400 itself: no server/discover
    // reached an McpServer, and no JSON-RPC answer came back to the probe: no outcome, no span.
    assert.equal(remoteSpans(file).find((span) => span.name === 'server/discover'), undefined);
    assert.equal(find(agentSpans(), 'server/discover', 'CLIENT'), undefined);
    assert.ok(find(agentSpans(), 'initialize', 'CLIENT'), 'the fallback handshake');
  });
});
