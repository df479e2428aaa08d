/**
 * What mcp-otel keeps per connection, held weakly: the protocol version its handshake settled (v1
 * keeps none itself), the attributes its requests of each name share once that handshake settled
 * (built once, not per request), its requests in flight both ways, the person's no to an input
 * request (which makes the call it belongs to `input_declined`), and its session's duration
 * (mcp.client.session.duration / mcp.server.session.duration).
 *
 * A connection is its transport, not the `Client` or `Server` object: the SDK's methods may be
 * called on a `Proxy` of that object (LangChain's adapters wrap the `Client` in one), which reads
 * the same transport but is another object.
 */
import { createContextKey, context, type Attributes } from '@opentelemetry/api';
import type { ConnectionFacts, Request } from './attributes.js';
import type { Settings } from './config.js';
import { field } from './fields.js';
import { transportOf, type Protocol, type SdkFacts, type SideName } from './facts.js';
import type { Call, Shape } from './lifecycle.js';
import type { CallMetrics } from './metrics.js';
import { reportOnce } from './safety.js';
import { MCP_PROTOCOL_VERSION, MCP_SERVER_NAME } from './semconv.js';

// The request being handled, in its handler's context: a request its handler sends (an
// elicitation) belongs to it. Kept only where the peer can answer such requests.
export const HANDLED_CALL = createContextKey('mcp_otel.handled_call');

// Shapes kept per connection and side: a peer naming a new tool or resource every time gets no
// more than these (later ones are built per request, as before the handshake).
const MAX_SHAPES = 256;

/** A connection's shapes, by side and request (made with these settings and metrics). */
interface Shapes {
  readonly settings: Settings;
  readonly metrics: CallMetrics;
  readonly client: Map<string, Shape>;
  readonly server: Map<string, Shape>;
}

/** What is kept of one connection. */
export interface Connection {
  protocolVersion?: string;
  // Whether the peer can answer input requests (it declared elicitation or sampling in its
  // initialize); unknown (undefined) without a handshake seen.
  answersInput?: boolean;
  shapes?: Shapes;
  opened?: number; // performance.now() at connect
  role?: SideName;
  // Stops watching a stdio server's input for its client's end (`transport.ts`).
  unwatchInput?: () => void;
  readonly sending: Set<Call>; // requests sent, unanswered
  readonly handling: Map<unknown, Call>; // requests handled, unanswered, by JSON-RPC id
}

/** The sessions: what is kept of each connection, both sides, and each session's duration. */
export class Sessions {
  private readonly connections = new WeakMap<object, Connection>();
  // A request sent while handling another: the handled one.
  private readonly within = new WeakMap<Call, Call>();
  private readonly declined = new WeakSet<Call>();

  constructor(private readonly metrics: () => CallMetrics) {}

  of(protocol: Protocol, transport: unknown = transportOf(protocol)): Connection {
    const key = keyOf(protocol, transport);
    let connection = this.connections.get(key);
    if (connection === undefined) {
      connection = { sending: new Set(), handling: new Map() };
      this.connections.set(key, connection);
    }
    return connection;
  }

  private find(protocol: Protocol): Connection | undefined {
    return this.connections.get(keyOf(protocol, transportOf(protocol)));
  }

  /** The connection's facts: the front end's, with the protocol version its handshake settled. */
  facts(facts: SdkFacts, protocol: Protocol, side: SideName): ConnectionFacts {
    const found = facts.connection(protocol, side);
    const learnt = this.find(protocol)?.protocolVersion;
    return found.protocolVersion !== undefined || learnt === undefined ? found : { ...found, protocolVersion: learnt };
  }

  /** The handshake settled `protocolVersion` (from its answer, either side): shapes are made anew. */
  learnt(protocol: Protocol, protocolVersion: string | undefined): void {
    if (protocolVersion === undefined) return;
    const connection = this.of(protocol);
    connection.protocolVersion = protocolVersion;
    connection.shapes = undefined;
  }

  /**
   * The shape of `request` on `side` of `connection`: kept once its handshake settled
   * (what a request's span says of its connection changes no more), else `build()` anew. A
   * client's is kept once it knows its server's name, which the SDK learns just after the
   * handshake's answer.
   */
  shape(connection: Connection, side: SideName, request: Request, settings: Settings, build: () => Attributes): Shape {
    const metrics = this.metrics();
    let kept: Map<string, Shape> | undefined;
    const key = request.uri === undefined ? request.name : `${request.name}\n${request.uri}`;
    if (connection.protocolVersion !== undefined) {
      let shapes = connection.shapes;
      if (shapes?.settings !== settings || shapes.metrics !== metrics) {
        shapes = connection.shapes = { settings, metrics, client: new Map(), server: new Map() };
      }
      kept = shapes[side];
      const shape = kept.get(key);
      if (shape !== undefined) return shape;
    }
    const span = build();
    const shape: Shape = { span, metric: metrics.attributes(span) };
    if (kept !== undefined && kept.size < MAX_SHAPES && (side === 'server' || span[MCP_SERVER_NAME] !== undefined)) {
      kept.set(key, shape);
    }
    return shape;
  }

  sending(connection: Connection, call: Call): void {
    connection.sending.add(call);
    const handled = context.active().getValue(HANDLED_CALL) as Call | undefined;
    if (handled !== undefined) this.within.set(call, handled);
  }

  sent(connection: Connection, call: Call): void {
    connection.sending.delete(call);
  }

  /** A request in flight that `protocol` sent, by the span's JSON-RPC id attribute. */
  inFlight(protocol: Protocol): Iterable<Call> {
    return this.find(protocol)?.sending ?? [];
  }

  /**
   * The person said no to an input request: on its sender's CLIENT span (a server's elicitation),
   * the request handled that sent it; on its receiver's SERVER span (an agent's callback), the
   * calls the agent has in flight on that connection.
   */
  inputDeclined(call: Call, protocol?: Protocol): void {
    const handled = this.within.get(call);
    if (handled !== undefined) this.declined.add(handled);
    if (protocol !== undefined) for (const sent of this.inFlight(protocol)) this.declined.add(sent);
  }

  wasInputDeclined(call: Call): boolean {
    return this.declined.has(call);
  }

  /** `protocol` connects to `transport`: its session's clock runs. */
  opened(protocol: Protocol, role: SideName, transport: unknown): Connection {
    const connection = this.of(protocol, transport);
    connection.opened = performance.now();
    connection.role = role;
    return connection;
  }

  /**
   * The connection closed (or, on stdio, its client's input ended): its session's duration is
   * recorded once, with what it knew of its server.
   */
  closed(facts: SdkFacts, protocol: Protocol): void {
    const connection = this.find(protocol);
    connection?.unwatchInput?.();
    if (connection !== undefined) connection.unwatchInput = undefined;
    if (connection?.opened === undefined || connection.role === undefined) return;
    const seconds = (performance.now() - connection.opened) / 1000;
    connection.opened = undefined;
    try {
      const known = this.facts(facts, protocol, 'client');
      const attributes: Attributes = {};
      if (known.protocolVersion) attributes[MCP_PROTOCOL_VERSION] = known.protocolVersion;
      if (known.serverName) attributes[MCP_SERVER_NAME] = known.serverName;
      const metrics = this.metrics();
      metrics.recordSession(connection.role, seconds, metrics.attributes(attributes));
    } catch (error) {
      reportOnce('could not record a session', error);
    }
  }
}

/** A connection's key: its transport, or the object itself before it connects. */
function keyOf(protocol: Protocol, transport: unknown): object {
  return typeof transport === 'object' && transport !== null ? transport : protocol;
}

/** Whether `capabilities` (a client's, from its initialize) say it answers input requests. */
export function answersInput(capabilities: unknown): boolean {
  return field(capabilities, 'elicitation') !== undefined || field(capabilities, 'sampling') !== undefined;
}
