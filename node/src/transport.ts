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
 * A stdio server transport's input is watched too: the stream it reads (`_stdin`, the process's
 * stdin) ending or closing is its client going away. v1's transport (and v2 2.0's) ignores that
 * end, so the SDK never closes the connection; v2 2.4's closes it on the same two events, which
 * mcp-otel then also sees as the connection's close.
 */
import { field } from './fields.js';
import { reportOnce } from './safety.js';

/** What a watcher does with a message about to be sent: nothing, or a copy to send instead. */
export type Watcher = (message: unknown) => unknown;

type Send = (this: unknown, message: unknown, ...rest: unknown[]) => unknown;

const WATCHED = Symbol('mcp_otel.watched_send');

export class Transports {
  // Transports watched, held weakly: restored on disable, forgotten when collected.
  private readonly watched = new Set<WeakRef<Record<PropertyKey, unknown>>>();
  // Each one's watcher, to watch it again after a disable.
  private readonly watchers = new WeakMap<object, Watcher>();

  /** Watch `transport.send` with `watcher` (once per transport). */
  watch(transport: unknown, watcher: Watcher): void {
    if (typeof transport !== 'object' || transport === null) return;
    const target = transport as Record<PropertyKey, unknown>;
    const send = target.send;
    if (typeof send !== 'function' || (send as unknown as Record<symbol, unknown>)[WATCHED] !== undefined) return;
    const own = Object.prototype.hasOwnProperty.call(target, 'send');
    const original = send as Send;
    const watchedSend = function (this: unknown, message: unknown, ...rest: unknown[]): unknown {
      let sent = message;
      try {
        sent = watcher(message) ?? message;
      } catch (error) {
        reportOnce('could not read a message sent', error);
      }
      return original.call(this, sent, ...rest);
    };
    (watchedSend as unknown as Record<symbol, unknown>)[WATCHED] = { original, own };
    target.send = watchedSend;
    for (const ref of this.watched) if (ref.deref() === undefined) this.watched.delete(ref);
    if (!this.watchers.has(target)) this.watched.add(new WeakRef(target));
    this.watchers.set(target, watcher);
  }

  /** Restore every watched transport's own `send`. */
  restoreAll(): void {
    for (const ref of this.watched) {
      const target = ref.deref();
      const send = target?.send as Record<symbol, unknown> | undefined;
      const saved = send?.[WATCHED] as { original: Send; own: boolean } | undefined;
      if (target === undefined || saved === undefined) continue;
      if (saved.own) target.send = saved.original;
      else delete target.send;
    }
  }

  /** Watch again every transport restored by `restoreAll` that is still alive. */
  watchAll(): void {
    for (const ref of this.watched) {
      const target = ref.deref();
      const watcher = target === undefined ? undefined : this.watchers.get(target);
      if (target !== undefined && watcher !== undefined) this.watch(target, watcher);
    }
  }
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
