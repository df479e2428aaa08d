/**
 * The request lifecycle every front end shares (the Python package's `lifecycle.py`).
 *
 * A request is opened on one side (its CLIENT or SERVER span started, its clock running) and
 * finished once: classified, its outcome written onto its span by `finishSpan`, and that same
 * outcome recorded as its one metric point. A request answered with no result yet (an input round,
 * a task, a negotiation step) gets neither an outcome nor a point. Whatever fails here is logged
 * once, and the span is ended all the same.
 */
import {
  SpanKind,
  propagation,
  trace,
  context as api,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { CallMetrics, Side } from './metrics.js';
import type { Request } from './attributes.js';
import { CallOutcome, bounded, finishSpan, finishUnfinished, type Verdict } from './outcome.js';
import { reportOnce } from './safety.js';
import { GEN_AI_CONVERSATION_ID } from './semconv.js';

// A baggage value is the application's (or, received, a peer's): bounded like a name.
export const MAX_CONVERSATION_ID = 256;

/**
 * What the requests of one name share on one connection: their span's attributes and their
 * point's (names bounded), and the point of one that ends ok, made once (`sessions.ts` keeps one
 * per name once the connection's handshake settled, so a request copies them, never rebuilds them).
 */
export interface Shape {
  readonly span: Readonly<Attributes>;
  readonly metric: Readonly<Attributes>;
  okPoint?: Attributes;
}

/** One request in flight on one side. */
export interface Call {
  readonly side: Side;
  readonly method: string;
  readonly span: Span;
  // The span's context: what the request is sent or handled in, and its point's exemplar.
  readonly context: Context;
  shape: Shape;
  readonly started: number; // performance.now() at open, milliseconds
  finished: boolean;
  // A request sent: the JSON-RPC id the SDK gave it (what a cancel or progress names).
  requestId?: unknown;
  // A request handled: the signal the SDK aborts its handler with (a cancel, a close).
  signal?: AbortSignal;
}

const KINDS: Record<Side, SpanKind> = { client: SpanKind.CLIENT, server: SpanKind.SERVER };

export class Lifecycle {
  // Asked on every request: the instrumentation's providers can be replaced after it is enabled.
  constructor(
    private readonly tracer: () => Tracer,
    private readonly metrics: () => CallMetrics,
  ) {}

  /**
   * Start the span of `request` on `side`, all its attributes at once: its `shape`'s and this
   * request's own (`attributes`, a copy of the shape's with its id). `parent`: the sender's
   * context (default: the active one). The conversation the request belongs to (baggage) goes on
   * its span only.
   */
  open(side: Side, request: Request, shape: Shape, attributes: Attributes, parent?: Context, links?: Link[]): Call {
    const spanContext = parent ?? api.active();
    const span = this.tracer().startSpan(
      request.name,
      { kind: KINDS[side], attributes: inConversation(attributes, spanContext), links },
      spanContext,
    );
    return {
      side,
      method: request.method,
      span,
      context: trace.setSpan(spanContext, span),
      shape,
      started: performance.now(),
      finished: false,
    };
  }

  /** Start (and end) the span of a notification sent or received: no outcome, no point. */
  notification(side: Side, request: Request, attributes: Attributes, parent?: Context, links?: Link[]): Span {
    const spanContext = parent ?? api.active();
    return this.tracer().startSpan(
      request.name,
      { kind: KINDS[side], attributes: inConversation(attributes, spanContext), links },
      spanContext,
    );
  }

  /**
   * Classify `call` once (`classify()`), write the verdict (and `late` attributes, learnt since
   * it opened) onto its span and end it (at `endTime`, for a request answered earlier than it is
   * written), then record the same outcome as its point. A second finish changes nothing.
   */
  finish(call: Call, classify: () => Verdict, late?: Attributes, endTime?: number): void {
    if (call.finished) return;
    call.finished = true;
    const { span } = call;
    let verdict: Verdict;
    try {
      verdict = classify();
    } catch (error) {
      reportOnce('could not classify a call', error);
      span.end();
      return;
    }
    if (!(verdict instanceof CallOutcome)) {
      try {
        finishUnfinished(span, verdict, late, endTime);
      } catch (error) {
        reportOnce('could not finish a span', error);
        span.end();
      }
      return;
    }
    try {
      finishSpan(span, verdict, call.method, late, endTime);
    } catch (error) {
      reportOnce('could not finish a span', error);
      span.end();
    }
    try {
      const metrics = this.metrics();
      const { shape } = call;
      // Most requests end ok: their point is made once per shape.
      const point =
        verdict === CallOutcome.OK ? (shape.okPoint ??= metrics.point(shape.metric, verdict)) : metrics.point(shape.metric, verdict);
      metrics.record(call.side, (performance.now() - call.started) / 1000, point, call.context);
    } catch (error) {
      reportOnce('could not record call metrics', error);
    }
  }

  /** The request's point says what was learnt of it since it opened (the server's name). */
  relearn(call: Call, attributes: Attributes): void {
    call.shape = { span: call.shape.span, metric: this.metrics().attributes({ ...attributes, ...call.shape.metric }) };
  }
}

/** `attributes` with the conversation in the context's baggage, if any. */
function inConversation(attributes: Attributes, context: Context): Attributes {
  const conversation = propagation.getBaggage(context)?.getEntry(GEN_AI_CONVERSATION_ID)?.value;
  if (conversation === undefined) return attributes;
  return { ...attributes, [GEN_AI_CONVERSATION_ID]: bounded(conversation, MAX_CONVERSATION_ID) };
}
