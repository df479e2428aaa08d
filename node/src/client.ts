/**
 * The sender side: every request a process sends becomes one CLIENT span (the Python package's
 * `client.py`). That is every request a client sends its server and every request a server sends
 * its client (`elicitation/create`, `sampling/createMessage`, `roots/list`, `ping`).
 *
 * Which SDK function sends a request is each front end's to know; they hand each request here with
 * the function that sends it. Here, for both SDK generations:
 * - a caller whose signal is already aborted sends nothing, so gets no span;
 * - the span carries the connection's facts and the JSON-RPC id the SDK gives the request;
 * - the propagator's fields go into a copy of `params._meta` (the caller's object is never changed);
 * - the caller's abort is told apart from the SDK's timeout precisely: our own abort listener,
 *   added before the SDK's, notes the abort while the request is pending, and the rejection is the
 *   SDK's timeout error made of that very abort reason (or the reason itself);
 * - the application gets the SDK's own promise back: the same result, the same rejection object,
 *   the same timing.
 */
import { context, createContextKey, type Attributes } from '@opentelemetry/api';
import { requestAttributes, requestOf, type Request } from './attributes.js';
import {
  classifyClientError,
  classifyClientRejection,
  classifyClientResult,
  elicitationAction,
  isDeclinedAnswer,
  type RpcError,
} from './classify.js';
import type { Settings } from './config.js';
import { argumentsAttributes, resultAttributes } from './content.js';
import type { Message, Protocol, SdkFacts } from './facts.js';
import { field, stringOf } from './fields.js';
import type { Call, Lifecycle } from './lifecycle.js';
import type { Verdict } from './outcome.js';
import { withContext } from './propagation.js';
import { awaitReply } from './transport.js';
import { reportOnce } from './safety.js';
import {
  JSONRPC_REQUEST_ID,
  MCP_ELICITATION_ACTION,
  MCP_PROTOCOL_VERSION,
  MCP_SERVER_NAME,
  MCP_SERVER_VERSION,
  METHOD_ELICITATION_CREATE,
  METHOD_INITIALIZE,
  METHOD_SERVER_DISCOVER,
  METHOD_TOOLS_CALL,
} from './semconv.js';
import type { Connection, Sessions } from './sessions.js';

// Protocol keys, not telemetry names (Python's messages.py holds them): where a 2026-07-28
// server/discover result names the server, and where a 2026-07-28 request names its protocol
// version (the per-request envelope in params._meta).
const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/**
 * A request sent and not yet ended: its span ends with what the application gets, as its own
 * promise or the logical call it belongs to tells. While pending it listens for the caller's
 * abort (added before the SDK's own listener, so it sees the abort while the request is pending).
 */
class Sent {
  promise!: Promise<unknown>; // set as soon as the SDK returns it
  private abortedWhilePending = false;

  constructor(
    private readonly side: ClientSide,
    private readonly facts: SdkFacts,
    private readonly protocol: Protocol,
    private readonly connection: Connection,
    private readonly call: Call,
    private readonly request: Request,
    private readonly signal: AbortSignal | undefined,
  ) {
    signal?.addEventListener('abort', this, { once: true });
  }

  /** The caller's abort, while pending (a listener object: no closure per request). */
  handleEvent(): void {
    this.abortedWhilePending = true;
  }

  /** What the application got is this answer. */
  answered(result: unknown): void {
    this.settled();
    this.side.finishAnswered(this.protocol, this.call, this.request, result);
  }

  /** ... this rejection: the request's own, or (`local`) the SDK's own check of its answer. */
  rejected(error: unknown, local: boolean): void {
    this.settled();
    const aborted = !local && this.abortedWhilePending;
    this.side.finishRejected(this.facts, this.call, this.request, error, aborted, this.signal, local);
  }

  private settled(): void {
    this.signal?.removeEventListener('abort', this); // a later abort is not this request's
    this.side.sessions.sent(this.connection, this.call);
  }
}

/** A logical call in progress (`callTool` on `protocol`): the request it sent last, which ends with it. */
interface LogicalCall {
  readonly protocol: Protocol;
  sent?: Sent;
}

const LOGICAL_CALL = createContextKey('mcp_otel.logical_call');

/** Follow `sent` (sent on `protocol`) to its end: the logical call it belongs to ends it, else its own promise. */
function follow(sent: Sent, protocol: Protocol, method: string): void {
  const scope = method === METHOD_TOOLS_CALL ? (context.active().getValue(LOGICAL_CALL) as LogicalCall | undefined) : undefined;
  // A call's requests are its own client's (not those another client sends in its context).
  if (scope?.protocol !== protocol) {
    sent.promise.then(
      (result: unknown) => { sent.answered(result); },
      (error: unknown) => { sent.rejected(error, false); },
    );
    return;
  }
  // A logical call sends another request only once its first failed (v2 retries one refused for
  // its headers): that first one ends on its own, as it ended.
  if (scope.sent !== undefined) follow(scope.sent, protocol, '');
  scope.sent = sent;
}

/** The options a caller passes with a request (only the signal is read). */
export interface SendOptions {
  readonly signal?: AbortSignal;
}

export class ClientSide {
  constructor(
    private readonly lifecycle: Lifecycle,
    private readonly settings: () => Settings,
    readonly sessions: Sessions,
  ) {}

  /**
   * Send `message` on `protocol` with `send` (the SDK's own function, given the message to send),
   * as one CLIENT span. Returns exactly what `send` returns.
   */
  send<T>(
    facts: SdkFacts,
    protocol: Protocol,
    message: Message,
    options: SendOptions | undefined,
    send: (message: Message) => Promise<T>,
  ): Promise<T> {
    const signal = options?.signal;
    if (signal?.aborted) return send(message); // never sent: no request, no span
    let call: Call;
    let request: Request;
    let connection: Connection;
    let outgoing = message;
    try {
      const settings = this.settings();
      const named = requestOf(message.method, message.params, settings);
      request = named;
      connection = this.sessions.of(protocol);
      const shape = this.sessions.shape(connection, 'client', named, settings, () => ({
        ...requestAttributes(named, settings, this.sessions.facts(facts, protocol, 'client')),
        ...facts.transportAttributes(protocol, 'client'),
      }));
      const attributes: Attributes = { ...shape.span };
      if (named.method === METHOD_TOOLS_CALL) {
        Object.assign(attributes, argumentsAttributes(field(message.params, 'arguments'), settings));
      }
      const id = facts.nextRequestId(protocol);
      if (typeof id === 'number' || typeof id === 'string') attributes[JSONRPC_REQUEST_ID] = String(id);
      call = this.lifecycle.open('client', named, shape, attributes);
      call.requestId = id;
      if (settings.propagate) outgoing = withContext(message, call.context);
    } catch (error) {
      reportOnce('could not start a request span', error);
      return send(message);
    }
    this.sessions.sending(connection, call);
    const sent = new Sent(this, facts, protocol, connection, call, request, signal);
    try {
      sent.promise = context.with(call.context, () => send(outgoing));
    } catch (error) {
      sent.rejected(error, false);
      throw error;
    }
    follow(sent, protocol, request.method);
    return sent.promise as Promise<T>;
  }

  /**
   * Run `call` (the SDK's `callTool` on `protocol`) as one logical call: the request it sends
   * ends with it, as what the application gets: the request's answer, or the SDK's own check of it.
   */
  logical<T>(protocol: Protocol, call: () => Promise<T>): Promise<T> {
    const scope: LogicalCall = { protocol };
    const promise = context.with(context.active().setValue(LOGICAL_CALL, scope), call);
    Promise.resolve(promise).then(
      (value) => scope.sent?.answered(value),
      (error: unknown) => {
        const { sent } = scope;
        // Rejected by its request, or after its answer by the SDK's own check of it (then no
        // peer's code, whatever code it carries).
        sent?.promise.then(
          () => { sent.rejected(error, true); },
          (requestError: unknown) => { sent.rejected(requestError, false); },
        );
      },
    );
    return promise;
  }

  /**
   * The SDK sends `message`, its connect-time probe, on `transport` itself, past its send funnel
   * (no `Protocol` reads that transport yet): one CLIENT span, ended by the reply the transport
   * hands the SDK's own handler. A probe with no reply (it timed out, its connection closed, or an
   * HTTP status refused it) has no outcome, so no span. Returns the message to send instead: a
   * copy with the span's trace context in `params._meta` (the SDK keeps no copy of what it sends).
   */
  probe(facts: SdkFacts, protocol: Protocol, transport: unknown, message: Message): Message | undefined {
    const settings = this.settings();
    const request = requestOf(message.method, message.params, settings);
    const span = { ...requestAttributes(request, settings, {}), ...facts.attributesOfTransport(transport, 'client') };
    const shape = this.sessions.shape(this.sessions.of(protocol, transport), 'client', request, settings, () => span);
    const call = this.lifecycle.open('client', request, shape, { ...shape.span, [JSONRPC_REQUEST_ID]: String(message.id) });
    call.requestId = message.id;
    // The version it asks for: the server's, once it answers with a result.
    const version = stringOf(field(field(message.params, '_meta'), PROTOCOL_VERSION_META_KEY));
    awaitReply(transport, message.id, (reply) => {
      const error = field(reply, 'error');
      if (error === undefined) {
        this.finishAnswered(protocol, call, request, field(reply, 'result'), version === undefined ? {} : { [MCP_PROTOCOL_VERSION]: version });
        return;
      }
      const code = field(error, 'code');
      const rpcError: RpcError = { code: typeof code === 'number' ? code : NaN, message: stringOf(field(error, 'message')) ?? '' };
      this.lifecycle.finish(call, () => classifyClientError(rpcError, { keepMessage: settings.captureContent, method: request.method }));
    });
    return settings.propagate ? withContext(message, call.context) : undefined;
  }

  /** End the span of `call`, answered with `result` (`late`: what else its answer says). */
  finishAnswered(protocol: Protocol, call: Call, request: Request, result: unknown, late: Attributes = {}): void {
    try {
      if (request.method === METHOD_INITIALIZE || request.method === METHOD_SERVER_DISCOVER) {
        this.learnServer(protocol, call, result, late);
      }
      const action = request.method === METHOD_ELICITATION_CREATE ? elicitationAction(result) : undefined;
      if (action !== undefined) late[MCP_ELICITATION_ACTION] = action;
      if (request.method === METHOD_TOOLS_CALL) Object.assign(late, resultAttributes(result, this.settings()));
    } catch (error) {
      reportOnce('could not read an answer', error);
    }
    const answerDeclined = isDeclinedAnswer(request.method, result);
    if (answerDeclined) this.sessions.inputDeclined(call);
    const inputDeclined = this.sessions.wasInputDeclined(call);
    this.lifecycle.finish(call, () => classifyClientResult(result, { answerDeclined, inputDeclined }), late);
  }

  /**
   * The handshake's answer names the server (an initialize result's `serverInfo`, a 2026-07-28
   * server/discover result's `_meta` stamp) and the protocol version: the span and the point learn them.
   */
  private learnServer(protocol: Protocol, call: Call, result: unknown, late: Attributes): void {
    const info = field(result, 'serverInfo') ?? field(field(result, '_meta'), SERVER_INFO_META_KEY);
    const version = stringOf(field(result, 'protocolVersion'));
    this.sessions.learnt(protocol, version);
    const settings = this.settings();
    const learnt: [string, string | undefined][] = [
      [MCP_SERVER_NAME, settings.serverName ?? stringOf(field(info, 'name'))],
      [MCP_SERVER_VERSION, settings.serverVersion ?? stringOf(field(info, 'version'))],
      [MCP_PROTOCOL_VERSION, version],
    ];
    for (const [key, value] of learnt) {
      if (value !== undefined) late[key] = value.slice(0, settings.maxNameLength);
    }
    this.lifecycle.relearn(call, late);
  }

  /** End the span of `call`, rejected with `error` (`local`: by the SDK's own check of its answer). */
  finishRejected(
    facts: SdkFacts,
    call: Call,
    request: Request,
    error: unknown,
    abortedWhilePending: boolean,
    signal: AbortSignal | undefined,
    local = false,
  ): void {
    this.lifecycle.finish(call, (): Verdict => {
      const rpcError: RpcError | undefined = local ? undefined : facts.rpcErrorOf(error);
      const failure = local ? undefined : facts.sdkFailureOf(error);
      const answerDeclined = isDeclinedAnswer(request.method, undefined, rpcError);
      if (answerDeclined) this.sessions.inputDeclined(call);
      return classifyClientRejection({
        callerAborted: abortedWhilePending && isAbortOf(error, signal, rpcError, failure),
        rpcError,
        timedOut: failure === 'timeout',
        transportClosed: failure === 'connection_closed',
        errorName: errorName(error),
        keepMessage: this.settings().captureContent,
        answerDeclined,
        inputDeclined: this.sessions.wasInputDeclined(call),
        method: request.method,
      });
    });
  }
}

/**
 * Whether a rejection is the caller's abort itself: the abort reason, or the SDK's timeout error
 * made of it (v1 `McpError(-32001, String(reason))`, v2 `SdkError(RequestTimeout, String(reason))`),
 * not an error that raced it.
 */
function isAbortOf(
  error: unknown,
  signal: AbortSignal | undefined,
  rpcError: RpcError | undefined,
  failure: string | undefined,
): boolean {
  if (signal === undefined || !signal.aborted) return false;
  if (error === signal.reason) return true;
  const sdkTimeout = failure === 'timeout' || rpcError?.code === -32001;
  const message = field(error, 'message');
  return sdkTimeout && typeof message === 'string' && message.endsWith(String(signal.reason));
}

/** An error's class name (error.type of an error that is no JSON-RPC error). */
export function errorName(error: unknown): string {
  const name = field(field(error, 'constructor'), 'name');
  return typeof name === 'string' && name ? name : typeof error;
}
