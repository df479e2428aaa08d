/**
 * The messages an SDK object sends, as they leave: each `Client` or `Server` is given its transport
 * at `connect`, and mcp-otel watches that transport's `send` (the SDK itself takes over the
 * transport's callbacks the same way). That is where the SDK's answers to the requests it handles
 * are seen exactly as sent, and the notifications it sends, its own `notifications/cancelled`
 * included (the SDK writes those to the transport directly).
 *
 * A watched transport forwards every call unchanged (the same arguments, the same returned
 * promise); what it may replace is a traced notification's message, by a copy whose `_meta` has
 * the trace context. Every watched transport is restored when the instrumentation is disabled,
 * and watched again, with its watcher, when it is enabled again (its connection goes on).
 *
 * A transport no `Protocol` reads yet (v2's connect-time probe) has the reply to a request sent on
 * it seen as it reaches the handler its SDK set (`awaitReply`), and a transport class whose
 * instances the SDK starts of its own (v2's probe sibling) has its `start` watched
 * (`watchStarts`): once per transport, never per message.
 *
 * A stdio server transport's input is watched too: the stream it reads (`_stdin`, the process's
 * stdin) ending or closing is its client going away. v1's transport (and v2 2.0's) ignores that
 * end, so the SDK never closes the connection; v2 2.4's closes it on the same two events, which
 * mcp-otel then also sees as the connection's close.
 */
import { field } from './fields.js';
import { reportOnce } from './safety.js';

/** What a watcher does with a message about to be sent: nothing, or a copy to send instead. */
export type Watcher = (message: unknown) => unknown;

type Method = (this: unknown, ...args: unknown[]) => unknown;

const WATCHED = Symbol('mcp_otel.watched');
const AWAITED = Symbol('mcp_otel.awaited_replies');

/** What a watched method keeps: the method it replaced, and whether that was the object's own. */
interface Saved {
  readonly original: Method;
  readonly own: boolean;
}

/** Put `method` in place of `target[name]`, keeping the one it replaces (`restore` puts it back). */
function replace(target: Record<PropertyKey, unknown>, name: string, method: Method, original: Method): void {
  (method as unknown as Record<symbol, unknown>)[WATCHED] = {
    original,
    own: Object.prototype.hasOwnProperty.call(target, name),
  } satisfies Saved;
  target[name] = method;
}

/** Whether `target[name]` is one of ours. */
function watched(target: Record<PropertyKey, unknown>, name: string): boolean {
  const method = target[name];
  return typeof method === 'function' && (method as unknown as Record<symbol, unknown>)[WATCHED] !== undefined;
}

/** Put back what `target[name]` replaced, if it is one of ours. */
function restore(target: Record<PropertyKey, unknown>, name: string): void {
  const saved = (target[name] as Record<symbol, unknown> | undefined)?.[WATCHED] as Saved | undefined;
  if (saved === undefined) return;
  if (saved.own) target[name] = saved.original;
  else Reflect.deleteProperty(target, name); // its prototype's shows again
}

export class Transports {
  // Transports watched, held weakly: restored on disable, forgotten when collected.
  private readonly watched = new Set<WeakRef<Record<PropertyKey, unknown>>>();
  // Each one's watcher, to watch it again after a disable.
  private readonly watchers = new WeakMap<object, Watcher>();

  // Transport prototypes whose `start` is watched, each with what it tells: few, and long-lived.
  private readonly starts = new Map<object, (transport: object) => void>();

  /** Watch `transport.send` with `watcher` (once per transport). */
  watch(transport: unknown, watcher: Watcher): void {
    if (typeof transport !== 'object' || transport === null) return;
    const target = transport as Record<PropertyKey, unknown>;
    const send = target.send;
    if (typeof send !== 'function' || watched(target, 'send')) return;
    const original = send as Method;
    replace(target, 'send', function (this: unknown, message: unknown, ...rest: unknown[]): unknown {
      let sent = message;
      try {
        sent = watcher(message) ?? message;
      } catch (error) {
        reportOnce('could not read a message sent', error);
      }
      return original.call(this, sent, ...rest);
    }, original);
    for (const ref of this.watched) if (ref.deref() === undefined) this.watched.delete(ref);
    if (!this.watchers.has(target)) this.watched.add(new WeakRef(target));
    this.watchers.set(target, watcher);
  }

  /** Tell `started(transport)` as each transport whose prototype is `prototype` starts (once per prototype). */
  watchStarts(prototype: object, started: (transport: object) => void): void {
    const target = prototype as Record<PropertyKey, unknown>;
    const start = target.start;
    if (typeof start !== 'function' || watched(target, 'start')) return;
    const original = start as Method;
    replace(target, 'start', function (this: unknown, ...args: unknown[]): unknown {
      try {
        if (typeof this === 'object' && this !== null) started(this);
      } catch (error) {
        reportOnce('could not follow a transport starting', error);
      }
      return original.apply(this, args);
    }, original);
    this.starts.set(prototype, started);
  }

  /** Restore every watched transport's own `send`, and every watched prototype's `start`. */
  restoreAll(): void {
    for (const ref of this.watched) {
      const target = ref.deref();
      if (target !== undefined) restore(target, 'send');
    }
    for (const prototype of this.starts.keys()) restore(prototype as Record<PropertyKey, unknown>, 'start');
  }

  /** Watch again every transport and prototype restored by `restoreAll` (the transports still alive). */
  watchAll(): void {
    for (const ref of this.watched) {
      const target = ref.deref();
      const watcher = target === undefined ? undefined : this.watchers.get(target);
      if (target !== undefined && watcher !== undefined) this.watch(target, watcher);
    }
    for (const [prototype, started] of this.starts) this.watchStarts(prototype, started);
  }
}

/**
 * Tell `replied(message)` the response to request `id` on `transport` as it arrives, before the
 * handler the transport now has (`onmessage`, its SDK's) gets it: for a request sent on a
 * transport no `Protocol` reads yet. That handler is wrapped once, for the requests awaited on
 * it; whoever replaces it (v2 puts back the one it saved) drops the wrapper with it.
 */
export function awaitReply(transport: unknown, id: unknown, replied: (message: unknown) => void): void {
  if (typeof transport !== 'object' || transport === null) return;
  const target = transport as Record<PropertyKey, unknown>;
  const handler = target.onmessage;
  if (typeof handler !== 'function') return;
  let awaited = (handler as unknown as Record<symbol, unknown>)[AWAITED] as Map<unknown, (message: unknown) => void> | undefined;
  if (awaited === undefined) {
    const replies = new Map<unknown, (message: unknown) => void>();
    const original = handler as Method;
    const wrapped = function (this: unknown, message: unknown, ...rest: unknown[]): unknown {
      const reply = field(message, 'method') === undefined ? replies.get(field(message, 'id')) : undefined;
      if (reply !== undefined) {
        replies.delete(field(message, 'id'));
        try {
          reply(message);
        } catch (error) {
          reportOnce('could not read a reply', error);
        }
      }
      return original.call(this, message, ...rest);
    };
    (wrapped as unknown as Record<symbol, unknown>)[AWAITED] = replies;
    target.onmessage = wrapped;
    awaited = replies;
  }
  awaited.set(id, replied);
}

/** A stream's events as `on` and `off` (a Node `Readable`). */
interface Input {
  on(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
}

/** The stream a stdio server transport reads its client from (both generations keep it here). */
function inputOf(transport: unknown): Input | undefined {
  const stdin = field(transport, '_stdin');
  return typeof field(stdin, 'on') === 'function' && typeof field(stdin, 'off') === 'function' ? (stdin as Input) : undefined;
}

/**
 * Whether the input of a stdio server transport has ended: its stream's end was read, or it was
 * destroyed (the test v2 2.4's transport makes when it starts).
 */
export function inputEnded(transport: unknown): boolean {
  const stdin = inputOf(transport);
  return stdin !== undefined && (field(stdin, 'readableEnded') === true || field(stdin, 'destroyed') === true);
}

/**
 * Call `ended` once when the input of stdio server transport `transport` ends or closes (its
 * client went away). Returns what stops watching (the connection closed first), or nothing for
 * another transport. The listeners change nothing the stream does: `end` and `close` neither
 * start its flow nor keep the process alive.
 */
export function watchInput(transport: unknown, ended: () => void): (() => void) | undefined {
  const stdin = inputOf(transport);
  if (stdin === undefined || inputEnded(transport)) return undefined;
  const stop = (): void => {
    stdin.off('end', once);
    stdin.off('close', once);
  };
  const once = (): void => {
    stop();
    ended();
  };
  stdin.on('end', once);
  stdin.on('close', once);
  return stop;
}
