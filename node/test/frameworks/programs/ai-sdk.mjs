// @ai-sdk/mcp 2.0 has an MCP client of its own (not the official SDK): mcp-otel in-process has
// nothing to hook, and `mcp-otel proxy` in front of the server records the calls' spans instead.
// `node [--import ../support/setup.mjs] ai-sdk.mjs quick|abort [PROXY OUTPUT [AS]]`: with PROXY
// (the `mcp-otel` command) and OUTPUT (the proxy's telemetry file), the server is started as
// `mcp-otel proxy [--as AS] --name frameworks-proxy --output OUTPUT -- node server.mjs v2 DIR`.
import { MODE, SERVER, TOOL, abortWhenSlowStarts, finish, inAmbientSpan, markerDir, settle } from '../support/harness.mjs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const { createMCPClient } = await import('@ai-sdk/mcp');
const { StdioMCPTransport } = await import('@ai-sdk/mcp/mcp-stdio');

const [proxy, output, as] = process.argv.slice(3);
const dir = markerDir();
const server = [SERVER, 'v2', dir];
const transport = new StdioMCPTransport(
  proxy
    ? {
        command: proxy,
        args: ['proxy', ...(as ? ['--as', as] : []), '--name', 'frameworks-proxy', '--output', output, '--', process.execPath, ...server],
      }
    : { command: process.execPath, args: server },
);
const client = await createMCPClient({ transport, name: 'ai-sdk-agent', version: '1.0.0' });
const tools = await client.tools();
const controller = new AbortController();
if (MODE !== 'quick') abortWhenSlowStarts(controller, dir);

const outcome = await inAmbientSpan(async () => {
  const result = await tools[TOOL].execute({ text: 'hi' }, { toolCallId: 'call-1', messages: [], abortSignal: controller.signal });
  return { toolOutput: JSON.stringify(result) };
});
await settle(); // a cancel the framework sent reaches the server before it is closed
await client.close();
await finish({ ...outcome, slowAborted: existsSync(join(dir, 'slow-aborted')) });
