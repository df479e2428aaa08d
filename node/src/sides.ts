/**
 * The sides of an in-process SDK, together: what every front end hands requests, notifications,
 * connections and the messages a transport sends to. One per instrumentation; it reads the
 * instrumentation's current tracer, meter and settings on every request.
 */
import { context, createContextKey, type Tracer } from '@opentelemetry/api';
import { ClientSide } from './client.js';
import type { Settings } from './config.js';
import type { Message, Protocol, SdkFacts } from './facts.js';
import { field } from './fields.js';
import { Lifecycle } from './lifecycle.js';
import type { CallMetrics } from './metrics.js';
import { NotificationSide } from './notifications.js';
import { reportOnce } from './safety.js';
import { METHOD_SERVER_DISCOVER } from './semconv.js';
import { ServerSide } from './server.js';
import { Sessions } from './sessions.js';
import { Transports, watchInput } from './transport.js';

/** A v2 `Client` connecting, while it probes: what a transport the SDK starts of its own is watched for. */
interface Negotiation {
  readonly facts: SdkFacts;
  readonly protocol: Protocol;
  readonly transport: unknown;
  // Its Protocol connected: the probing is over (a transport started later in a context that
  // came from this connect, a handler's, is no sibling of its).
  over: boolean;
}

const NEGOTIATION = createContextKey('mcp_otel.negotiation');

export class Sides {
  readonly sessions: Sessions;
  readonly client: ClientSide;
  readonly server: ServerSide;
  readonly notifications: NotificationSide;
  readonly transports = new Transports();

  constructor(tracer: () => Tracer, metrics: () => CallMetrics, settings: () => Settings) {
    const lifecycle = new Lifecycle(tracer, metrics);
    this.sessions = new Sessions(metrics);
    this.client = new ClientSide(lifecycle, settings, this.sessions);
    this.server = new ServerSide(lifecycle, settings, this.sessions);
    this.notifications = new NotificationSide(lifecycle, settings, this.sessions);
  }

  /** `fn()`, our bookkeeping: whatever it throws is logged once and goes no further. */
  guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      reportOnce(`could not follow ${what}`, error);
    }
  }

  /**
   * `protocol` connects to `transport`: its session starts, and what it sends is watched; a stdio
   * server's input too, whose end is its client going away.
   */
  connected(facts: SdkFacts, protocol: Protocol, transport: unknown): void {
    const role = typeof field(protocol, 'getServerVersion') === 'function' ? 'client' : 'server';
    const negotiation = context.active().getValue(NEGOTIATION) as Negotiation | undefined;
    if (negotiation?.protocol === protocol) negotiation.over = true;
    const connection = this.sessions.opened(protocol, role, transport);
    this.watchSends(facts, protocol, transport);
    if (role === 'server') {
      connection.unwatchInput = watchInput(transport, () => {
        this.guard('the end of input', () => {
          this.server.inputEnded(protocol);
          this.sessions.closed(facts, protocol);
        });
      });
    }
  }

  /**
   * `protocol` (a `Client`) connects to `transport` with `connect()` (its own `connect`): a v2
   * client may first probe the server, on that transport or on a sibling the SDK starts, before
   * its `Protocol` connects; both are watched from here, so the probe gets its CLIENT span.
   */
  negotiating<T>(facts: SdkFacts, protocol: Protocol, transport: unknown, connect: () => T): T {
    let negotiation: Negotiation | undefined;
    this.guard('a connection', () => {
      this.watchSends(facts, protocol, transport);
      const sibling = facts.probeSiblingOf(transport);
      if (sibling !== undefined) this.transports.watchStarts(sibling, (started) => { this.siblingStarted(started); });
      negotiation = { facts, protocol, transport, over: false };
    });
    return negotiation === undefined ? connect() : context.with(context.active().setValue(NEGOTIATION, negotiation), connect);
  }

  /** A transport of a watched class starts: one the SDK started to probe on, while its client connects. */
  private siblingStarted(transport: object): void {
    const negotiation = context.active().getValue(NEGOTIATION) as Negotiation | undefined;
    if (negotiation === undefined || negotiation.over || negotiation.transport === transport) return;
    this.watchSends(negotiation.facts, negotiation.protocol, transport);
  }

  /** Watch what `protocol` sends on `transport` (once per transport). */
  private watchSends(facts: SdkFacts, protocol: Protocol, transport: unknown): void {
    this.transports.watch(transport, (message) => this.sending(facts, protocol, transport, message));
  }

  /** A message `protocol` sends: an answer to a request it handles, a notification, or a probe. */
  private sending(facts: SdkFacts, protocol: Protocol, transport: unknown, message: unknown): unknown {
    const sent = message as Message & { result?: unknown; error?: unknown };
    if (typeof sent !== 'object' || sent === null) return undefined;
    if (sent.method === undefined && sent.id !== undefined) {
      this.server.answered(protocol, sent);
      return undefined;
    }
    if (sent.id === undefined && typeof sent.method === 'string') return this.notifications.sent(facts, protocol, sent);
    if (sent.method === METHOD_SERVER_DISCOVER && facts.isProbe(sent)) return this.client.probe(facts, protocol, transport, sent);
    return undefined;
  }
}
