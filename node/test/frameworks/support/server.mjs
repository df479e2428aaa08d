// The MCP server every framework test talks to, over stdio: `node server.mjs v1|v2 [MARKER_DIR]`.
//
// - `quick` answers at once with its text and the `traceparent` it was sent in `params._meta`
//   (so a test sees that the framework passed mcp-otel's context through).
// - `slow` writes `MARKER_DIR/slow-started` (the test's cue to abort), then waits on its abort
//   signal; aborted (the client's notifications/cancelled), it writes `MARKER_DIR/slow-aborted`.
//   Never aborted, it answers after 15 s (longer than any test waits).
//
// It is not instrumented: the tests read the client's spans only.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

if (process.env.NODE_TEST_CONTEXT) process.exit(0); // globbed as a test file: none (harness.mjs)
const z = await import('zod');

const [generation = 'v2', markerDir] = process.argv.slice(2);
const mark = (name) => {
  if (markerDir) writeFileSync(join(markerDir, name), `${Date.now()}\n`);
};

let McpServer, StdioServerTransport;
if (generation === 'v1') {
  ({ McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js'));
  ({ StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js'));
} else {
  ({ McpServer } = await import('@modelcontextprotocol/server'));
  ({ StdioServerTransport } = await import('@modelcontextprotocol/server/stdio'));
}

// Where each generation hands a tool handler its request's signal and _meta.
const signalOf = (extra) => extra?.mcpReq?.signal ?? extra?.signal;
const metaOf = (extra) => extra?.mcpReq?._meta ?? extra?._meta;

const server = new McpServer({ name: `frameworks-${generation}`, version: '1.0.0' });
server.registerTool(
  'quick',
  { description: 'Echoes its text at once.', inputSchema: z.object({ text: z.string() }) },
  async ({ text }, extra) => ({
    content: [{ type: 'text', text: `quick:${text} traceparent=${metaOf(extra)?.traceparent ?? 'none'}` }],
  }),
);
server.registerTool(
  'slow',
  { description: 'Waits until it is cancelled.', inputSchema: z.object({ text: z.string() }) },
  async (_args, extra) => {
    const signal = signalOf(extra);
    mark('slow-started');
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 15_000);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          mark('slow-aborted');
          resolve();
        },
        { once: true },
      );
    });
    return { content: [{ type: 'text', text: 'slow: done' }] };
  },
);
await server.connect(new StdioServerTransport());
