/**
 * `@modelcontextprotocol/sdk` 1.x: one `Protocol` class in `dist/cjs/shared/protocol.js` and again
 * in `dist/esm/shared/protocol.js` (two copies: both are patched). Hooked by file, as 1.32.2's
 * `"."` export names a `dist/cjs/index.js` it does not ship, so a hook on the package name alone
 * never sees its CommonJS files.
 *
 * Its shapes: every request is sent by `request(request, resultSchema, options)`; every error,
 * the peer's answer and the SDK's own alike, is an `McpError` with a numeric `code` (the SDK's
 * request timeout -32001, also what it rejects a caller's abort with, and its closed connection
 * -32000).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SdkFacts } from '../facts.js';
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

export const SDK1_PACKAGE = '@modelcontextprotocol/sdk';
export const SDK1_VERSIONS = ['>=1.26.0 <2'];
// Its Protocol class, and its Client class (whose callTool is a logical call), in each format.
export const SDK1_CJS_FILES = ['dist/cjs/shared/protocol.js', 'dist/cjs/client/index.js'];
export const SDK1_ESM_FILES = ['dist/esm/shared/protocol.js', 'dist/esm/client/index.js'];
const LOWEST_MINOR = 26;

/** Whether the v1 package in `baseDir` is a version we support (SDK1_VERSIONS). */
export function supportedSdk1(baseDir: string | undefined): boolean {
  if (baseDir === undefined) return false;
  try {
    const { version } = JSON.parse(readFileSync(join(baseDir, 'package.json'), 'utf8')) as { version?: unknown };
    const [major, minor] = String(version).split('.').map(Number);
    return major === 1 && (minor ?? 0) >= LOWEST_MINOR;
  } catch {
    return false;
  }
}

const facts: SdkFacts = {
  rpcErrorOf: codedError,
  sdkFailureOf: () => undefined,
  connection: connectionFacts,
  transportAttributes,
  nextRequestId,
  handlerControllers,
  requestProtocolVersion,
  transportClosed,
  isProbe: () => false, // v1 never probes
  probeSiblingOf: () => undefined,
  attributesOfTransport,
};

export const SDK1: ProtocolShape = { sendFunnel: 'request', messageIndex: 0, optionsIndex: 2, facts };
