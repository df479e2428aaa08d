/**
 * `@modelcontextprotocol/client` and `@modelcontextprotocol/server` 2.x: each package bundles its
 * own `Protocol` class into a chunk whose name is hashed, so it is reached from the package's
 * exports (`Client`, `Server`: their prototype chain), never by a file path; CommonJS (`.cjs`) and
 * ESM (`.mjs`) copies alike.
 *
 * Its shapes: every request (`request`, `_requestWithSchema`, a handler's `ctx.mcpReq.send`, a
 * multi-round call's next round) goes through `_requestWithSchemaViaCodec(codec, request, schema,
 * options)`; a peer's JSON-RPC error is a `ProtocolError` with a numeric `code`; the SDK's own are
 * `SdkError`s with string codes (its request timeout, also what it rejects a caller's abort with,
 * `REQUEST_TIMEOUT`, and its closed connection `CONNECTION_CLOSED`).
 */
import type { SdkFacts, SdkFailure } from '../facts.js';
import { field } from '../fields.js';
import {
  codedError,
  connectionFacts,
  handlerControllers,
  nextRequestId,
  requestProtocolVersion,
  transportAttributes,
  transportClosed,
  type ProtocolShape,
} from './protocol.js';

export const SDK2_PACKAGES = ['@modelcontextprotocol/client', '@modelcontextprotocol/server'];
export const SDK2_VERSIONS = ['>=2.0.0 <3'];
const SDK_FAILURES: Record<string, SdkFailure> = {
  REQUEST_TIMEOUT: 'timeout',
  CONNECTION_CLOSED: 'connection_closed',
};

const facts: SdkFacts = {
  rpcErrorOf: codedError,
  sdkFailureOf(error: unknown): SdkFailure | undefined {
    const code = field(error, 'code');
    return error instanceof Error && typeof code === 'string' ? SDK_FAILURES[code] : undefined;
  },
  connection: connectionFacts,
  transportAttributes,
  nextRequestId,
  handlerControllers,
  requestProtocolVersion,
  transportClosed,
};

export const SDK2: ProtocolShape = { sendFunnel: '_requestWithSchemaViaCodec', messageIndex: 1, optionsIndex: 3, facts };
