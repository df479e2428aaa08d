/**
 * The sides of an in-process SDK, together: what every front end hands requests, notifications,
 * connections and the messages a transport sends to. One per instrumentation; it reads the
 * instrumentation's current tracer, meter and settings on every request.
 */
import type { Tracer } from '@opentelemetry/api';
import { ClientSide } from './client.js';
import type { Settings } from './config.js';
import type { Message, Protocol, SdkFacts } from './facts.js';
import { field } from './fields.js';
import { Lifecycle } from './lifecycle.js';
import type { CallMetrics } from './metrics.js';
import { NotificationSide } from './notifications.js';
import { reportOnce } from './safety.js';
import { ServerSide } from './server.js';
import { Connections } from './sessions.js';
import { Transports, watchInput } from './transport.js';

export class Sides {
  readonly connections: Connections;
  readonly client: ClientSide;
  readonly server: ServerSide;
  readonly notifications: NotificationSide;
  readonly transports = new Transports();

  constructor(tracer: () => Tracer, metrics: () => CallMetrics, settings: () => Settings) {
    const lifecycle = new Lifecycle(tracer, metrics);
    this.connections = new Connections(metrics);
    this.client = new ClientSide(lifecycle, settings, this.connections);
    this.server = new ServerSide(lifecycle, settings, this.connections);
    this.notifications = new NotificationSide(lifecycle, settings, this.connections);
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
    const connection = this.connections.opened(protocol, role, transport);
    this.transports.watch(transport, (message) => this.sending(facts, protocol, message));
    if (role === 'server') {
      connection.unwatchInput = watchInput(transport, () => {
        this.guard('the end of input', () => {
          this.server.inputEnded(protocol);
          this.connections.closed(facts, protocol);
        });
      });
    }
  }

  /** A message `protocol` sends: an answer to a request it handles, or a notification. */
  private sending(facts: SdkFacts, protocol: Protocol, message: unknown): unknown {
    const sent = message as Message & { result?: unknown; error?: unknown };
    if (typeof sent !== 'object' || sent === null) return undefined;
    if (sent.method === undefined && sent.id !== undefined) {
      this.server.answered(protocol, sent);
      return undefined;
    }
    if (sent.id === undefined && typeof sent.method === 'string') return this.notifications.sent(facts, protocol, sent);
    return undefined;
  }
}
