/**
 * Pure classification: what a request was answered with, or rejected with -> one `CallOutcome`
 * (the Python package's `classify.py`, the same rules; docs/outcomes.md is their table, and
 * spec/verdicts.json their cases, which test/verdicts.test.cjs runs).
 *
 * No OpenTelemetry and no MCP SDK in here: the front ends extract facts (the error's code,
 * whether the rejection is the caller's own abort, whether the peer cancelled) and these
 * functions decide.
 */
import { CallOutcome, Unfinished, type Verdict } from './outcome.js';
import {
  CALLER_FAULT_CODES,
  CancelReason,
  DECLINING_ACTIONS,
  ELICITATION_ACTIONS,
  ErrorType,
  METHOD_ELICITATION_CREATE,
  METHOD_SAMPLING_CREATE_MESSAGE,
  METHOD_SERVER_DISCOVER,
  NEGOTIATION_CODES,
  ResultType,
  URL_ELICITATION_REQUIRED_CODE,
  USER_REJECTED_CODE,
} from './semconv.js';

// The SDKs' own codes: a request timeout (the TypeScript SDK's -32001, also what it rejects a
// caller's abort with; mcp 1.x Python's 408) and a closed connection. With the Python SDKs' answers
// to a cancel or a handler's exception (0, -32800) they are not a server's verdict on the call, so
// never in rpc.response.status_code: the same set in every language (spec/verdicts.json).
const SDK_TIMEOUT_CODES: ReadonlySet<number> = new Set([408, -32001]);
const CONNECTION_CLOSED_CODE = -32000;
const SDK_LOCAL_CODES: ReadonlySet<number> = new Set([...SDK_TIMEOUT_CODES, CONNECTION_CLOSED_CODE, 0, -32800]);

/** The code and message of a JSON-RPC error: a peer's answer, or the SDK's own error. */
export interface RpcError {
  readonly code: number;
  readonly message: string;
}

const DECLINED = CallOutcome.cancelled(CancelReason.INPUT_DECLINED);
const TOOL_ERROR = CallOutcome.failed(ErrorType.TOOL_ERROR);

function fieldOf(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/** `isError: true` on a result (the only place a tool's failure is written). */
function isErrorResult(result: unknown): boolean {
  return fieldOf(result, 'isError') === true;
}

/**
 * What a request was answered with when it is not its result yet (the protocol's `resultType`:
 * `input_required`, `task`; a task answer without one), else `undefined`.
 */
export function unfinished(result: unknown): Unfinished | undefined {
  const tag = fieldOf(result, 'resultType');
  if (tag === ResultType.INPUT_REQUIRED) return new Unfinished(ResultType.INPUT_REQUIRED);
  if (tag === ResultType.TASK || (tag === undefined && fieldOf(fieldOf(result, 'task'), 'taskId') !== undefined)) {
    return new Unfinished(ResultType.TASK);
  }
  return undefined;
}

/**
 * A request answered with `result` where nothing but the answer decides (no rejection, no cancel,
 * no person's no, either side): not its result yet, a tool error (`isError`), or ok.
 */
export function classifyAnswer(result: unknown): Verdict {
  return unfinished(result) ?? (isErrorResult(result) ? TOOL_ERROR : CallOutcome.OK);
}

/**
 * A returned result on the sender's side: `isError` is a tool error, unless the person declined an
 * input request of the call (`inputDeclined`). `answerDeclined`: the result is itself a person's no
 * (an elicitation declined or dismissed).
 */
export function classifyClientResult(
  result: unknown,
  { answerDeclined = false, inputDeclined = false }: { answerDeclined?: boolean; inputDeclined?: boolean } = {},
): Verdict {
  if (answerDeclined) return DECLINED;
  const answer = classifyAnswer(result);
  return answer === TOOL_ERROR && inputDeclined ? DECLINED : answer;
}

/** `ElicitResult.action` of an answer, when it is one of the three. */
export function elicitationAction(answer: unknown): string | undefined {
  const action = fieldOf(answer, 'action');
  return typeof action === 'string' && ELICITATION_ACTIONS.has(action) ? action : undefined;
}

/**
 * Whether the answer to an input request is a person's no: an `elicitation/create` answered
 * `decline` or `cancel`, a `sampling/createMessage` answered with "user rejected" (-1).
 */
export function isDeclinedAnswer(method: string, answer?: unknown, rpcError?: RpcError): boolean {
  if (method === METHOD_ELICITATION_CREATE) {
    const action = rpcError === undefined ? elicitationAction(answer) : undefined;
    return action !== undefined && DECLINING_ACTIONS.has(action);
  }
  if (method === METHOD_SAMPLING_CREATE_MESSAGE) return rpcError?.code === USER_REJECTED_CODE;
  return false;
}

/** The facts of a rejection that left the SDK's sending of a `method` request. */
export interface ClientRejection {
  /** The rejection is the caller's own abort (its AbortSignal), not an error racing it. */
  readonly callerAborted: boolean;
  /** The rejection is a JSON-RPC error (the peer's, or the SDK's own timeout or closed connection). */
  readonly rpcError?: RpcError;
  /** The SDK's "connection closed" without a code (v2's own error class). */
  readonly transportClosed?: boolean;
  /** The SDK's request timeout without a code (v2's own error class). */
  readonly timedOut?: boolean;
  /** The rejection's class name (error.type of an error that is none of the above). */
  readonly errorName: string;
  /** The peer's message may become the description (content capture on). */
  readonly keepMessage?: boolean;
  readonly answerDeclined?: boolean;
  readonly inputDeclined?: boolean;
  readonly method: string;
}

/** A rejection of a request as its sender sees it. */
export function classifyClientRejection(facts: ClientRejection): Verdict {
  if (facts.callerAborted) return CallOutcome.cancelled(CancelReason.CALLER);
  if (facts.rpcError !== undefined) return classifyClientError(facts.rpcError, facts);
  if (facts.answerDeclined) return DECLINED;
  if (facts.timedOut) return CallOutcome.failed(ErrorType.TIMEOUT);
  if (facts.transportClosed) return CallOutcome.failed(ErrorType.CONNECTION_CLOSED);
  // Other errors (the SDK's output-schema validation, say) can quote tool output in their
  // message, so only the class is recorded.
  return CallOutcome.failed(facts.errorName || 'Error');
}

/**
 * A JSON-RPC error as a request's sender sees it: the SDK's timeout and closed connection, the
 * person's no, an answer that says the request is not done, or a failure by its code.
 */
export function classifyClientError(
  error: RpcError,
  {
    keepMessage = false,
    answerDeclined = false,
    inputDeclined = false,
    method = '',
  }: { keepMessage?: boolean; answerDeclined?: boolean; inputDeclined?: boolean; method?: string } = {},
): Verdict {
  if (answerDeclined) return DECLINED;
  if (SDK_TIMEOUT_CODES.has(error.code)) return CallOutcome.failed(ErrorType.TIMEOUT, error.message);
  if (error.code === CONNECTION_CLOSED_CODE) return CallOutcome.failed(ErrorType.CONNECTION_CLOSED, error.message);
  if (inputDeclined) return DECLINED;
  return notDone(method, error.code) ?? rpcFailure(error, keepMessage);
}

/**
 * An error answer that says the request has no result yet, on either side: -32042 (a person must
 * open a URL first), or a `server/discover` probe the server does not speak at that version.
 */
export function notDone(method: string, code: number): Unfinished | undefined {
  if (code === URL_ELICITATION_REQUIRED_CODE) return new Unfinished(ResultType.INPUT_REQUIRED, String(code));
  if (method === METHOD_SERVER_DISCOVER && NEGOTIATION_CODES.has(code)) {
    return new Unfinished(ResultType.NEGOTIATION, String(code));
  }
  return undefined;
}

/** A JSON-RPC error that failed the call: its code is the error type; only a wire code is the status code. */
function rpcFailure(error: RpcError, keepMessage: boolean): CallOutcome {
  const wireCode = SDK_LOCAL_CODES.has(error.code) ? undefined : error.code;
  return CallOutcome.failed(String(error.code), keepMessage ? error.message : undefined, wireCode);
}

/** The facts of a request's end on its receiver (a server's handler, or an agent's callback). */
export interface ServerEnd {
  /** The result answered. */
  readonly answer?: unknown;
  /** The JSON-RPC error answered (for a handler's throw: the error the SDK turns it into). */
  readonly rpcError?: RpcError;
  /** The sender's notifications/cancelled arrived before the answer. */
  readonly peerCancelled?: boolean;
  /** The handler's signal was aborted otherwise (the connection closing, the server closing). */
  readonly isCancellation?: boolean;
  /** ... by the client closing the connection, or on 2026-07-28 HTTP the request's stream. */
  readonly transportClosed?: boolean;
  readonly keepMessage?: boolean;
  /** An agent's answer to its server's input request is the person's no. */
  readonly answerDeclined?: boolean;
  /** The person declined an input request of this call. */
  readonly inputDeclined?: boolean;
  readonly method: string;
}

/** How a request ended on its receiver. */
export function classifyServerCall(facts: ServerEnd): Verdict {
  if (facts.peerCancelled) return CallOutcome.cancelled(CancelReason.CLIENT);
  if (facts.isCancellation) {
    if (facts.transportClosed) return CallOutcome.cancelled(CancelReason.DISCONNECT);
    return CallOutcome.failed(ErrorType.SHUTDOWN, 'server shut down with the call in flight');
  }
  const { rpcError } = facts;
  if (facts.answerDeclined || (facts.inputDeclined && (rpcError !== undefined || isErrorResult(facts.answer)))) {
    return DECLINED;
  }
  if (rpcError !== undefined) {
    const notYet = notDone(facts.method, rpcError.code);
    if (notYet !== undefined) return notYet;
    if (CALLER_FAULT_CODES.has(rpcError.code)) return CallOutcome.callerFault(rpcError.code);
    return rpcFailure(rpcError, facts.keepMessage ?? false);
  }
  return classifyAnswer(facts.answer);
}
