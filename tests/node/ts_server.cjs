// A TypeScript MCP server over stdio instrumented with mcp-otel (telemetry.cjs), on the MCP
// TypeScript SDK of generation v1 or v2.
//
//   node ts_server.cjs v1|v2 [mcpserver|lowlevel]
//
// mcpserver (the default): the SDK's McpServer with tools registered by registerTool. Its tools:
//   ok          returns text "ok"
//   tool_error  returns a result with isError true
//   slow        waits 5 s, or until its caller cancels it (returns text "slept")
// lowlevel: the SDK's Server with its own tools/call handler, the same tools and two more that
// answer with a JSON-RPC error (McpServer turns every error of a tool into an isError result):
//   rpc_error     -32602 "bad input" (the caller's fault)
//   server_error  -32603 "internal failure"
// Its name (serverInfo) is MCP_SERVER_NAME, else "ts-server-<generation>".
'use strict';
const { setup, sdk } = require('./telemetry.cjs');

const telemetry = setup();
const [generation, flavour = 'mcpserver'] = process.argv.slice(2);
const { McpServer, Server, StdioServerTransport, error, method, signal } = sdk(generation);
const info = { name: process.env.MCP_SERVER_NAME ?? `ts-server-${generation}`, version: '1.2.3' };

const text = (value, isError = false) => ({ content: [{ type: 'text', text: value }], ...(isError ? { isError } : {}) });

function slow(abortSignal) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(text('slept')), 5000);
    abortSignal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(text('gave up'));
    });
  });
}

const TOOLS = {
  ok: () => text('ok'),
  tool_error: () => text('tool failed', true),
  slow: (extra) => slow(signal(extra)),
};
const FAULTS = {
  rpc_error: () => {
    throw error(-32602, 'bad input');
  },
  server_error: () => {
    throw error(-32603, 'internal failure');
  },
};

function build() {
  if (flavour === 'mcpserver') {
    const server = new McpServer(info);
    for (const [name, run] of Object.entries(TOOLS)) server.registerTool(name, { description: name }, run);
    return server;
  }
  const server = new Server(info, { capabilities: { tools: {} } });
  const tools = { ...TOOLS, ...FAULTS };
  server.setRequestHandler(method['tools/list'], () => ({
    tools: Object.keys(tools).map((name) => ({ name, inputSchema: { type: 'object' } })),
  }));
  server.setRequestHandler(method['tools/call'], (request, extra) => {
    const run = tools[request.params.name];
    if (run === undefined) throw error(-32602, `unknown tool ${request.params.name}`);
    return run(extra);
  });
  return server;
}

async function main() {
  const server = build();
  const transport = new StdioServerTransport();
  // The client closing stdin ends the session: flush the telemetry, then exit.
  const stop = () => telemetry.shutdown().finally(() => process.exit(0));
  process.stdin.on('end', stop);
  process.on('SIGTERM', stop);
  await server.connect(transport);
}

main().catch((failure) => {
  console.error(failure);
  process.exit(1);
});
