/**
 * The receiver side: every request a process handles becomes one SERVER span (the Python package's
 * `server.py`): a server's handling of its client's requests, and an agent's callbacks for its
 * server's requests (elicitation, sampling, roots, ping).
 *
 * A request is opened when the SDK dispatches it (its handler runs with the span current, so what
 * the handler sends is its child) and finished by what the SDK answered, as it leaves on the
 * transport (`transport.ts` shows each message sent here): a result, a JSON-RPC error (the SDK's
 * own -32601 for an unknown method and the code it turns a handler's throw into included). A
 * request the SDK aborts is finished at the abort, as the SDK then answers nothing: the client's
 * `notifications/cancelled` is `cancelled` / `client`, the connection closing with it in flight
 * `cancelled` / `disconnect`, the application closing its own server `failed` / `shutdown`. A stdio
 * client's end of input is `cancelled` / `disconnect` too where the SDK lets its handlers run on.
 */
import { context, trace, type Attributes, type Context, type Link } from '@opentelemetry/api';
import { requestAttributes, requestOf } from './attributes.js';
import { classifyServerCall, elicitationAction, isDeclinedAnswer, type RpcError, type ServerEnd } from './classify.js';
import type { Settings } from './config.js';
import { argumentsAttributes, resultAttributes } from './content.js';
import type { Message, Protocol, SdkFacts } from './facts.js';
import { field, stringOf } from './fields.js';
import type { Call, Lifecycle } from './lifecycle.js';
import { extracted } from './propagation.js';
import { reportOnce } from './safety.js';
import {
  JSONRPC_REQUEST_ID,
  MCP_ELICITATION_ACTION,
  MCP_PROTOCOL_VERSION,
  METHOD_ELICITATION_CREATE,
  METHOD_INITIALIZE,
  METHOD_TOOLS_CALL,
} from './semconv.js';
import { HANDLED_CALL, answersInput, type Sessions } from './sessions.js';

export class ServerSide {
  private readonly closing = new WeakSet();

  constructor(
    private readonly lifecycle: Lifecycle,
    private readonly settings: () => Settings,
    private readonly sessions: Sessions,
  ) {}

  /** A request `message` arrived on `protocol`; `dispatch` runs the SDK's own handling of it. */
  receive(facts: SdkFacts, protocol: Protocol, message: Message, extra: unknown, dispatch: () => void): void {
    let call: Call;
    let handling: Map<unknown, Call>;
    let handlerContext: Context;
    let parent = context.active();
    try {
      const settings = this.settings();
      const request = requestOf(message.method, message.params, settings);
      const connection = this.sessions.of(protocol);
      const shape = this.sessions.shape(connection, 'server', request, settings, () => {
        let known = this.sessions.facts(facts, protocol, 'server');
        if (known.protocolVersion === undefined) {
          // A server instance per HTTP request never negotiates: its request's header names the version.
          known = { ...known, protocolVersion: facts.requestProtocolVersion(extra) };
        }
        return { ...requestAttributes(request, settings, known), ...facts.transportAttributes(protocol, 'server', extra) };
      });
      const attributes: Attributes = { ...shape.span };
      if (typeof message.id === 'number' || typeof message.id === 'string') {
        attributes[JSONRPC_REQUEST_ID] = String(message.id);
      }
      if (request.method === METHOD_TOOLS_CALL) {
        Object.assign(attributes, argumentsAttributes(field(message.params, 'arguments'), settings));
      }
      const remote = extracted(field(message.params, '_meta'));
      let links: Link[] | undefined;
      if (remote !== undefined && settings.trustRemoteContext) {
        // An HTTP server span, say (not the sender's own span: in memory it is the current one).
        const ambient = trace.getSpanContext(parent);
        if (ambient !== undefined && ambient.spanId !== trace.getSpanContext(remote)?.spanId) links = [{ context: ambient }];
        parent = remote;
      } else if (remote !== undefined) {
        const sender = trace.getSpanContext(remote);
        if (sender !== undefined) links = [{ context: sender }];
      }
      call = this.lifecycle.open('server', request, shape, attributes, parent, links);
      if (request.method === METHOD_INITIALIZE) connection.answersInput = answersInput(field(message.params, 'capabilities'));
      // A peer that declared neither elicitation nor sampling has no handler to answer an input
      // request with (the SDKs register none without the capability), so it cannot decline one:
      // the handled call need not be found from what its handler sends.
      handlerContext = connection.answersInput === false ? call.context : call.context.setValue(HANDLED_CALL, call);
      handling = connection.handling;
      handling.set(message.id, call);
    } catch (error) {
      reportOnce('could not start a request span', error);
      dispatch();
      return;
    }
    context.with(handlerContext, dispatch);
    if (call.finished) return; // answered at once (method not found, an invalid envelope)
    const controller = facts.handlerControllers(protocol)?.get(message.id);
    if (controller === undefined) {
      // Neither answered nor handled: the SDK dropped it (another protocol era's request). No
      // answer was seen, so no outcome: the span is never ended, so never exported.
      handling.delete(message.id);
      return;
    }
    // The SDK aborts it only in `_oncancel` and `_onclose`, which end it (`cancelled`, `closed`).
    call.signal = controller.signal;
  }

  /** The SDK sends `message` on `protocol`'s transport: a response ends the request it answers. */
  answered(protocol: Protocol, message: Message & { result?: unknown; error?: unknown }): void {
    const handling = this.sessions.of(protocol).handling;
    const call = handling.get(message.id);
    if (call === undefined) return;
    handling.delete(message.id);
    const code = field(message.error, 'code');
    const rpcError: RpcError | undefined =
      message.error === undefined
        ? undefined
        : { code: typeof code === 'number' ? code : NaN, message: stringOf(field(message.error, 'message')) ?? '' };
    const { result } = message;
    const late: Attributes = {};
    if (call.method === METHOD_INITIALIZE && rpcError === undefined) {
      // The version the server answered the handshake with: this span's, and the connection's.
      const version = stringOf(field(result, 'protocolVersion'));
      this.sessions.learnt(protocol, version);
      if (version !== undefined) {
        late[MCP_PROTOCOL_VERSION] = version;
        this.lifecycle.relearn(call, late);
      }
    }
    const action = call.method === METHOD_ELICITATION_CREATE ? elicitationAction(result) : undefined;
    if (action !== undefined) late[MCP_ELICITATION_ACTION] = action;
    if (call.method === METHOD_TOOLS_CALL) Object.assign(late, resultAttributes(result, this.settings()));
    const answerDeclined = isDeclinedAnswer(call.method, result, rpcError);
    if (answerDeclined) this.sessions.inputDeclined(call, protocol);
    this.finish(call, {
      answer: result,
      rpcError,
      answerDeclined,
      inputDeclined: this.sessions.wasInputDeclined(call),
      keepMessage: this.settings().captureContent,
      method: call.method,
    }, late);
  }

  /** The client's `notifications/cancelled` for request `id` has aborted its handler: `cancelled` / `client`. */
  cancelled(protocol: Protocol, id: unknown): void {
    const handling = this.sessions.of(protocol).handling;
    const call = handling.get(id);
    if (call?.signal?.aborted !== true) return;
    handling.delete(id);
    this.finish(call, { peerCancelled: true, method: call.method });
  }

  /**
   * The application closes its own `protocol` object: a server shutting down, unless its
   * transport had already closed (then the SDK closes it because its peer went away).
   */
  closingByApplication(facts: SdkFacts, protocol: Protocol): void {
    if (!facts.transportClosed(protocol)) this.closing.add(protocol);
  }

  /**
   * `protocol`'s connection is closing: the SDK is about to abort every handler in flight. Returns
   * what ends them once it has: `cancelled` / `disconnect` when the peer went away, `failed` /
   * `shutdown` when the application closed its own object.
   */
  closed(protocol: Protocol): () => void {
    const transportClosed = !this.closing.delete(protocol);
    // Read now: the SDK forgets the connection's transport as it closes.
    const handling = this.sessions.of(protocol).handling;
    return () => {
      for (const [id, call] of handling) {
        if (call.signal?.aborted !== true) continue;
        handling.delete(id);
        this.finish(call, { isCancellation: true, transportClosed, method: call.method });
      }
    };
  }

  /**
   * `protocol`'s client went away (its stdio input ended) with calls in flight, which its SDK lets
   * run on (v1): each is `cancelled` / `disconnect` now; what its handler answers later reaches no
   * one, and ends nothing.
   */
  inputEnded(protocol: Protocol): void {
    const handling = this.sessions.of(protocol).handling;
    for (const [id, call] of handling) {
      handling.delete(id);
      this.finish(call, { isCancellation: true, transportClosed: true, method: call.method });
    }
  }

  private finish(call: Call, facts: ServerEnd, late?: Attributes): void {
    this.lifecycle.finish(call, () => classifyServerCall(facts), late);
  }
}
