// @langchain/mcp-adapters 1.1.4 (on v1 @modelcontextprotocol/sdk): a MultiServerMCPClient's tools
// in a LangGraph ReAct agent (createReactAgent, its ToolNode) driven by a minimal chat model of
// our own that asks for one tool call, inside the test's ambient OTel span.
// `node [--import ../support/setup.mjs] langchain.mjs quick|abort`.
//
// LangChain traces through its callbacks (LangSmith), not OpenTelemetry: its runs are collected by
// a callback handler here and printed beside the OTel spans.
import { MODE, SERVER, TOOL, abortWhenSlowStarts, finish, inAmbientSpan, markerDir, settle } from '../support/harness.mjs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const { BaseCallbackHandler } = await import('@langchain/core/callbacks/base');
const { BaseChatModel } = await import('@langchain/core/language_models/chat_models');
const { AIMessage } = await import('@langchain/core/messages');
const { createReactAgent } = await import('@langchain/langgraph/prebuilt');
const { MultiServerMCPClient } = await import('@langchain/mcp-adapters');

/** Asks for one call of `TOOL`, then answers with the tool's output. */
class OneToolCallModel extends BaseChatModel {
  _llmType() {
    return 'one-tool-call';
  }
  bindTools() {
    return this;
  }
  async _generate(messages) {
    const last = messages.at(-1);
    const message =
      last?.getType() === 'tool'
        ? new AIMessage({ content: `done: ${last.content}` })
        : new AIMessage({ content: '', tool_calls: [{ id: 'call-1', name: TOOL, args: { text: 'hi' }, type: 'tool_call' }] });
    return { generations: [{ text: String(message.content), message }] };
  }
}

const runs = [];
class Runs extends BaseCallbackHandler {
  name = 'runs';
  handleToolStart(_tool, _input, _runId, _parentRunId, _tags, _metadata, runName) {
    runs.push({ type: 'tool', name: runName });
  }
  handleToolError(error) {
    runs.push({ type: 'tool-error', message: String(error?.message ?? error) });
  }
}

const dir = markerDir();
const client = new MultiServerMCPClient({
  mcpServers: { frameworks: { transport: 'stdio', command: process.execPath, args: [SERVER, 'v1', dir] } },
});
const tools = await client.getTools();
const agent = createReactAgent({ llm: new OneToolCallModel({}), tools });
const controller = new AbortController();
if (MODE === 'abort') abortWhenSlowStarts(controller, dir);

const outcome = await inAmbientSpan(async () => {
  const state = await agent.invoke(
    { messages: [{ role: 'user', content: 'call the tool' }] },
    { signal: controller.signal, callbacks: [new Runs()] },
  );
  const toolMessage = state.messages.find((message) => message.getType() === 'tool');
  return { finalOutput: String(state.messages.at(-1).content), toolOutput: JSON.stringify(toolMessage?.content ?? null) };
});
await settle(); // a cancel the framework sent reaches the server before it is closed
await client.close();
await finish({ ...outcome, slowAborted: existsSync(join(dir, 'slow-aborted')), langchainRuns: runs });
