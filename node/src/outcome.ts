/**
 * The outcome model: one classified outcome per request, and the only function that writes it to
 * a span (the Python package's `outcome.py`).
 *
 * `CallOutcome` is the value every classifier returns and every consumer (span, metrics) reads.
 * Its constructor refuses combinations that would make a span disagree with itself
 * (docs/decisions.md rule 4), and `finishSpan` is the one place that sets span status, `error.type`,
 * `rpc.response.status_code`, `mcp.request.outcome` and `mcp.request.cancel.reason` (on
 * `tools/call` also `tool.outcome` and `tool.cancel.reason`). A request answered with no result
 * yet has no outcome: `finishUnfinished` writes what it was answered with instead.
 */
import { SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import {
  ERROR_TYPE,
  MCP_REQUEST_CANCEL_REASON,
  MCP_REQUEST_OUTCOME,
  MCP_REQUEST_RESULT_TYPE,
  METHOD_TOOLS_CALL,
  Outcome,
  RPC_RESPONSE_STATUS_CODE,
  TOOL_CANCEL_REASON,
  TOOL_OUTCOME,
  type CancelReason,
  type ResultType,
} from './semconv.js';

// Status descriptions come from peers (JSON-RPC error messages): kept bounded.
export const MAX_DESCRIPTION_LENGTH = 512;

/** `text` cut to `limit` characters (code points, as Python and Go count), marking the cut. */
export function bounded(text: string, limit: number): string {
  // No more UTF-16 units than limit: no more characters either (most texts), without counting them.
  if (text.length <= limit) return text;
  let characters = 0;
  let cut = 0; // UTF-16 units of the first limit - 1 characters
  for (const character of text) {
    characters += 1;
    if (characters > limit) return `${text.slice(0, cut)}…`;
    if (characters < limit) cut += character.length;
  }
  return text;
}

/** A classified outcome. Build it with `CallOutcome.ok`, `.failed`, `.callerFault` or `.cancelled`. */
export class CallOutcome {
  /** Whether the span status is ERROR: a cancel is not, nor on a server a caller's fault. */
  readonly isError: boolean;
  /** Its attributes on a metric point and on a span: [other requests, tool calls]. Shared. */
  readonly pointAttributes: readonly [Readonly<Attributes>, Readonly<Attributes>];

  private constructor(
    readonly outcome: Outcome,
    readonly errorType?: string,
    // Only codes a peer put on the wire; SDK-local codes never go here.
    readonly rpcCode?: string,
    readonly description?: string,
    readonly cancelReason?: CancelReason,
    // Server side: the caller sent a request the server could not serve (no error.type, UNSET).
    readonly callerFault = false,
  ) {
    if (outcome === Outcome.FAILED) {
      if (cancelReason !== undefined) throw new Error('a failed outcome has no cancel reason');
      if (callerFault) {
        if (errorType !== undefined || description !== undefined || rpcCode === undefined) {
          throw new Error('a caller-fault outcome names its code, no error.type or description');
        }
      } else if (!errorType) {
        throw new Error('a failed outcome needs an error.type');
      }
    } else {
      if (callerFault) throw new Error(`a ${outcome} outcome is not a caller fault`);
      if (errorType !== undefined || description !== undefined) {
        throw new Error(`a ${outcome} outcome has no error.type or description`);
      }
      if (outcome === Outcome.OK && (cancelReason !== undefined || rpcCode !== undefined)) {
        throw new Error('an ok outcome has no cancel reason or error code');
      }
      if (outcome === Outcome.CANCELLED && cancelReason === undefined) {
        throw new Error('a cancelled outcome needs a cancel reason');
      }
    }
    this.isError = outcome === Outcome.FAILED && !callerFault;
    this.pointAttributes = [this.attributes(false), this.attributes(true)];
    Object.freeze(this);
  }

  private attributes(toolCall: boolean): Readonly<Attributes> {
    const attributes: Attributes = { [MCP_REQUEST_OUTCOME]: this.outcome };
    if (toolCall) attributes[TOOL_OUTCOME] = this.outcome;
    if (this.errorType !== undefined) attributes[ERROR_TYPE] = this.errorType;
    if (this.rpcCode !== undefined) attributes[RPC_RESPONSE_STATUS_CODE] = this.rpcCode;
    if (this.cancelReason !== undefined) {
      attributes[MCP_REQUEST_CANCEL_REASON] = this.cancelReason;
      if (toolCall) attributes[TOOL_CANCEL_REASON] = this.cancelReason;
    }
    return Object.freeze(attributes);
  }

  static readonly OK = new CallOutcome(Outcome.OK);

  static failed(errorType: string, description?: string, rpcCode?: number): CallOutcome {
    return new CallOutcome(
      Outcome.FAILED,
      errorType,
      rpcCode === undefined ? undefined : String(rpcCode),
      // An empty message is no description (as in Go, where "" is none).
      description ? bounded(description, MAX_DESCRIPTION_LENGTH) : undefined,
    );
  }

  /** A server's JSON-RPC answer that blames the request: no error.type, the code says why. */
  static callerFault(code: number): CallOutcome {
    return new CallOutcome(Outcome.FAILED, undefined, String(code), undefined, undefined, true);
  }

  static cancelled(reason: CancelReason): CallOutcome {
    return new CallOutcome(Outcome.CANCELLED, undefined, undefined, undefined, reason);
  }
}

/**
 * Write `outcome` (and any late `extra` attributes) onto the span of a `method` request and end
 * it. The only writer of status and outcome attributes: ok and cancelled leave the status UNSET
 * (instrumentations must not set OK), failed sets ERROR with the description.
 */
export function finishSpan(span: Span, outcome: CallOutcome, method: string, extra?: Attributes, endTime?: number): void {
  span.setAttributes(outcome.pointAttributes[method === METHOD_TOOLS_CALL ? 1 : 0]);
  if (extra) span.setAttributes(extra);
  if (outcome.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.description });
  span.end(endTime);
}

/**
 * A request answered with no result yet by a JSON-RPC error that says so (-32042: a person must
 * open a URL first; a server/discover probe the client goes on from). Its code is on the span; it
 * has no outcome, like every unfinished answer.
 */
export class Unfinished {
  constructor(
    readonly resultType: ResultType,
    readonly rpcCode?: string,
  ) {}
}

/** How a request ended: an outcome, or an answer with no result yet. */
export type Verdict = CallOutcome | Unfinished;

/** End the span of a request answered with no result yet: what it was answered with, no outcome. */
export function finishUnfinished(span: Span, answer: Unfinished, extra?: Attributes, endTime?: number): void {
  span.setAttribute(MCP_REQUEST_RESULT_TYPE, answer.resultType);
  if (answer.rpcCode !== undefined) span.setAttribute(RPC_RESPONSE_STATUS_CODE, answer.rpcCode);
  if (extra) span.setAttributes(extra);
  span.end(endTime);
}
