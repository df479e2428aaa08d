// A TypeScript agent instrumented with mcp-otel (telemetry.cjs): the MCP TypeScript SDK's own
// Client of generation v1 or v2 calls tools of the stdio server whose command follows, or of the
// streamable HTTP server at URL.
//
//   node ts_agent.cjs v1|v2 COMMAND [ARGS...]
//   node ts_agent.cjs v1|v2 http://127.0.0.1:PORT/mcp
//
// MCP_PLAN (JSON) lists the calls: [{"tool": "...", "arguments": {...}, "abortAfterMs": 300}], a
// call with abortAfterMs being given up by its caller (an AbortSignal). MCP_SERVER_ENV (JSON): the
// server's environment besides this one's. MCP_ROUNDS runs the plan that many times in one
// session; before each round after the first the agent waits until the file MCP_GATE exists.
// Prints one JSON line per call (the result's isError, the error's code, or "aborted") and
// "round N done" after each round.
'use strict';
const fs = require('node:fs');
const { setup, sdk } = require('./telemetry.cjs');

const telemetry = setup();
const [generation, command, ...args] = process.argv.slice(2);
const { Client, StdioClientTransport, StreamableHTTPClientTransport, callTool } = sdk(generation);

const plan = JSON.parse(process.env.MCP_PLAN ?? '[]');
const rounds = Number(process.env.MCP_ROUNDS ?? 1);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const env = { ...process.env, ...JSON.parse(process.env.MCP_SERVER_ENV ?? '{}') };
  const transport = command.startsWith('http://')
    ? new StreamableHTTPClientTransport(new URL(command))
    : new StdioClientTransport({ command, args, env, stderr: 'inherit' });
  const client = new Client({ name: `ts-agent-${generation}`, version: '1.0.0' });
  await client.connect(transport);
  for (let round = 1; round <= rounds; round++) {
    while (round > 1 && !fs.existsSync(process.env.MCP_GATE)) await sleep(50);
    for (const step of plan) {
      const controller = new AbortController();
      const options = {};
      if (step.abortAfterMs !== undefined) {
        options.signal = controller.signal;
        setTimeout(() => controller.abort(new Error('the agent gave up')), step.abortAfterMs);
      }
      try {
        const result = await callTool(client, { name: step.tool, arguments: step.arguments ?? {} }, options);
        console.log(JSON.stringify({ tool: step.tool, isError: result.isError === true }));
      } catch (error) {
        const outcome = controller.signal.aborted ? 'aborted' : { code: error.code ?? null };
        console.log(JSON.stringify({ tool: step.tool, error: outcome }));
      }
    }
    console.log(`round ${round} done`);
  }
  await client.close();
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => telemetry.shutdown());
