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
 *
 * Its `Client.connect` with `versionNegotiation` probes the server with `server/discover` before
 * the `Protocol` connects, past the send funnel: sent on the transport itself (`ProbeWindow`), with
 * a string id `server-discover-probe-N` (never one of the Protocol's numbers), answered to the
 * window's own `onmessage`. Its base stdio client transport is not probed in place: the SDK starts a
 * disposable sibling (`new transport.constructor(...)`) to probe on, only when the transport's
 * prototype is that base class's (it owns `_dispose`) and keeps its spawn parameters.
 */
import type { Message, SdkFacts, SdkFailure } from '../facts.js';
import { field } from '../fields.js';
import {
  attributesOfTransport,
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
const PROBE_ID_PREFIX = 'server-discover-probe-';
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
  isProbe(message: Message): boolean {
    return typeof message.id === 'string' && message.id.startsWith(PROBE_ID_PREFIX);
  },
  probeSiblingOf(transport: unknown): object | undefined {
    const prototype: unknown = typeof transport === 'object' && transport !== null ? Object.getPrototypeOf(transport) : undefined;
    const params = field(transport, '_serverParams');
    const spawns = typeof field(params, 'command') === 'string';
    return spawns && typeof prototype === 'object' && prototype !== null && Object.prototype.hasOwnProperty.call(prototype, '_dispose')
      ? prototype
      : undefined;
  },
  attributesOfTransport,
};

export const SDK2: ProtocolShape = { sendFunnel: '_requestWithSchemaViaCodec', messageIndex: 1, optionsIndex: 3, facts };
