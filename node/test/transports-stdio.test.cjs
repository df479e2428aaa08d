// Both SDK generations over a real stdio pipe: the agent in this process (instrumented, spans in
// memory), the server a process of its own (fixtures/transports/server.cjs, instrumented, its
// spans written to a file as they end). One trace across the two processes, the outcome each side
// records when the caller aborts, the server dies or the client goes away, and the 2026-07-28
// negotiation; what the application sees is the same with mcp-otel on both sides and on neither.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const mcpOtel = require('../dist/cjs/index.js');
const { setup } = require('./support/telemetry.cjs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const {
  SDK_DIR,
  agentSdk,
  plain,
  records,
  scratch,
  alive,
  kill,
  remoteSpans,
  events,
  until,
  seen,
  stdioClosesOnEof,
  serverSdkVersion,
  stated,
  ok,
  cancelled,
  failed,
  find,
  eventOf,
  withStdio,
  transparently,
} = require('./fixtures/transports/harness.cjs');

const telemetry = setup(mcpOtel);
const semconv = require('../dist/cjs/semconv.js'); // the names module: the package keeps it inside
const LEGACY = '2025-11-25';
const serverName = (generation) => `transports-${generation}`;
const AGENT = path.join(__dirname, 'fixtures', 'transports', 'agent.cjs');
const MODERN = '2026-07-28';

/** The agent's finished spans, in the server program's shape. */
const agentSpans = () => telemetry.spans().map(plain);

/** The agent's span and the server's span of `name` (of JSON-RPC id `id`, if given), once both have ended. */
async function both(file, name, pid, id) {
  const named = (span, kind) => span.name === name && span.kind === kind && (id === undefined || span.attributes[semconv.JSONRPC_REQUEST_ID] === id);
  const client = await until(() => agentSpans().find((span) => named(span, 'CLIENT')), `the CLIENT span ${name}`);
  const server = await until(
    () => remoteSpans(file).find((span) => named(span, 'SERVER') && (pid === undefined || span.pid === pid)),
    `the SERVER span ${name}`,
  );
  return { client, server };
}

/** The server's handler of `slow` is running (`ms`: how long two processes may take to start). */
const slowStarted = (file, ms) => until(() => eventOf(file, 'slow-started'), 'the slow handler to start', ms);

// An agent process that starts the server process: two Node processes loading their SDKs (and
// instrumentation) one after the other, seconds on a loaded machine.
const TWO_PROCESSES_MS = 30000;

/** `slow` called with an AbortSignal the caller aborts (reason 'user-cancel') once the handler runs. */
async function abortedMidCall(sdk, client, file) {
  const controller = new AbortController();
  const call = seen(sdk.callTool(client, { name: 'slow', arguments: {} }, { signal: controller.signal }));
  await slowStarted(file);
  controller.abort('user-cancel');
  return call;
}

/** `slow` called, and the agent's transport closed once the handler runs (the client goes away). */
async function clientGoneMidCall(sdk, client, transport, file, ms) {
  const call = seen(sdk.callTool(client, { name: 'slow', arguments: ms === undefined ? {} : { ms } }));
  await slowStarted(file);
  await transport.close();
  return call;
}

/** What the agent's application sees of a connection that closed under its call. */
const closed = (generation) =>
  generation === 'v1'
    ? { rejected: 'McpError', code: -32000, message: 'MCP error -32000: Connection closed' }
    : { rejected: 'SdkError', code: 'CONNECTION_CLOSED', message: 'Connection closed' };

/** The server's points of the histogram `name`, once it has written them (its stdin closed). */
async function pointsOf(file, name) {
  const written = await until(() => records(file).filter((entry) => entry.type === 'metrics').at(-1), "the server's points");
  return written.points.filter((point) => point.name === name);
}

/** What the server's session point and its `tools/call slow` point say of a client gone mid-call. */
async function clientGonePoints(file, server) {
  assert.deepEqual(await pointsOf(file, semconv.MCP_SERVER_SESSION_DURATION), [
    {
      name: semconv.MCP_SERVER_SESSION_DURATION,
      attributes: { [semconv.MCP_PROTOCOL_VERSION]: LEGACY, [semconv.MCP_SERVER_NAME]: server },
      count: 1,
    },
  ]);
  const slow = (await pointsOf(file, semconv.MCP_SERVER_OPERATION_DURATION)).filter(
    (point) => point.attributes[semconv.GEN_AI_TOOL_NAME] === 'slow',
  );
  assert.deepEqual(slow.map((point) => [point.attributes[semconv.MCP_REQUEST_OUTCOME], point.attributes[semconv.MCP_REQUEST_CANCEL_REASON], point.count]), [
    ['cancelled', 'disconnect', 1],
  ]);
}

/** The same trace, the server's span the child of the agent's. */
function oneTrace(client, server) {
  assert.equal(server.traceId, client.traceId, 'one trace');
  assert.equal(server.parentSpanId, client.spanId, "the server's span is the child of the agent's");
}

for (const generation of ['v1', 'v2']) {
  const name = serverName(generation);

  test(`${generation} stdio: a tool call is ok on both sides, one trace across two processes, pipe`, async () => {
    telemetry.reset();
    const got = await transparently(telemetry, (instrumented) =>
      withStdio(generation, { instrumented }, async ({ sdk, client, file, pid }) => {
        const answer = await seen(sdk.callTool(client, { name: 'echo', arguments: { text: 'hi' } }));
        if (!instrumented) return answer;
        const { client: sent, server: handled } = await both(file, 'tools/call echo');
        const attributes = {
          [semconv.MCP_METHOD_NAME]: 'tools/call',
          [semconv.GEN_AI_OPERATION_NAME]: 'execute_tool',
          [semconv.GEN_AI_TOOL_NAME]: 'echo',
          [semconv.MCP_PROTOCOL_VERSION]: LEGACY,
          [semconv.MCP_SERVER_NAME]: name,
          [semconv.MCP_SERVER_VERSION]: '3.1.4',
          [semconv.NETWORK_TRANSPORT]: 'pipe',
          [semconv.JSONRPC_REQUEST_ID]: '1',
          [semconv.MCP_REQUEST_OUTCOME]: 'ok',
          [semconv.TOOL_OUTCOME]: 'ok',
        };
        assert.deepEqual(sent.attributes, attributes);
        assert.deepEqual(handled.attributes, attributes);
        assert.equal(sent.status, 'UNSET');
        assert.equal(handled.status, 'UNSET');
        assert.equal(handled.pid, pid, 'the SERVER span is the server process’s');
        assert.notEqual(handled.pid, process.pid);
        oneTrace(sent, handled);
        // The handshake: its CLIENT span learns the server's name and the version from its answer.
        const handshake = await both(file, 'initialize');
        assert.deepEqual(stated(handshake.client), ok(false));
        assert.equal(handshake.client.attributes[semconv.MCP_PROTOCOL_VERSION], LEGACY);
        assert.equal(handshake.client.attributes[semconv.MCP_SERVER_NAME], name);
        assert.equal(handshake.client.attributes[semconv.NETWORK_TRANSPORT], 'pipe');
        assert.equal(handshake.server.attributes[semconv.JSONRPC_REQUEST_ID], '0');
        assert.equal(handshake.server.attributes[semconv.MCP_PROTOCOL_VERSION], LEGACY, 'the version it answered');
        oneTrace(handshake.client, handshake.server);
        return answer;
      }),
    );
    assert.deepEqual(got, { result: { content: [{ type: 'text', text: 'hi' }] } });
  });

  test(`${generation} stdio: the caller's abort is cancelled/caller, the server's cancelled/client`, async () => {
    telemetry.reset();
    const got = await transparently(telemetry, (instrumented) =>
      withStdio(generation, { instrumented }, async ({ sdk, client, file }) => {
        const answer = await abortedMidCall(sdk, client, file);
        await until(() => eventOf(file, 'slow-aborted'), 'the handler aborted');
        if (!instrumented) return answer;
        const { client: sent, server: handled } = await both(file, 'tools/call slow');
        assert.deepEqual(stated(sent), cancelled('caller'));
        assert.deepEqual(stated(handled), cancelled('client'));
        for (const span of [sent, handled]) {
          assert.equal(span.attributes[semconv.NETWORK_TRANSPORT], 'pipe');
          assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], LEGACY);
          assert.equal(span.attributes[semconv.JSONRPC_REQUEST_ID], '1');
        }
        oneTrace(sent, handled);
        // The cancel is the child of the request it cancels, on both sides.
        const cancel = await both(file, 'notifications/cancelled');
        assert.equal(cancel.client.parentSpanId, sent.spanId);
        oneTrace(cancel.client, cancel.server);
        assert.equal(eventOf(file, 'slow-aborted').reason, 'user-cancel');
        return answer;
      }),
    );
    assert.deepEqual(
      got,
      generation === 'v1'
        ? { rejected: 'McpError', code: -32001, message: 'MCP error -32001: user-cancel' }
        : { rejected: 'SdkError', code: 'REQUEST_TIMEOUT', message: 'user-cancel' },
    );
  });

  test(`${generation} stdio: the server process dying mid-call is failed/connection_closed for the caller`, async () => {
    telemetry.reset();
    const got = await transparently(telemetry, (instrumented) =>
      withStdio(generation, { instrumented }, async ({ sdk, client, file }) => {
        const answer = await seen(sdk.callTool(client, { name: 'die', arguments: {} }));
        assert.ok(eventOf(file, 'dying'), 'the tool ran, and exited its process');
        if (!instrumented) return answer;
        const sent = await until(() => find(agentSpans(), 'tools/call die', 'CLIENT'), 'the CLIENT span');
        assert.deepEqual(stated(sent), failed('connection_closed'));
        assert.equal(sent.attributes[semconv.NETWORK_TRANSPORT], 'pipe');
        assert.equal(sent.attributes[semconv.MCP_SERVER_NAME], name);
        // The process exited inside the handler: nothing was left to end its SERVER span.
        assert.equal(find(remoteSpans(file), 'tools/call die', 'SERVER'), undefined);
        return answer;
      }),
    );
    assert.deepEqual(got, closed(generation));
  });
}

// The client goes away mid-call (the agent closes its transport: the server's stdin ends).

for (const generation of ['v1', 'v2']) {
  test(`${generation} stdio: the client going away mid-call is cancelled/disconnect on the server, which records its session, whether or not its SDK sees EOF`, async () => {
    telemetry.reset();
    // v2 (2.4.0) closes the connection when stdin ends and aborts its handlers; v1 (and v2 2.0.0)
    // ignore EOF: the handler runs to its end and answers into a pipe whose reader is leaving.
    const seesEof = await stdioClosesOnEof(generation);
    const got = await transparently(telemetry, (instrumented) =>
      withStdio(generation, { instrumented }, async ({ sdk, client, transport, file, pid }) => {
        // close() ends the server's stdin, then waits (up to 2 s) for its process to exit; a
        // handler that ignores EOF (800 ms) answers meanwhile, and the agent still reads that.
        const answer = await clientGoneMidCall(sdk, client, transport, file, seesEof ? undefined : 800);
        if (seesEof) {
          await until(() => eventOf(file, 'slow-aborted'), 'the handler aborted');
          assert.equal(eventOf(file, 'slow-aborted').reason, 'SdkError CONNECTION_CLOSED');
        } else {
          const order = events(file).map((entry) => entry.event);
          assert.deepEqual(order, ['slow-started', 'stdin-end', 'slow-finished'], 'stdin ended while the handler ran on');
          // Nothing of mcp-otel's keeps the process alive: it exits once its handler is done.
          await until(() => !alive(pid), 'the server process to exit');
        }
        if (!instrumented) return answer;
        const { client: sent, server: handled } = await both(file, 'tools/call slow');
        // The server's client hung up: the handler's later answer (if any) reached no one of its.
        assert.deepEqual(stated(handled), cancelled('disconnect'));
        assert.deepEqual(stated(sent), seesEof ? failed('connection_closed') : ok());
        oneTrace(sent, handled);
        await clientGonePoints(file, serverName(generation));
        return answer;
      }),
    );
    assert.equal(seesEof, generation === 'v2' && serverSdkVersion(generation) !== '2.0.0');
    assert.deepEqual(got, seesEof ? closed(generation) : { result: { content: [{ type: 'text', text: 'slept' }] } });
  });
}

test('v1 stdio: a server application that closes its server when stdin ends records cancelled/disconnect, not shutdown', async () => {
  // The application closes its own server because its client went away (its input ended first):
  // the row "the client closed the connection (stdio EOF)" of docs/outcomes.md, not a shutdown.
  telemetry.reset();
  const got = await transparently(telemetry, (instrumented) =>
    withStdio('v1', { instrumented, env: { CLOSE_ON_STDIN_END: '1' } }, async ({ sdk, client, transport, file }) => {
      const answer = await clientGoneMidCall(sdk, client, transport, file);
      await until(() => eventOf(file, 'slow-aborted'), 'the handler aborted');
      // v1 aborts its handlers on close with no reason: a DOMException AbortError.
      assert.match(eventOf(file, 'slow-aborted').reason, /^DOMException/);
      if (!instrumented) return answer;
      const { client: sent, server: handled } = await both(file, 'tools/call slow');
      assert.deepEqual(stated(handled), cancelled('disconnect'));
      assert.deepEqual(stated(sent), failed('connection_closed'));
      oneTrace(sent, handled);
      await clientGonePoints(file, serverName('v1'));
      return answer;
    }),
  );
  assert.deepEqual(got, { rejected: 'McpError', code: -32000, message: 'MCP error -32000: Connection closed' });
});

for (const generation of ['v1', 'v2']) {
  test(`${generation} stdio: the client process killed mid-call is cancelled/disconnect on the server, which records its session and runs on as without mcp-otel`, async () => {
    const got = await transparently(telemetry, async (instrumented) => {
      const { file, cleanup } = scratch();
      // The agent, a process of its own, spawns the server and holds its stdin; killed, the
      // server's stdin ends with nothing closed by anyone.
      const agent = spawn(process.execPath, [AGENT, generation, '1500'], {
        env: { PATH: process.env.PATH, MCP_OTEL_SPANS_FILE: file, MCP_OTEL_SDK_DIR: SDK_DIR, ...(instrumented ? {} : { MCP_OTEL_OFF: '1' }) },
        stdio: 'ignore',
      });
      let pid;
      try {
        pid = (await slowStarted(file, TWO_PROCESSES_MS)).pid;
        agent.kill('SIGKILL');
        const seesEof = await stdioClosesOnEof(generation);
        await until(() => eventOf(file, seesEof ? 'slow-aborted' : 'slow-finished'), 'the handler to end', TWO_PROCESSES_MS);
        await until(() => !alive(pid), 'the server process to exit', TWO_PROCESSES_MS);
        const order = events(file).map((entry) => entry.event);
        if (instrumented) {
          const handled = find(remoteSpans(file), 'tools/call slow', 'SERVER');
          assert.deepEqual(stated(handled), cancelled('disconnect'));
          assert.equal(handled.attributes[semconv.NETWORK_TRANSPORT], 'pipe');
          assert.equal(handled.attributes[semconv.JSONRPC_REQUEST_ID], '1');
          await clientGonePoints(file, serverName(generation));
        }
        return { order, seesEof };
      } finally {
        kill(agent.pid);
        kill(pid);
        cleanup();
      }
    });
    assert.deepEqual(got.order, ['slow-started', 'stdin-end', got.seesEof ? 'slow-aborted' : 'slow-finished']);
    assert.equal(got.seesEof, generation === 'v2' && serverSdkVersion(generation) !== '2.0.0');
  });
}

test('v2 serveStdio: the client going away mid-call (EOF) is cancelled/disconnect, though serveStdio then closes its server', async (t) => {
  // serveStdio answers the end of input by closing its McpServer (McpServer.close()): mcp-otel
  // must not take that for the application shutting down (failed/shutdown).
  if (!(await stdioClosesOnEof('v2'))) {
    t.skip('this v2 ignores EOF on stdio');
    return;
  }
  telemetry.reset();
  const got = await transparently(telemetry, (instrumented) =>
    withStdio('v2', { mode: 'serve', instrumented }, async ({ sdk, client, transport, file }) => {
      const answer = await clientGoneMidCall(sdk, client, transport, file);
      await until(() => eventOf(file, 'slow-aborted'), 'the handler aborted');
      assert.equal(eventOf(file, 'slow-aborted').reason, 'SdkError CONNECTION_CLOSED');
      if (!instrumented) return answer;
      const { client: sent, server: handled } = await both(file, 'tools/call slow');
      assert.deepEqual(stated(sent), failed('connection_closed'));
      assert.deepEqual(stated(handled), cancelled('disconnect'));
      oneTrace(sent, handled);
      return answer;
    }),
  );
  assert.deepEqual(got, closed('v2'));
});

// The 2026-07-28 negotiation (v2 clients only): versionNegotiation 'auto' probes with
// server/discover on a disposable sibling of the server process, then connects at the era found.

const AUTO = { versionNegotiation: { mode: 'auto' } };

/** The probe's CLIENT span: the agent's server/discover with the probe's id. */
const probeSent = () =>
  until(
    () => agentSpans().find((span) => span.kind === 'CLIENT' && span.attributes[semconv.JSONRPC_REQUEST_ID] === 'server-discover-probe-1'),
    "the probe's CLIENT span",
  );

/** The agent's points of server/discover requests, by outcome (or `none`): their counts. */
async function discoverPoints() {
  const points = await telemetry.points(semconv.MCP_CLIENT_OPERATION_DURATION);
  const counts = {};
  for (const { attributes, value } of points) {
    if (attributes[semconv.MCP_METHOD_NAME] !== 'server/discover') continue;
    const key = JSON.stringify(Object.fromEntries(Object.entries(attributes).sort()));
    counts[key] = (counts[key] ?? 0) + value.count;
  }
  return counts;
}

/** The probe's SERVER span: the one named server/discover that is not the session server's. */
const probeOf = (file, pid) =>
  until(() => remoteSpans(file).find((span) => span.name === 'server/discover' && span.pid !== pid), "the probe's SERVER span");

test('v2 stdio 2026-07-28 (serveStdio): the probe, server/discover and the tool call all carry 2026-07-28', async () => {
  telemetry.reset();
  await withStdio('v2', { mode: 'serve', clientOptions: AUTO }, async ({ sdk, client, file, pid }) => {
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    const probe = await probeOf(file, pid);
    assert.deepEqual(probe.attributes, {
      [semconv.MCP_METHOD_NAME]: 'server/discover',
      [semconv.MCP_PROTOCOL_VERSION]: MODERN,
      [semconv.MCP_SERVER_NAME]: 'transports-v2',
      [semconv.MCP_SERVER_VERSION]: '3.1.4',
      [semconv.NETWORK_TRANSPORT]: 'pipe',
      [semconv.JSONRPC_REQUEST_ID]: 'server-discover-probe-1',
      [semconv.MCP_REQUEST_OUTCOME]: 'ok',
    });
    assert.equal(probe.status, 'UNSET');
    // The SDK sends the probe on a sibling transport of its own, past the request funnel: its
    // CLIENT span all the same, named from the answer, the parent of the server's.
    const sent = await probeSent();
    assert.deepEqual(sent.attributes, probe.attributes);
    assert.equal(sent.status, 'UNSET');
    oneTrace(sent, probe);
    assert.equal(find(agentSpans(), 'initialize', 'CLIENT'), undefined, 'no initialize on 2026-07-28');

    const discovered = await seen(client.discover());
    assert.deepEqual(discovered.result.supportedVersions, [MODERN]);
    const discover = await both(file, 'server/discover', pid, '0');
    for (const span of [discover.client, discover.server]) {
      assert.deepEqual(stated(span), ok(false));
      assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], MODERN);
      assert.equal(span.attributes[semconv.MCP_SERVER_NAME], 'transports-v2');
      assert.equal(span.attributes[semconv.NETWORK_TRANSPORT], 'pipe');
      assert.equal(span.attributes[semconv.JSONRPC_REQUEST_ID], '0');
    }
    oneTrace(discover.client, discover.server);

    const answer = await seen(sdk.callTool(client, { name: 'echo', arguments: { text: 'hi' } }));
    assert.deepEqual(answer.result.content, [{ type: 'text', text: 'hi' }]);
    const call = await both(file, 'tools/call echo', pid);
    for (const span of [call.client, call.server]) {
      assert.deepEqual(stated(span), ok());
      assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], MODERN);
      assert.equal(span.attributes[semconv.MCP_SERVER_NAME], 'transports-v2');
      assert.equal(span.attributes[semconv.JSONRPC_REQUEST_ID], '1');
    }
    oneTrace(call.client, call.server);
  });
});

test('v2 stdio 2026-07-28: a call refused for its headers is sent again by callTool: the refused request failed, the second ok', async () => {
  telemetry.reset();
  await withStdio('v2', { mode: 'serve', clientOptions: AUTO }, async ({ sdk, client, file, pid }) => {
    const answer = await seen(sdk.callTool(client, { name: 'refuse-once', arguments: {} }));
    assert.deepEqual(answer.result.content, [{ type: 'text', text: 'accepted' }]);
    const named = (spans, kind) => spans.filter((span) => span.name === 'tools/call refuse-once' && span.kind === kind);
    const calls = await until(() => named(agentSpans(), 'CLIENT').length === 2 && named(agentSpans(), 'CLIENT'), 'both requests');
    const refused = { ...failed('-32020'), [semconv.RPC_RESPONSE_STATUS_CODE]: '-32020' };
    assert.deepEqual(calls.map((span) => stated(span)), [refused, ok()]);
    const handled = await until(() => named(remoteSpans(file), 'SERVER').length === 2 && named(remoteSpans(file), 'SERVER'), 'both handled');
    // -32020 blames the request: a caller's fault, not the server's (UNSET, no error.type).
    const callersFault = { [semconv.MCP_REQUEST_OUTCOME]: 'failed', [semconv.TOOL_OUTCOME]: 'failed', [semconv.RPC_RESPONSE_STATUS_CODE]: '-32020', status: 'UNSET' };
    assert.deepEqual(handled.map((span) => stated(span)), [callersFault, ok()]);
    for (const [index, span] of calls.entries()) oneTrace(span, handled[index]);
    assert.ok(handled.every((span) => span.pid === pid));
  });
});

for (const server of ['v2', 'v1']) {
  test(`v2 stdio 2026-07-28 against a ${server} server that refuses it: the probe is a negotiation step, the call at ${LEGACY}`, async () => {
    telemetry.reset();
    await withStdio('v2', { server, mode: 'stdio', clientOptions: AUTO }, async ({ sdk, client, file, pid }) => {
      assert.equal(client.getNegotiatedProtocolVersion(), LEGACY);
      const probe = await probeOf(file, pid);
      // Refused with -32601: no outcome, no point; the code kept; UNSET.
      assert.deepEqual(stated(probe), {
        [semconv.RPC_RESPONSE_STATUS_CODE]: '-32601',
        [semconv.MCP_REQUEST_RESULT_TYPE]: 'negotiation',
        status: 'UNSET',
      });
      assert.equal(probe.attributes[semconv.JSONRPC_REQUEST_ID], 'server-discover-probe-1');
      assert.equal(probe.attributes[semconv.NETWORK_TRANSPORT], 'pipe');
      assert.equal(probe.attributes[semconv.MCP_PROTOCOL_VERSION], undefined, 'nothing was negotiated yet');
      const sent = await probeSent();
      assert.deepEqual(sent.attributes, {
        [semconv.MCP_METHOD_NAME]: 'server/discover',
        [semconv.NETWORK_TRANSPORT]: 'pipe',
        [semconv.JSONRPC_REQUEST_ID]: 'server-discover-probe-1',
        [semconv.RPC_RESPONSE_STATUS_CODE]: '-32601',
        [semconv.MCP_REQUEST_RESULT_TYPE]: 'negotiation',
      });
      assert.equal(sent.status, 'UNSET');
      oneTrace(sent, probe);

      const handshake = await both(file, 'initialize', pid);
      assert.deepEqual(stated(handshake.client), ok(false));
      assert.equal(handshake.client.attributes[semconv.MCP_PROTOCOL_VERSION], LEGACY);
      const answer = await seen(sdk.callTool(client, { name: 'echo', arguments: { text: 'hi' } }));
      assert.deepEqual(answer.result.content, [{ type: 'text', text: 'hi' }]);
      const call = await both(file, 'tools/call echo', pid);
      for (const span of [call.client, call.server]) {
        assert.deepEqual(stated(span), ok());
        assert.equal(span.attributes[semconv.MCP_PROTOCOL_VERSION], LEGACY);
        assert.equal(span.attributes[semconv.MCP_SERVER_NAME], `transports-${server}`);
      }
      oneTrace(call.client, call.server);
    });
  });
}

test(
  'v2 stdio 2026-07-28: the connect-time probe has a CLIENT span (ok, or negotiation when refused), parent of the server’s',
  async () => {
    telemetry.reset();
    // Its point: the ok probe's, with what it learnt; none for a negotiation step.
    const okPoint = JSON.stringify(Object.fromEntries(Object.entries({
      [semconv.MCP_METHOD_NAME]: 'server/discover',
      [semconv.MCP_PROTOCOL_VERSION]: MODERN,
      [semconv.MCP_SERVER_NAME]: 'transports-v2',
      [semconv.NETWORK_TRANSPORT]: 'pipe',
      [semconv.MCP_REQUEST_OUTCOME]: 'ok',
    }).sort()));
    for (const [server, mode, verdict, points] of [
      ['v2', 'serve', ok(false), { [okPoint]: 1 }],
      ['v2', 'stdio', { [semconv.RPC_RESPONSE_STATUS_CODE]: '-32601', [semconv.MCP_REQUEST_RESULT_TYPE]: 'negotiation', status: 'UNSET' }, {}],
      ['v1', 'stdio', { [semconv.RPC_RESPONSE_STATUS_CODE]: '-32601', [semconv.MCP_REQUEST_RESULT_TYPE]: 'negotiation', status: 'UNSET' }, {}],
    ]) {
      const before = await discoverPoints();
      await withStdio('v2', { server, mode, clientOptions: AUTO }, async ({ file, pid }) => {
        const probe = await probeOf(file, pid);
        const sent = await probeSent();
        assert.deepEqual(stated(sent), verdict);
        oneTrace(sent, probe);
        // The sibling the SDK probed on is gone; the session's own requests are spans as ever.
        assert.equal(agentSpans().filter((span) => span.name === 'server/discover').length, 1);
      });
      const after = await discoverPoints();
      const added = Object.fromEntries(Object.entries(after).map(([key, count]) => [key, count - (before[key] ?? 0)]).filter(([, count]) => count > 0));
      assert.deepEqual(added, points);
      telemetry.reset();
    }
    // The stdio client transport's start is watched (the sibling's), and restored by disable().
    const { prototype } = agentSdk('v2').StdioClientTransport;
    const watched = () => Object.getOwnPropertySymbols(prototype.start).length;
    assert.equal(watched(), 1);
    telemetry.instrumentation.disable();
    try {
      assert.equal(watched(), 0);
    } finally {
      telemetry.instrumentation.enable();
    }
    assert.equal(watched(), 1);
  },
);
