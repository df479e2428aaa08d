/**
 * Metrics: the operation-duration histograms of every request, recorded from the very outcome that
 * finished the span, for every outcome (cancelled included) and whether or not the span was
 * sampled; in the span's context, so that exemplars link a point to its request.
 *
 * Method, tool, prompt and server names come from peers, so their metric values are bounded: the
 * first `maxMetricNames` distinct names are kept, later ones are recorded as `_OTHER` (spans keep
 * the real, length-bounded name); the methods the MCP specification defines always pass. Session
 * and request ids never become metric attributes; resource URIs only when the user opts in.
 */
import type { Attributes, Context, Histogram, Meter } from '@opentelemetry/api';
import type { Settings } from './config.js';
import type { CallOutcome } from './outcome.js';
import {
  DURATION_BUCKETS,
  DURATION_UNIT,
  GEN_AI_OPERATION_NAME,
  GEN_AI_PROMPT_NAME,
  GEN_AI_TOOL_NAME,
  KNOWN_METHODS,
  MCP_CLIENT_OPERATION_DURATION,
  MCP_CLIENT_SESSION_DURATION,
  MCP_METHOD_NAME,
  MCP_PROTOCOL_VERSION,
  MCP_RESOURCE_URI,
  MCP_SERVER_NAME,
  MCP_SERVER_OPERATION_DURATION,
  MCP_SERVER_SESSION_DURATION,
  METHOD_TOOLS_CALL,
  NETWORK_TRANSPORT,
  OTHER_VALUE,
} from './semconv.js';

// The span attributes a metric point copies (besides the outcome's).
const COPIED = [
  MCP_METHOD_NAME,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_NAME,
  GEN_AI_PROMPT_NAME,
  MCP_SERVER_NAME,
  NETWORK_TRANSPORT,
  MCP_PROTOCOL_VERSION,
];

/** Admits the first `limit` distinct names; any later one reads `_OTHER`. */
export class NameBound {
  private readonly names = new Set<string>();
  constructor(
    private readonly limit: number,
    private readonly always: ReadonlySet<string> = new Set(),
  ) {}

  admit(name: string): string {
    if (this.names.has(name) || this.always.has(name)) return name;
    if (this.names.size < this.limit) {
      this.names.add(name);
      return name;
    }
    return OTHER_VALUE;
  }
}

export type Side = 'client' | 'server';

export class CallMetrics {
  private readonly durations: Record<Side, Histogram>;
  private readonly sessions: Record<Side, Histogram>;
  private readonly copied: readonly string[];
  private readonly bounds: ReadonlyMap<string, NameBound>;

  constructor(meter: Meter, settings: Settings) {
    const histogram = (name: string, description: string): Histogram =>
      meter.createHistogram(name, {
        unit: DURATION_UNIT,
        description,
        advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
      });
    this.durations = {
      client: histogram(MCP_CLIENT_OPERATION_DURATION, 'Duration of MCP requests as their sender saw them.'),
      server: histogram(MCP_SERVER_OPERATION_DURATION, 'Duration of MCP requests as their receiver handled them.'),
    };
    this.sessions = {
      client: histogram(MCP_CLIENT_SESSION_DURATION, 'Duration of MCP sessions as clients saw them.'),
      server: histogram(MCP_SERVER_SESSION_DURATION, 'Duration of MCP sessions as servers saw them.'),
    };
    this.copied = settings.metricsResourceUri ? [...COPIED, MCP_RESOURCE_URI] : COPIED;
    const limit = settings.maxMetricNames;
    this.bounds = new Map([
      [MCP_METHOD_NAME, new NameBound(limit, KNOWN_METHODS)],
      [GEN_AI_TOOL_NAME, new NameBound(limit)],
      [GEN_AI_PROMPT_NAME, new NameBound(limit)],
      [MCP_SERVER_NAME, new NameBound(limit)],
      [MCP_RESOURCE_URI, new NameBound(limit)],
    ]);
  }

  /** The metric attributes of a request, from its span's (names bounded). */
  attributes(spanAttributes: Attributes): Attributes {
    const attributes: Attributes = {};
    for (const key of this.copied) {
      const value = spanAttributes[key];
      if (value === undefined) continue;
      const bound = this.bounds.get(key);
      attributes[key] = bound === undefined ? value : bound.admit(String(value));
    }
    return attributes;
  }

  /** The attributes of the point of a request with metric `attributes` that ended with `outcome`. */
  point(attributes: Attributes, outcome: CallOutcome): Attributes {
    const toolCall = attributes[MCP_METHOD_NAME] === METHOD_TOOLS_CALL ? 1 : 0;
    return { ...attributes, ...outcome.pointAttributes[toolCall] };
  }

  /**
   * Record one request that took `seconds`, in its span's context `spanContext` (an exemplar links
   * the point to its own request, not to whatever span is current when it ends).
   */
  record(side: Side, seconds: number, point: Attributes, spanContext: Context): void {
    this.durations[side].record(seconds, point, spanContext);
  }

  /** Record one session that lasted `seconds`. */
  recordSession(side: Side, seconds: number, attributes: Attributes): void {
    this.sessions[side].record(seconds, attributes);
  }
}
