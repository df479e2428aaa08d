/**
 * What an SDK front end is: the patch table of the SDK's `Protocol` class, the base of its
 * `Client` and `Server` (each generation has one, and v2 one per package). Every request either
 * sends or handles passes through these methods; each front end (`sdk1.ts`, `sdk2.ts`) says which
 * method is its send funnel and gives the facts only its shapes hold (`SdkFacts`).
 *
 * | method | what it is | the side told |
 * |---|---|---|
 * | the send funnel (`request` v1, `_requestWithSchemaViaCodec` v2) | a request sent | `ClientSide.send` |
 * | `_onrequest` | a request received, dispatched to its handler | `ServerSide.receive` |
 * | `_onnotification` | a notification received | `NotificationSide.received` |
 * | `_oncancel` | the peer's `notifications/cancelled`, which aborts a handler | `ServerSide.cancelled` |
 * | `_onclose` | the connection closed, which aborts every handler | `ServerSide.closed` |
 * | `close` | the application closing its own object | `ServerSide.closingByApplication` |
 * | `connect` | the transport given: its `send` is watched (answers, notifications sent) | `Transports.watch` |
 * | `Client.connect` | v2 probes the server (`server/discover`) before: that transport, or the sibling it probes on, watched | `Sides.negotiating` |
 */
import type { Attributes } from '@opentelemetry/api';
import type { ConnectionFacts } from '../attributes.js';
import type { RpcError } from '../classify.js';
import { transportOf, type Message, type Protocol, type SdkFacts, type SideName } from '../facts.js';
import { field, stringOf } from '../fields.js';
import {
  NETWORK_TRANSPORT,
  SERVER_ADDRESS,
  SERVER_PORT,
  TRANSPORT_PIPE,
  TRANSPORT_TCP,
} from '../semconv.js';
import type { Sides } from '../sides.js';
import { inputEnded } from '../transport.js';

/** What tells one SDK generation's `Protocol` apart. */
export interface ProtocolShape {
  /** The method every request sent goes through. */
  readonly sendFunnel: string;
  /** Its arguments: where the request and the caller's options are. */
  readonly messageIndex: number;
  readonly optionsIndex: number;
  readonly facts: SdkFacts;
}

type Method = (this: Protocol, ...args: unknown[]) => unknown;
/** How a front end wraps a method of a prototype (the instrumentation's own `_wrap`). */
export type Wrap = (target: object, name: string, wrapper: (original: Method) => Method) => void;

const METHODS = ['_onrequest', '_onnotification', '_oncancel', '_onclose', 'close', 'connect'];

/** The names a `Protocol` prototype is patched at. */
export function patchedMethods(shape: ProtocolShape): string[] {
  return [shape.sendFunnel, ...METHODS];
}

/** Whether `prototype` is a `Protocol` prototype of this shape (it owns every patched method). */
export function isProtocol(prototype: unknown, shape: ProtocolShape): prototype is object {
  return (
    typeof prototype === 'object' &&
    prototype !== null &&
    patchedMethods(shape).every((name) => Object.prototype.hasOwnProperty.call(prototype, name))
  );
}

/** The `Protocol` prototype of a class (`Client`, `Server`) or an instance, by its prototype chain. */
export function protocolOf(classOrInstance: unknown, shape: ProtocolShape): object | undefined {
  let prototype: unknown =
    typeof classOrInstance === 'function' ? (classOrInstance as { prototype: unknown }).prototype : classOrInstance;
  for (let depth = 0; prototype !== null && prototype !== undefined && depth < 8; depth++) {
    if (isProtocol(prototype, shape)) return prototype;
    prototype = Object.getPrototypeOf(prototype);
  }
  return undefined;
}

/** Patch a `Protocol` prototype for `sides`. */
export function patchProtocol(prototype: object, shape: ProtocolShape, sides: Sides, wrap: Wrap): void {
  const { facts } = shape;
  FACTS.set(prototype, facts);
  wrap(prototype, shape.sendFunnel, (original) =>
    function (this: Protocol, ...args: unknown[]) {
      const message = args[shape.messageIndex] as Message;
      const options = args[shape.optionsIndex] as { signal?: AbortSignal } | undefined;
      return sides.client.send(facts, this, message, options, (sent) => {
        const forwarded = args.slice();
        forwarded[shape.messageIndex] = sent;
        return original.apply(this, forwarded) as Promise<unknown>;
      });
    },
  );
  wrap(prototype, '_onrequest', (original) =>
    function (this: Protocol, ...args: unknown[]) {
      let returned: unknown;
      sides.server.receive(facts, this, args[0] as Message, args[1], () => {
        returned = original.apply(this, args);
      });
      return returned;
    },
  );
  wrap(prototype, '_onnotification', (original) =>
    function (this: Protocol, ...args: unknown[]) {
      let returned: unknown;
      sides.notifications.received(facts, this, args[0] as Message, args[1], () => {
        returned = original.apply(this, args);
      });
      return returned;
    },
  );
  wrap(prototype, '_oncancel', (original) =>
    function (this: Protocol, ...args: unknown[]) {
      try {
        return original.apply(this, args); // aborts the handler, at once (v2's is async, but awaits nothing)
      } finally {
        sides.guard('a cancel', () => { sides.server.cancelled(this, field(field(args[0], 'params'), 'requestId')); });
      }
    },
  );
  wrap(prototype, '_onclose', (original) =>
    function (this: Protocol, ...args: unknown[]) {
      let aborted: (() => void) | undefined;
      sides.guard('a close', () => {
        aborted = sides.server.closed(this);
        sides.sessions.closed(facts, this);
      });
      try {
        return original.apply(this, args); // aborts every handler in flight
      } finally {
        if (aborted !== undefined) sides.guard('a close', aborted);
      }
    },
  );
  wrap(prototype, 'close', (original) =>
    function (this: Protocol, ...args: unknown[]) {
      sides.guard('a close', () => { sides.server.closingByApplication(facts, this); });
      return original.apply(this, args);
    },
  );
  wrap(prototype, 'connect', (original) =>
    function (this: Protocol, ...args: unknown[]) {
      sides.guard('a connection', () => { sides.connected(facts, this, args[0]); });
      return original.apply(this, args);
    },
  );
}

/**
 * The `Client` methods that make a logical call of one request, whose span they end: `callTool`
 * checks the result against the tool's output schema after the answer came, and what the
 * application gets (the result, or that check's error) is what the span states.
 */
const LOGICAL = ['callTool'];

/**
 * Every `Client` method patched (the instrumentation wraps and restores these): its logical calls,
 * and its own `connect`, where a v2 client probes the server before its `Protocol` connects.
 */
export const LOGICAL_CALLS = [...LOGICAL, 'connect'];

// The facts of each `Protocol` prototype patched: a `Client`'s connect finds its generation's.
const FACTS = new WeakMap<object, SdkFacts>();

/** The facts of the SDK generation of `protocol` (a `Client` or `Server` instance), by its prototype chain. */
function factsOf(protocol: Protocol): SdkFacts | undefined {
  let prototype: object | null = Object.getPrototypeOf(protocol) as object | null;
  for (let depth = 0; prototype !== null && depth < 8; depth++) {
    const facts = FACTS.get(prototype);
    if (facts !== undefined) return facts;
    prototype = Object.getPrototypeOf(prototype) as object | null;
  }
  return undefined;
}

/** The `Client` prototype of a class or an instance (the one that owns `callTool`). */
export function clientOf(classOrInstance: unknown): object | undefined {
  let prototype: unknown =
    typeof classOrInstance === 'function' ? (classOrInstance as { prototype: unknown }).prototype : classOrInstance;
  for (let depth = 0; prototype !== null && prototype !== undefined && depth < 8; depth++) {
    if (typeof prototype === 'object' && LOGICAL.every((name) => Object.prototype.hasOwnProperty.call(prototype, name))) {
      return prototype;
    }
    prototype = Object.getPrototypeOf(prototype);
  }
  return undefined;
}

/** Patch a `Client` prototype's logical calls and its `connect` for `sides`. */
export function patchClient(prototype: object, sides: Sides, wrap: Wrap): void {
  for (const name of LOGICAL) {
    wrap(prototype, name, (original) =>
      function (this: Protocol, ...args: unknown[]) {
        return sides.client.logical(this, () => original.apply(this, args) as Promise<unknown>);
      },
    );
  }
  wrap(prototype, 'connect', (original) =>
    function (this: Protocol, ...args: unknown[]) {
      const facts = factsOf(this);
      const connect = (): unknown => original.apply(this, args);
      return facts === undefined ? connect() : sides.negotiating(facts, this, args[0], connect);
    },
  );
}

/** What both generations' `Client` and `Server` say of their connection (the same fields). */
export function connectionFacts(protocol: Protocol): ConnectionFacts {
  const getServerVersion = field(protocol, 'getServerVersion');
  // A Client knows its server from the handshake; a Server is the server.
  const info =
    typeof getServerVersion === 'function'
      ? (getServerVersion as () => unknown).call(protocol)
      : field(protocol, '_serverInfo');
  return {
    serverName: stringOf(field(info, 'name')),
    serverVersion: stringOf(field(info, 'version')),
    protocolVersion: stringOf(field(protocol, '_negotiatedProtocolVersion')),
    sessionId: stringOf(field(transportOf(protocol), 'sessionId')),
  };
}

/** The connection's transport attributes (`attributesOfTransport` of its transport). */
export function transportAttributes(protocol: Protocol, side: SideName): Attributes {
  return attributesOfTransport(transportOf(protocol), side);
}

/**
 * A transport's attributes, from its class (stdio: `pipe`; HTTP: `tcp` and, for a client, the
 * server's address and port from its URL).
 */
export function attributesOfTransport(transport: unknown, side: SideName): Attributes {
  const kind = stringOf(field(field(transport, 'constructor'), 'name')) ?? '';
  if (/stdio/i.test(kind)) return { [NETWORK_TRANSPORT]: TRANSPORT_PIPE };
  if (!/http|sse/i.test(kind)) return {}; // in memory, or a transport of the application's own
  const attributes: Attributes = { [NETWORK_TRANSPORT]: TRANSPORT_TCP };
  const url = field(transport, '_url');
  if (side === 'client' && url instanceof URL) {
    attributes[SERVER_ADDRESS] = url.hostname;
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    attributes[SERVER_PORT] = port;
  }
  return attributes;
}

/** The JSON-RPC id the next request sent will take (both generations count them here). */
export function nextRequestId(protocol: Protocol): unknown {
  return field(protocol, '_requestMessageId');
}

/** The abort controllers of the requests being handled, by id (both generations). */
export function handlerControllers(protocol: Protocol): Map<unknown, AbortController> | undefined {
  const controllers = field(protocol, '_requestHandlerAbortControllers');
  return controllers instanceof Map ? (controllers as Map<unknown, AbortController>) : undefined;
}

/**
 * Whether the transport has already closed: its own `_closed`, or, for v2's `serveStdio`, that of
 * the stdio transport its channel wraps (`_wire`), which closes at the end of input and then has
 * the SDK close the server; or a stdio transport's input has ended (v1's stays open at the end of
 * input, and an application may close its server then). A server closed after that was not shut
 * down: its client went away.
 */
export function transportClosed(protocol: Protocol): boolean {
  const transport = transportOf(protocol);
  return field(transport, '_closed') === true || field(field(transport, '_wire'), '_closed') === true || inputEnded(transport);
}

/**
 * The `mcp-protocol-version` header of the HTTP request a message came in: v1 hands the handler
 * `requestInfo.headers` (a plain object), v2's `createMcpHandler` the fetch `Request` itself.
 */
export function requestProtocolVersion(extra: unknown): string | undefined {
  const headers = field(field(extra, 'requestInfo'), 'headers');
  const plain = stringOf(field(headers, PROTOCOL_VERSION_HEADER));
  if (plain !== undefined) return plain;
  const request = field(extra, 'request');
  const get = field(field(request, 'headers'), 'get');
  if (typeof get !== 'function') return undefined;
  return stringOf((get as (name: string) => unknown).call(field(request, 'headers'), PROTOCOL_VERSION_HEADER));
}

const PROTOCOL_VERSION_HEADER = 'mcp-protocol-version';

/**
 * The JSON-RPC error of a rejection: both generations' errors with a numeric `code` (v1's
 * `McpError`, the peer's answer and the SDK's own alike; v2's `ProtocolError`, the peer's).
 */
export function codedError(error: unknown): RpcError | undefined {
  const code = field(error, 'code');
  if (!(error instanceof Error) || typeof code !== 'number') return undefined;
  return { code, message: error.message };
}
