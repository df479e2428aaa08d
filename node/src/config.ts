/**
 * Settings: the environment variables `OTEL_INSTRUMENTATION_MCP_*` (named by the spec, as the
 * Python package's are) and the same options given to `new McpInstrumentation({...})`, which win. An invalid value never
 * throws (instrumenting must not break the application): it is logged once and the default used.
 */
import type { InstrumentationConfig } from '@opentelemetry/instrumentation';
import { reportOnce } from './safety.js';
import * as semconv from './semconv.js';

export interface McpInstrumentationConfig extends InstrumentationConfig {
  /** Inject the propagator's fields into each request's `params._meta` (default true). */
  propagate?: boolean;
  /** Override the server identity the server reports about itself (serverInfo). */
  serverName?: string;
  serverVersion?: string;
  /** Tool, prompt, method and server names longer than this are cut (default 256). */
  maxNameLength?: number;
  /** Distinct names metrics keep per attribute; later ones read `_OTHER` (default 100). */
  maxMetricNames?: number;
  /** Servers: parent each span to the context in `params._meta` (default true); off: a link only. */
  trustRemoteContext?: boolean;
  /** Record tool arguments and results on spans (default false; sensitive). */
  captureContent?: boolean;
  /** Captured content is cut to this many characters (default 4096). */
  maxContentLength?: number;
  /** mcp.resource.uri on duration points too (default false: URIs are unbounded). */
  metricsResourceUri?: boolean;
  /** Spans for notifications/progress and notifications/message too (default false). */
  traceProgressAndLogs?: boolean;
}

export interface Settings {
  readonly propagate: boolean;
  readonly serverName: string | undefined;
  readonly serverVersion: string | undefined;
  readonly maxNameLength: number;
  readonly maxMetricNames: number;
  readonly trustRemoteContext: boolean;
  readonly captureContent: boolean;
  readonly maxContentLength: number;
  readonly metricsResourceUri: boolean;
  readonly traceProgressAndLogs: boolean;
}

export const DEFAULT_SETTINGS: Settings = {
  propagate: true,
  serverName: undefined,
  serverVersion: undefined,
  maxNameLength: 256,
  maxMetricNames: 100,
  trustRemoteContext: true,
  captureContent: false,
  maxContentLength: 4096,
  metricsResourceUri: false,
  traceProgressAndLogs: false,
};

type Parse = (raw: unknown) => unknown;

const parseBool: Parse = (raw) => {
  if (typeof raw === 'boolean') return raw;
  const text = String(raw).trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(text)) return true;
  if (['false', '0', 'no', 'off'].includes(text)) return false;
  throw new Error('not a boolean');
};
const parsePositiveInt: Parse = (raw) => {
  const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (typeof raw === 'boolean' || !Number.isInteger(value) || value < 1) throw new Error('not a positive integer');
  return value;
};
const parseText: Parse = (raw) => {
  if (typeof raw !== 'string' || !raw.trim()) throw new Error('not a name');
  return raw.trim();
};
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT's newer values: content on spans or not.
const CAPTURE_MODES: Record<string, boolean> = {
  span_only: true,
  span_and_event: true,
  event_only: false,
  no_content: false,
};
const parseCapture: Parse = (raw) => CAPTURE_MODES[String(raw).trim().toLowerCase()] ?? parseBool(raw);

// Each setting: its parser and its environment variables, in the order they are read.
const SETTINGS: Record<keyof Settings, [Parse, ...string[]]> = {
  propagate: [parseBool, semconv.ENV_PROPAGATE],
  serverName: [parseText, semconv.ENV_SERVER_NAME],
  serverVersion: [parseText, semconv.ENV_SERVER_VERSION],
  maxNameLength: [parsePositiveInt, semconv.ENV_MAX_NAME_LENGTH],
  maxMetricNames: [parsePositiveInt, semconv.ENV_MAX_METRIC_NAMES],
  trustRemoteContext: [parseBool, semconv.ENV_TRUST_REMOTE_CONTEXT],
  captureContent: [parseCapture, semconv.ENV_CAPTURE_CONTENT, semconv.ENV_CAPTURE_CONTENT_FALLBACK],
  maxContentLength: [parsePositiveInt, semconv.ENV_MAX_CONTENT_LENGTH],
  metricsResourceUri: [parseBool, semconv.ENV_METRICS_RESOURCE_URI],
  traceProgressAndLogs: [parseBool, semconv.ENV_TRACE_PROGRESS_AND_LOGS],
};

/** The settings from `config` (first), then the environment, then the defaults. */
export function loadSettings(
  config: McpInstrumentationConfig = {},
  env: Record<string, string | undefined> = process.env,
): Settings {
  const values: Record<string, unknown> = { ...DEFAULT_SETTINGS };
  for (const [key, [parse, ...variables]] of Object.entries(SETTINGS) as [keyof Settings, [Parse, ...string[]]][]) {
    let raw: unknown = (config as Record<string, unknown>)[key];
    let source = `option ${key}`;
    for (const variable of variables) {
      if (raw === undefined) {
        raw = env[variable];
        source = variable;
      }
    }
    if (raw === undefined) continue;
    try {
      values[key] = parse(raw);
    } catch {
      reportOnce(`ignoring invalid ${source}=${JSON.stringify(raw)}; using ${JSON.stringify(DEFAULT_SETTINGS[key])}`);
    }
  }
  return values as unknown as Settings;
}
