// A TypeScript agent: the MCP TypeScript SDK's own client, calling tools of the stdio server
// whose command follows on the command line (or of the streamable HTTP server at the URL given
// instead). MCP_PLAN (JSON) lists the calls:
// [{"tool": "...", "arguments": {...}, "abortAfterMs": 300, "timeoutMs": 300}], a call with
// abortAfterMs being given up, one with timeoutMs timing out (either way the SDK sends
// notifications/cancelled). Prints one JSON line per call: the result, or the error's code, or
// "aborted". MCP_TRANSPORT=sse: the URL is an HTTP+SSE server's (protocol 2024-11-05).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [command, ...args] = process.argv.slice(2);
const plan = JSON.parse(process.env.MCP_PLAN ?? "[]");
const transport = !/^https?:/.test(command)
  ? new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" })
  : process.env.MCP_TRANSPORT === "sse"
    ? new SSEClientTransport(new URL(command))
    : new StreamableHTTPClientTransport(new URL(command));
const client = new Client({ name: "ts-agent", version: "1.0.0" });
await client.connect(transport);
for (const step of plan) {
  const options = {};
  const controller = new AbortController();
  if (step.abortAfterMs !== undefined) {
    options.signal = controller.signal;
    setTimeout(() => controller.abort("the agent gave up"), step.abortAfterMs);
  }
  if (step.timeoutMs !== undefined) {
    options.timeout = step.timeoutMs;
  }
  try {
    const result = await client.callTool({ name: step.tool, arguments: step.arguments ?? {} }, undefined, options);
    console.log(JSON.stringify({ tool: step.tool, isError: result.isError === true }));
  } catch (error) {
    const outcome = controller.signal.aborted ? "aborted" : { code: error.code ?? null };
    console.log(JSON.stringify({ tool: step.tool, error: outcome }));
  }
}
await client.close();
