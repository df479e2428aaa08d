// @mastra/mcp 2.0 (on v2 @modelcontextprotocol/client 2.0.0, its own pinned copy): an MCPClient's
// tools in a Mastra Agent driven by a minimal AI SDK v2 language model of our own that asks for one
// tool call, inside the test's ambient OTel span.
// `node [--import ../support/setup.mjs] mastra.mjs quick|abort|abort-tool` (abort-tool: the
// Mastra tool's own `execute` called with an abort signal, no agent: what rejection it gives).
//
// Mastra traces with its own observability (its AI tracing and exporters), not OpenTelemetry,
// unless an OTel bridge is configured: none is here, so the MCP spans' parent is the ambient span.
import { MODE, SERVER, TOOL, abortWhenSlowStarts, finish, inAmbientSpan, markerDir, settle } from '../support/harness.mjs';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const { Agent } = await import('@mastra/core/agent');
const { MCPClient } = await import('@mastra/mcp');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MASTRA_TOOL = `frameworks_${TOOL}`; // Mastra names an MCP tool SERVER_TOOL

const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
/** A LanguageModelV2 that asks for one call of the tool, then answers with its result. */
const model = {
  specificationVersion: 'v2',
  provider: 'test',
  modelId: 'one-tool-call',
  supportedUrls: {},
  async doGenerate(options) {
    const answered = options.prompt.some((message) => message.role === 'tool');
    const content = answered
      ? [{ type: 'text', text: 'done' }]
      : [{ type: 'tool-call', toolCallId: 'call-1', toolName: MASTRA_TOOL, input: JSON.stringify({ text: 'hi' }) }];
    return { content, finishReason: answered ? 'stop' : 'tool-calls', usage, warnings: [] };
  },
  async doStream(options) {
    const answered = options.prompt.some((message) => message.role === 'tool');
    const parts = answered
      ? [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 'text-1' },
          { type: 'text-delta', id: 'text-1', delta: 'done' },
          { type: 'text-end', id: 'text-1' },
          { type: 'finish', finishReason: 'stop', usage },
        ]
      : [
          { type: 'stream-start', warnings: [] },
          { type: 'tool-call', toolCallId: 'call-1', toolName: MASTRA_TOOL, input: JSON.stringify({ text: 'hi' }) },
          { type: 'finish', finishReason: 'tool-calls', usage },
        ];
    return {
      stream: new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  },
};

const dir = markerDir();
const mcp = new MCPClient({
  id: `frameworks-${process.pid}`,
  servers: { frameworks: { command: process.execPath, args: [SERVER, 'v2', dir] } },
});
const tools = await mcp.listTools();
const agent = new Agent({ id: 'mcp-agent', name: 'mcp-agent', instructions: 'Use the tool.', model, tools });
const controller = new AbortController();
if (MODE !== 'quick') abortWhenSlowStarts(controller, dir);

const outcome = await inAmbientSpan(async () => {
  if (MODE === 'abort-tool') {
    return { toolOutput: JSON.stringify(await tools[MASTRA_TOOL].execute({ text: 'hi' }, { abortSignal: controller.signal })) };
  }
  const result = await agent.generate('call the tool', { abortSignal: controller.signal, maxSteps: 3 });
  return {
    finalOutput: result.text,
    finishReason: result.finishReason,
    error: result.error === undefined ? undefined : String(result.error?.message ?? result.error),
    toolOutput: JSON.stringify(result.toolResults?.map((each) => each.payload?.result ?? each.result) ?? null),
    messages: result.response?.messages?.map((message) => ({ role: message.role, parts: message.content.map?.((part) => part.type) })),
    mastraTraceId: result.traceId ?? null, // Mastra's own tracing (none configured)
  };
});
await settle(); // a cancel the framework sent reaches the server before it is closed
await mcp.disconnect();
// The MCP client Mastra loads: the copy it pins, beside it.
const sdk = JSON.parse(readFileSync(join(ROOT, 'node_modules/@mastra/mcp/node_modules/@modelcontextprotocol/client/package.json'), 'utf8'));
await finish({ ...outcome, slowAborted: existsSync(join(dir, 'slow-aborted')), sdkVersion: sdk.version });
