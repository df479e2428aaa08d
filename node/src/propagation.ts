/**
 * Trace context in a request's `params._meta`: what the configured (global) propagator injects for
 * the sender's span (W3C `traceparent`, `tracestate`, `baggage` by default), and what it extracts
 * on the receiver. A peer's `_meta` is hostile input: only string values of the propagator's own
 * fields are read, each bounded.
 */
import { ROOT_CONTEXT, propagation, trace, type Context, type TextMapGetter } from '@opentelemetry/api';
import { field } from './fields.js';

// W3C caps baggage at 8192 bytes; a longer value is not a header any propagator should parse.
const MAX_FIELD_LENGTH = 8192;

/**
 * A copy of `message` whose `params._meta` has the propagator's fields for `spanContext` (the
 * sender's span's): the caller's message, params and `_meta` are never changed, and every other
 * key of theirs is kept.
 */
export function withContext<M extends object>(message: M, spanContext: Context): M {
  const carrier: Record<string, string> = {};
  propagation.inject(spanContext, carrier);
  const params = field(message, 'params');
  const meta = field(params, '_meta');
  const keptParams = typeof params === 'object' && params !== null ? params : {};
  const keptMeta = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? meta : {};
  return { ...message, params: { ...keptParams, _meta: { ...keptMeta, ...carrier } } };
}

// Reads a peer's `_meta` as a carrier: only string values, each bounded.
const BOUNDED: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get(carrier, key) {
    const value = carrier[key];
    return typeof value === 'string' && value.length <= MAX_FIELD_LENGTH ? value : undefined;
  },
};

/**
 * The sender's context in `meta`, when a valid span context came (a malformed or hostile carrier
 * is none). Baggage comes along with it.
 */
export function extracted(meta: unknown): Context | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const remote = propagation.extract(ROOT_CONTEXT, meta as Record<string, unknown>, BOUNDED);
  const spanContext = trace.getSpanContext(remote);
  return spanContext !== undefined && trace.isSpanContextValid(spanContext) ? remote : undefined;
}
