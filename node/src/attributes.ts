/**
 * The attributes CLIENT and SERVER spans of a request share, built the same way on both sides (the
 * Python package's `attributes.py`).
 *
 * Names come from peers (method and tool names from whoever sends, server names from whoever
 * answers), so every such value is cut to `maxNameLength` here, once.
 */
import type { Attributes } from '@opentelemetry/api';
import type { Settings } from './config.js';
import { bounded } from './outcome.js';
import {
  FREQUENT_NOTIFICATIONS,
  GEN_AI_OPERATION_NAME,
  GEN_AI_PROMPT_NAME,
  GEN_AI_TOOL_NAME,
  KNOWN_METHODS,
  MCP_METHOD_NAME,
  MCP_PROTOCOL_VERSION,
  MCP_RESOURCE_URI,
  MCP_SERVER_NAME,
  MCP_SERVER_VERSION,
  MCP_SESSION_ID,
  METHOD_PROMPTS_GET,
  METHOD_TOOLS_CALL,
  NOTIFICATION_PREFIX,
  OPERATION_EXECUTE_TOOL,
  RESOURCE_URI_METHODS,
} from './semconv.js';

/** One request as both sides describe it: its method and what its parameters name. */
export interface Request {
  readonly method: string;
  readonly target?: string; // tool or prompt name (bounded)
  readonly uri?: string; // mcp.resource.uri (bounded)
  readonly name: string; // its spans' name: `{method} {target}`, or the method alone
}

// Which parameter names a method's target, and the attribute that holds it.
const TARGETS: ReadonlyMap<string, string> = new Map([
  [METHOD_TOOLS_CALL, GEN_AI_TOOL_NAME],
  [METHOD_PROMPTS_GET, GEN_AI_PROMPT_NAME],
]);

function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The request of `method` with `params` (as a peer sent them: any shape, bounded here). */
export function requestOf(method: unknown, params: unknown, settings: Settings): Request {
  let name = typeof method === 'string' && method ? method : 'unknown';
  if (!KNOWN_METHODS.has(name)) name = bounded(name, settings.maxNameLength);
  const fields = typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {};
  const rawTarget = TARGETS.has(name) ? text(fields.name) : undefined;
  const rawUri = RESOURCE_URI_METHODS.has(name) ? text(fields.uri) : undefined;
  const target = rawTarget === undefined ? undefined : bounded(rawTarget, settings.maxNameLength);
  const uri = rawUri === undefined ? undefined : bounded(rawUri, settings.maxContentLength);
  return { method: name, target, uri, name: target ? `${name} ${target}` : name };
}

/** What a connection knows of its server and protocol when a request is opened. */
export interface ConnectionFacts {
  readonly serverName?: string;
  readonly serverVersion?: string;
  readonly protocolVersion?: string;
  readonly sessionId?: string;
}

/**
 * The attributes of a request's span that do not depend on the side or transport. The settings'
 * server name and version override what the server says it is.
 */
export function requestAttributes(request: Request, settings: Settings, facts: ConnectionFacts): Attributes {
  const attributes: Attributes = { [MCP_METHOD_NAME]: request.method };
  const target = TARGETS.get(request.method);
  if (request.method === METHOD_TOOLS_CALL) attributes[GEN_AI_OPERATION_NAME] = OPERATION_EXECUTE_TOOL;
  if (target !== undefined && request.target) attributes[target] = request.target;
  if (request.uri) attributes[MCP_RESOURCE_URI] = request.uri;
  const optional: [string, string | undefined][] = [
    [MCP_PROTOCOL_VERSION, facts.protocolVersion],
    [MCP_SESSION_ID, facts.sessionId],
    [MCP_SERVER_NAME, settings.serverName ?? facts.serverName],
    [MCP_SERVER_VERSION, settings.serverVersion ?? facts.serverVersion],
  ];
  for (const [key, value] of optional) {
    if (typeof value === 'string' && value) attributes[key] = bounded(value, settings.maxNameLength);
  }
  return attributes;
}

/**
 * Whether a notification of `method` gets a span: every one, but progress and log messages only
 * with `traceProgressAndLogs` (they come by the hundred).
 */
export function tracedNotification(method: unknown, settings: Settings): boolean {
  return (
    typeof method === 'string' &&
    method.startsWith(NOTIFICATION_PREFIX) &&
    (!FREQUENT_NOTIFICATIONS.has(method) || settings.traceProgressAndLogs)
  );
}
