/**
 * Opt-in capture of tool arguments and results (`gen_ai.tool.call.arguments` / `.result`), as the
 * Python package's `content.py` does it.
 *
 * Off by default: nothing a tool is given or answers is recorded unless the user asks
 * (`captureContent`, or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`). When on, the value is
 * written as JSON, values under secret-looking keys replaced by `[REDACTED]` at any depth, and the
 * text cut to `maxContentLength` characters. The text is the same in every language
 * (`spec/content.json`): no spaces, object keys sorted.
 */
import type { Attributes } from '@opentelemetry/api';
import type { Settings } from './config.js';
import { bounded } from './outcome.js';
import { reportOnce } from './safety.js';
import {
  GEN_AI_TOOL_CALL_ARGUMENTS,
  GEN_AI_TOOL_CALL_RESULT,
  MAX_CONTENT_DEPTH,
  REDACTED,
  SECRET_KEY_PATTERN,
  TOO_DEEP,
} from './semconv.js';

const SECRET_KEY = new RegExp(SECRET_KEY_PATTERN, 'i');

/** `value` as plain JSON data, with every secret-looking key's value replaced. */
export function redacted(value: unknown, depth = 0): unknown {
  if (depth > MAX_CONTENT_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => redacted(item, depth + 1));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, SECRET_KEY.test(key) ? REDACTED : redacted(item, depth + 1)]),
    );
  }
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value;
  // undefined, a bigint, a function: what JSON would make of it, or its text.
  return typeof value === 'bigint' ? value.toString() : null;
}

/** `a` before `b` by code point, as the other languages sort (`sort()` compares UTF-16 units). */
function byCodePoint(a: string, b: string): number {
  let index = 0; // the same in both while their code points are equal
  while (index < a.length && index < b.length) {
    const left = a.codePointAt(index) ?? 0;
    const right = b.codePointAt(index) ?? 0;
    if (left !== right) return left - right;
    index += left > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

/**
 * `value` (plain JSON data) as JSON with its objects' keys sorted: `JSON.stringify` writes an
 * object's integer-like keys first, whatever their order.
 */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).sort(byCodePoint);
    return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson(object[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function captured(key: string, value: unknown, settings: Settings, isContent: (value: unknown) => boolean): Attributes {
  if (!settings.captureContent || value === undefined || value === null) return {};
  try {
    if (!isContent(value)) return {};
    return { [key]: bounded(sortedJson(redacted(value)), settings.maxContentLength) };
  } catch (error) {
    reportOnce('could not capture tool content', error);
    return {};
  }
}

/** A tool result (content, structured content); a JSON-RPC error is no result. */
function isResult(result: unknown): boolean {
  return typeof result === 'object' && result !== null && ('content' in result || 'structuredContent' in result);
}

export function argumentsAttributes(args: unknown, settings: Settings): Attributes {
  return captured(GEN_AI_TOOL_CALL_ARGUMENTS, args, settings, () => true);
}

export function resultAttributes(result: unknown, settings: Settings): Attributes {
  return captured(GEN_AI_TOOL_CALL_RESULT, result, settings, isResult);
}
