/**
 * mcp-otel for the MCP TypeScript SDK: the public API, shaped like an opentelemetry-js-contrib
 * instrumentation's (the class and its config type).
 *
 * `new McpInstrumentation(config)` for `registerInstrumentations` or the Node SDK; `node --import
 * mcp-otel/register` for zero code; `instrumentation.instrument(Client, Server)` by hand, for code
 * load hooks cannot see (bundled, serverless). `Outcome` holds the values of
 * `mcp.request.outcome` and `tool.outcome`, for code that reads spans (a test, a processor): the
 * rest of the names stay inside the package.
 */
export { McpInstrumentation } from './instrumentation.js';
export type { McpInstrumentationConfig } from './config.js';
export { Outcome } from './semconv.js';
