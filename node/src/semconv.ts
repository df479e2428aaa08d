/**
 * Every name and value mcp-otel writes: attribute names, metric names, outcome values.
 *
 * The same strings as the Python package's `src/mcp_otel/semconv.py`, under the same constant
 * names: `tests/test_languages.py` loads this module's build and fails when a name or a value
 * differs (ADR-191 rule 3: one string travels end to end, whatever language wrote the span).
 * Pinned to the same sources: semantic-conventions-genai `docs/gen-ai/mcp.md` @4172e394 and
 * semantic-conventions v1.44.0; names marked mcp-otel are our own.
 */

// --- MCP and GenAI attributes ---
export const MCP_METHOD_NAME = 'mcp.method.name';
export const MCP_PROTOCOL_VERSION = 'mcp.protocol.version';
export const MCP_SESSION_ID = 'mcp.session.id';
export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const GEN_AI_PROMPT_NAME = 'gen_ai.prompt.name';
export const MCP_RESOURCE_URI = 'mcp.resource.uri';
// A conversation's id from OpenTelemetry baggage: on spans, never on metric points.
export const GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
// Opt-in (sensitive): a tool call's arguments and result as JSON.
export const GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';

// --- General attributes ---
export const ERROR_TYPE = 'error.type';
export const JSONRPC_REQUEST_ID = 'jsonrpc.request.id';
export const RPC_RESPONSE_STATUS_CODE = 'rpc.response.status_code';
export const NETWORK_TRANSPORT = 'network.transport';
export const SERVER_ADDRESS = 'server.address';
export const SERVER_PORT = 'server.port';
export const CLIENT_ADDRESS = 'client.address';
export const CLIENT_PORT = 'client.port';

// --- MCP metrics ---
export const MCP_CLIENT_OPERATION_DURATION = 'mcp.client.operation.duration';
export const MCP_SERVER_OPERATION_DURATION = 'mcp.server.operation.duration';
export const MCP_CLIENT_SESSION_DURATION = 'mcp.client.session.duration';
export const MCP_SERVER_SESSION_DURATION = 'mcp.server.session.duration';
export const DURATION_UNIT = 's';
export const DURATION_BUCKETS: readonly number[] = [
  0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
];
// The value a bounded metric attribute takes past its limit.
export const OTHER_VALUE = '_OTHER';

// --- mcp-otel attributes ---
export const MCP_REQUEST_OUTCOME = 'mcp.request.outcome';
export const MCP_REQUEST_CANCEL_REASON = 'mcp.request.cancel.reason';
// The same values again on tools/call spans and points: the project's first public contract.
export const TOOL_OUTCOME = 'tool.outcome';
export const TOOL_CANCEL_REASON = 'tool.cancel.reason';
// A request answered with something other than its result: no outcome, no point.
export const MCP_REQUEST_RESULT_TYPE = 'mcp.request.result_type';
// The person's answer to an elicitation: accept | decline | cancel (never its content).
export const MCP_ELICITATION_ACTION = 'mcp.elicitation.action';
// The server's self-reported identity (serverInfo), or the configured override.
export const MCP_SERVER_NAME = 'mcp.server.name';
export const MCP_SERVER_VERSION = 'mcp.server.version';

// --- Values ---
export const METHOD_TOOLS_CALL = 'tools/call';
export const METHOD_INITIALIZE = 'initialize';
export const METHOD_PROMPTS_GET = 'prompts/get';
export const METHOD_SERVER_DISCOVER = 'server/discover';
export const METHOD_ELICITATION_CREATE = 'elicitation/create';
export const METHOD_SAMPLING_CREATE_MESSAGE = 'sampling/createMessage';
export const METHOD_ROOTS_LIST = 'roots/list';
export const METHOD_CANCELLED = 'notifications/cancelled';
export const METHOD_PROGRESS = 'notifications/progress';
export const METHOD_LOG_MESSAGE = 'notifications/message';
export const NOTIFICATION_PREFIX = 'notifications/';
// Notifications that come by the hundred: spans of theirs only with traceProgressAndLogs.
export const FREQUENT_NOTIFICATIONS: ReadonlySet<string> = new Set([METHOD_PROGRESS, METHOD_LOG_MESSAGE]);
// The methods the MCP specification defines (2025-11-25 and 2026-07-28, both directions): always
// admitted as metric values; any other method name is bounded like a tool name.
export const KNOWN_METHODS: ReadonlySet<string> = new Set([
  METHOD_INITIALIZE,
  'ping',
  'tools/list',
  METHOD_TOOLS_CALL,
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  METHOD_PROMPTS_GET,
  'completion/complete',
  'logging/setLevel',
  METHOD_SERVER_DISCOVER,
  'subscriptions/listen',
  METHOD_SAMPLING_CREATE_MESSAGE,
  METHOD_ELICITATION_CREATE,
  METHOD_ROOTS_LIST,
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  METHOD_CANCELLED,
  'notifications/initialized',
  METHOD_PROGRESS,
  METHOD_LOG_MESSAGE,
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/prompts/list_changed',
  'notifications/tools/list_changed',
  'notifications/roots/list_changed',
  'notifications/subscriptions/acknowledged',
  'notifications/tasks/status',
]);
// Methods whose span carries mcp.resource.uri.
export const RESOURCE_URI_METHODS: ReadonlySet<string> = new Set([
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'notifications/resources/updated',
]);
export const OPERATION_EXECUTE_TOOL = 'execute_tool';
export const TRANSPORT_PIPE = 'pipe'; // stdio
export const TRANSPORT_TCP = 'tcp'; // streamable HTTP, SSE

// JSON-RPC codes that say the caller sent a request the server could not serve. On SERVER spans
// and points: status UNSET, no error.type, the code in rpc.response.status_code.
export const CALLER_FAULT_CODES: ReadonlySet<number> = new Set([
  -32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022,
]);
// MCP 2026-07-28: the person must complete a URL elicitation first; no result yet.
export const URL_ELICITATION_REQUIRED_CODE = -32042;
// A server/discover probe answered with these is a version negotiation step.
export const NEGOTIATION_CODES: ReadonlySet<number> = new Set([-32600, -32601, -32602, -32022]);
// A client's answer to sampling/createMessage when the person rejected it.
export const USER_REJECTED_CODE = -1;
// ElicitResult.action values that mean the person said no (decline) or dismissed it (cancel).
export const DECLINING_ACTIONS: ReadonlySet<string> = new Set(['decline', 'cancel']);
export const ELICITATION_ACTIONS: ReadonlySet<string> = new Set(['accept', 'decline', 'cancel']);

// The instrumentation scope name of every span and metric we create (the npm package's name is
// the scope's version's home; the name is the one all three languages share).
export const INSTRUMENTATION_SCOPE = 'mcp_otel';

/** How one request ended: the single tri-state value (ADR-191 rule 1). */
export const Outcome = { OK: 'ok', FAILED: 'failed', CANCELLED: 'cancelled' } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** Values of mcp.request.cancel.reason: "client"/"server" name the request's sender and receiver. */
export const CancelReason = {
  // Sender: the caller aborted the request (its AbortSignal).
  CALLER: 'caller',
  // Receiver: the sender sent notifications/cancelled for the request.
  CLIENT: 'client',
  // Receiver: the sender closed the request's stream or the connection with it in flight.
  DISCONNECT: 'disconnect',
  // Both sides: the person declined an input request of the call.
  INPUT_DECLINED: 'input_declined',
} as const;
export type CancelReason = (typeof CancelReason)[keyof typeof CancelReason];

/** Values of mcp.request.result_type: a request answered with no result yet. */
export const ResultType = {
  INPUT_REQUIRED: 'input_required',
  TASK: 'task',
  NEGOTIATION: 'negotiation',
} as const;
export type ResultType = (typeof ResultType)[keyof typeof ResultType];

/** Our own error.type values; JSON-RPC errors use their code and other errors their class name. */
export const ErrorType = {
  TOOL_ERROR: 'tool_error',
  TIMEOUT: 'timeout',
  CONNECTION_CLOSED: 'connection_closed',
  SHUTDOWN: 'shutdown',
  TASK_FAILED: 'task_failed',
} as const;
