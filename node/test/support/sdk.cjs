// Both SDK generations behind one shape, for tests that run the same scenario on each: an MCP server
// with a tool per outcome, a client with an elicitation callback, connected in memory.
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

// The directory whose node_modules hold the SDKs under test (the lowest versions' project too).
const SDK_DIR = path.resolve(process.env.MCP_OTEL_SDK_DIR ?? path.join(__dirname, '..', '..'));
const sdkRequire = createRequire(path.join(SDK_DIR, 'package.json'));

function versionOf(name) {
  const fs = require('node:fs');
  let dir = path.dirname(sdkRequire.resolve(name));
  while (!fs.existsSync(path.join(dir, 'package.json')) || JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name !== name.split('/').slice(0, 2).join('/')) {
    dir = path.dirname(dir);
  }
  return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
}

/** The SDK of `generation` ('v1' | 'v2'), loaded as CommonJS after the instrumentation is set up. */
function load(generation) {
  const z = sdkRequire('zod');
  if (generation === 'v1') {
    const { Client } = sdkRequire('@modelcontextprotocol/sdk/client/index.js');
    const { McpServer } = sdkRequire('@modelcontextprotocol/sdk/server/mcp.js');
    const { InMemoryTransport } = sdkRequire('@modelcontextprotocol/sdk/inMemory.js');
    const types = sdkRequire('@modelcontextprotocol/sdk/types.js');
    return {
      generation,
      version: versionOf('@modelcontextprotocol/sdk/client/index.js'),
      Client,
      McpServer,
      InMemoryTransport,
      RpcError: types.McpError,
      schema: (shape) => shape,
      callTool: (client, params, options) => client.callTool(params, undefined, options),
      signalOf: (extra) => extra.signal,
      elicit: (server, extra, params) => server.server.elicitInput(params),
      onElicit: (client, handler) => client.setRequestHandler(types.ElicitRequestSchema, handler),
      elicitCapability: { elicitation: {} },
      callToolHandler: (handler) => [types.CallToolRequestSchema, handler],
      setRequestHandler: (server, method, handler) =>
        server.server.setRequestHandler(
          { resources_list: types.ListResourcesRequestSchema, prompts_list: types.ListPromptsRequestSchema }[method],
          handler,
        ),
    };
  }
  const client = sdkRequire('@modelcontextprotocol/client');
  const server = sdkRequire('@modelcontextprotocol/server');
  return {
    generation,
    version: versionOf('@modelcontextprotocol/client'),
    Client: client.Client,
    McpServer: server.McpServer,
    InMemoryTransport: client.InMemoryTransport,
    RpcError: server.ProtocolError,
    schema: (shape) => z.object(shape),
    callTool: (client, params, options) => client.callTool(params, options),
    signalOf: (ctx) => ctx.mcpReq.signal,
    elicit: (_server, ctx, params) => ctx.mcpReq.elicitInput(params),
    onElicit: (client, handler) => client.setRequestHandler('elicitation/create', handler),
    elicitCapability: { elicitation: { form: {} } },
    callToolHandler: (handler) => ['tools/call', handler],
    setRequestHandler: (mcp, method, handler) =>
      mcp.server.setRequestHandler({ resources_list: 'resources/list', prompts_list: 'prompts/list' }[method], handler),
  };
}

/** Wait for `signal` to abort, or `ms`. */
function waitForAbort(signal, ms = 10000) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A server with one tool per outcome (not connected), and what its handlers saw. */
function makeServer(sdk) {
  const z = sdkRequire('zod');
  const server = new sdk.McpServer({ name: 'outcomes', version: '2.1.0' }, { capabilities: { tools: {}, resources: {}, prompts: {} } });
  const handled = { slowAborted: undefined };
  server.registerTool('echo', { inputSchema: sdk.schema({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('fail', { description: 'isError' }, async () => ({ isError: true, content: [{ type: 'text', text: 'no' }] }));
  server.registerTool('slow', { description: 'waits for its abort' }, async (extra) => {
    const signal = sdk.signalOf(extra);
    await waitForAbort(signal);
    handled.slowAborted = signal.aborted;
    return { content: [{ type: 'text', text: 'done' }] };
  });
  server.registerTool('ask', { description: 'elicits' }, async (extra) => {
    const answer = await sdk.elicit(server, extra, {
      message: 'name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
    });
    return answer.action === 'accept'
      ? { content: [{ type: 'text', text: 'thanks' }] }
      : { isError: true, content: [{ type: 'text', text: 'declined' }] };
  });
  server.registerPrompt('greeting', { description: 'a prompt' }, async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
  }));
  sdk.setRequestHandler(server, 'resources_list', async () => {
    throw new sdk.RpcError(-32603, 'the store is down');
  });
  return { server, handled };
}

/** `makeServer`'s server and a connected client whose elicitation callback answers `elicitAnswer`. */
async function connect(sdk, { elicitAnswer = { action: 'decline' }, clientOptions = {} } = {}) {
  const { server, handled } = makeServer(sdk);
  const [clientTransport, serverTransport] = sdk.InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new sdk.Client({ name: 'agent', version: '1.0.0' }, { capabilities: sdk.elicitCapability, ...clientOptions });
  sdk.onElicit(client, async () => elicitAnswer);
  await client.connect(clientTransport);
  return { client, server, handled, clientTransport, serverTransport };
}

module.exports = { load, connect, makeServer, waitForAbort, SDK_DIR };
