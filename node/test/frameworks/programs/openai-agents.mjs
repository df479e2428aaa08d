// @openai/agents 0.20 (on v2 @modelcontextprotocol/client): an Agent with an MCPServerStdio, run
// by a ScriptedModel (the framework's own test double) that calls one MCP tool, inside the test's
// ambient OTel span. `node [--import ../support/setup.mjs] openai-agents.mjs quick|abort`.
//
// The Agents SDK traces with its own tracing system (not OpenTelemetry): its spans are collected
// here by a TracingProcessor of our own (in place of the default exporter, which sends them to
// OpenAI) and printed beside the OTel spans.
import { MODE, SERVER, TOOL, abortWhenSlowStarts, finish, inAmbientSpan, markerDir, settle } from '../support/harness.mjs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const { Agent, MCPServerStdio, run, setTraceProcessors, setTracingDisabled } = await import('@openai/agents');
const { ScriptedModel, assistantMessage, functionCall } = await import('@openai/agents/testing');

const agentsSpans = [];
setTracingDisabled(false);
setTraceProcessors([
  {
    async onTraceStart() {},
    async onTraceEnd() {},
    async onSpanStart() {},
    async onSpanEnd(span) {
      const json = span.toJSON();
      agentsSpans.push({ type: json.span_data?.type, name: json.span_data?.name, server: json.span_data?.server });
    },
    async shutdown() {},
    async forceFlush() {},
  },
]);

const dir = markerDir();
const server = new MCPServerStdio({ name: 'frameworks', command: process.execPath, args: [SERVER, 'v2', dir] });
await server.connect();
const model = new ScriptedModel([
  [functionCall(TOOL, { text: 'hi' }, { callId: 'call-1' })],
  [assistantMessage('done')],
]);
const agent = new Agent({ name: 'mcp-agent', instructions: 'Use the tool.', model, mcpServers: [server] });
const controller = new AbortController();
if (MODE === 'abort') abortWhenSlowStarts(controller, dir);

const outcome = await inAmbientSpan(async () => {
  const result = await run(agent, 'call the tool', { signal: controller.signal });
  const toolOutput = result.newItems.find((item) => item.type === 'tool_call_output_item');
  return { finalOutput: result.finalOutput, toolOutput: JSON.stringify(toolOutput?.output ?? null) };
});
await settle(); // a cancel the framework sent reaches the server before it is closed
await server.close();
await finish({ ...outcome, slowAborted: existsSync(join(dir, 'slow-aborted')), agentsSpans });
