/**
 * mcp-otel for the MCP TypeScript SDK: the public API.
 *
 * `new McpInstrumentation(config)` for `registerInstrumentations`; `node --import mcp-otel/register`
 * for zero code; `instrumentation.instrument(Client, Server)` for bundled code.
 */
export { McpInstrumentation } from './instrumentation.js';
export type { McpInstrumentationConfig } from './config.js';
export * as semconv from './semconv.js';
export { VERSION } from './version.js';
