/**
 * What the sides (`client.ts`, `server.ts`) ask of an SDK front end: the facts only the SDK's own
 * shapes hold. One front end per SDK generation (`frontends/sdk1.ts`, `frontends/sdk2.ts`)
 * implements it; only they know the SDK's error classes, private fields and codes. The one
 * field every generation shares, the transport a `Protocol` holds, is read here: the sessions key
 * a connection on it and the front ends read it.
 */
import type { Attributes } from '@opentelemetry/api';
import type { ConnectionFacts } from './attributes.js';
import type { RpcError } from './classify.js';
import { field } from './fields.js';

/** The SDK's `Protocol` object: a `Client` or a `Server` (either sends and handles requests). */
export type Protocol = object;

/** The transport a `Protocol` object is connected to (both generations keep it at `_transport`). */
export function transportOf(protocol: Protocol): unknown {
  return field(protocol, '_transport');
}

/** A JSON-RPC request or notification as the SDK hands it over. */
export interface Message {
  readonly method?: unknown;
  readonly params?: unknown;
  readonly id?: unknown;
}

/** How the SDK ended a request it sent, told by an error class of its own (no JSON-RPC code). */
export type SdkFailure = 'timeout' | 'connection_closed';

export type SideName = 'client' | 'server';

export interface SdkFacts {
  /** The JSON-RPC error of a rejection (a peer's answer, or the SDK's own coded error). */
  rpcErrorOf(error: unknown): RpcError | undefined;
  /** The SDK's own timeout or closed connection, told by its error class. */
  sdkFailureOf(error: unknown): SdkFailure | undefined;
  /** What a protocol object's connection says of its server, protocol version and session. */
  connection(protocol: Protocol, side: SideName): ConnectionFacts;
  /** The connection's transport attributes (network.transport, server.* or client.*). */
  transportAttributes(protocol: Protocol, side: SideName, extra?: unknown): Attributes;
  /** The JSON-RPC id the next request sent will take, when the SDK numbers them. */
  nextRequestId(protocol: Protocol): unknown;
  /** The abort controllers of the requests being handled, by request id. */
  handlerControllers(protocol: Protocol): Map<unknown, AbortController> | undefined;
  /** The protocol version an HTTP request names in its header (a server instance per request knows no other). */
  requestProtocolVersion(extra: unknown): string | undefined;
  /** Whether the connection's transport has already closed (the peer went away first). */
  transportClosed(protocol: Protocol): boolean;
  /**
   * Whether `message` is a request the SDK sends on a transport itself, past its send funnel (v2's
   * connect-time `server/discover` probe, before any `Protocol` reads that transport).
   */
  isProbe(message: Message): boolean;
  /**
   * The prototype of the transports the SDK starts of its own to probe on, when it will probe on
   * one instead of `transport` (v2: a disposable sibling of its base stdio client transport).
   */
  probeSiblingOf(transport: unknown): object | undefined;
  /** The attributes of `transport` (network.transport, server.* or client.*). */
  attributesOfTransport(transport: unknown, side: SideName): Attributes;
}
