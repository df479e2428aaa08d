/**
 * Zero code: `node --import mcp-otel/register app.mjs` (or `app.cjs`), what `opentelemetry-instrument`
 * is for Python.
 *
 * 1. Registers import-in-the-middle's ESM loader hook, limited to the modules the instrumentation
 *    hooks (the MCP SDKs), so ESM imports of them are instrumented; CommonJS `require`s are hooked
 *    without it.
 * 2. Starts the OpenTelemetry Node SDK (`@opentelemetry/sdk-node`, a dependency, of the line this
 *    Node.js runs; only this entry loads it) with `McpInstrumentation` as its only instrumentation; the SDK reads the standard `OTEL_*`
 *    variables itself: `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` (`otlp` by default,
 *    `console`, `none`), `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` by default, `http/json`,
 *    `grpc`), `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, ...
 * 3. Flushes on exit: when the event loop drains (`beforeExit`) the SDK is shut down once, which
 *    exports what is pending; on SIGTERM or SIGINT with no handler of the application's, it is shut
 *    down and the signal raised again, so the process ends as it would have; with one, it is only
 *    flushed and the application's handler decides. (An application that ends itself with
 *    `process.exit()` ends at once: what is still pending then is lost.)
 *
 * It never breaks the application: it writes nothing to stdout (the SDK's diagnostic logger,
 * `OTEL_LOG_LEVEL`, writes to stderr; the `console` exporters print to stdout, the user's choice),
 * never changes the exit code, and without `@opentelemetry/sdk-node` (an install that left it out)
 * it says so in one line on stderr and the application runs without telemetry.
 */
import * as nodeModule from 'node:module';
import type { NodeSDK } from '@opentelemetry/sdk-node';

type Api = typeof import('@opentelemetry/api');

const SDK_NODE = '@opentelemetry/sdk-node';
const LOADER_HOOK = '@opentelemetry/instrumentation/hook.mjs';
const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
// How long a signal waits for the export before it is raised again (a stuck collector must not
// keep a stopped process alive).
const SIGNAL_FLUSH_MS = 5000;
// How long startup waits for the loader to take the names of the modules to hook.
const LOADER_ACK_MS = 2000;
// OTEL_LOG_LEVEL's values (an unknown one: INFO, as the SDK does).
const LOG_LEVELS = ['NONE', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'VERBOSE', 'ALL'] as const;

/** One line on stderr (never stdout: a stdio MCP server's stdout is its protocol). */
function say(message: string): void {
  process.stderr.write(`mcp-otel: ${message}\n`);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface HookChannel {
  registerOptions: { data: { include: (string | RegExp)[] }; transferList: unknown[] };
  waitForAllMessagesAcknowledged: () => Promise<void>;
}

/** What the loader needs of an instrumentation: the modules it hooks (OpenTelemetry's API). */
interface Hooking {
  getModuleDefinitions(): readonly { name: string; files: readonly { name: string }[] }[];
}

/**
 * The files hooked inside a package (`<package>/<path>`): their importers name them by relative
 * paths, never by the names the loader is told, so each is matched by the end of its URL.
 */
function filePatterns(instrumentation: Hooking): RegExp[] {
  return instrumentation
    .getModuleDefinitions()
    .flatMap((definition) => [definition.name, ...definition.files.map((file) => file.name)])
    .map((name) => name.replace(/\\/g, '/'))
    .filter((name) => name.split('/').length > (name.startsWith('@') ? 2 : 1))
    .map((name) => new RegExp(`/${escapeRegExp(name)}$`));
}

/**
 * Makes the instrumentation with import-in-the-middle's ESM loader hook registered: the hook of
 * the copy that `@opentelemetry/instrumentation` (our base class) uses, as its `Hook`s and the
 * loader must be one copy. Through its message channel the loader wraps only the modules hooked
 * (the instrumentation's hooks post their names to it as they are made), and the files hooked
 * inside a package by the patterns of their URLs. Returns the instrumentation and what to await
 * before the application runs.
 */
function withLoader<T extends Hooking>(make: () => T): [T, () => Promise<void>] {
  // A namespace import: a named one would not link on a Node.js without it.
  const { createRequire, register } = nodeModule;
  if (typeof register !== 'function') {
    say('this Node.js has no module.register (Node >= 20.6 has it): ESM imports are not instrumented');
    return [make(), () => Promise.resolve()];
  }
  const require = createRequire(import.meta.url);
  const iitm = createRequire(require.resolve('@opentelemetry/instrumentation'))('import-in-the-middle') as {
    createAddHookMessageChannel?: () => HookChannel;
  };
  // Made before the instrumentation, whose hooks post to it (held until the loader listens).
  const channel = iitm.createAddHookMessageChannel?.();
  const instrumentation = make();
  const files = filePatterns(instrumentation);
  if (channel === undefined) {
    const names = instrumentation.getModuleDefinitions().map((definition) => definition.name);
    register(LOADER_HOOK, import.meta.url, { data: { include: [...names, ...files] } });
    return [instrumentation, () => Promise.resolve()];
  }
  channel.registerOptions.data.include.push(...files);
  register(LOADER_HOOK, import.meta.url, channel.registerOptions);
  return [
    instrumentation,
    () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => { timer = setTimeout(resolve, LOADER_ACK_MS); });
      return Promise.race([channel.waitForAllMessagesAcknowledged(), timeout]).finally(() => { clearTimeout(timer); });
    },
  ];
}

/**
 * `OTEL_LOG_LEVEL`: the SDK would log to the console, its info and debug lines on stdout. The same
 * level on stderr instead, and the variable hidden while the SDK is made so it keeps ours.
 */
function makeSdk(api: Api, make: () => NodeSDK): NodeSDK {
  const level = process.env.OTEL_LOG_LEVEL;
  if (level === undefined || !level.trim()) return make();
  const name = LOG_LEVELS.find((each) => each === level.trim().toUpperCase());
  const write = (message: string, ...args: unknown[]): void => { console.error(message, ...args); };
  api.diag.setLogger(
    { error: write, warn: write, info: write, debug: write, verbose: write },
    { logLevel: api.DiagLogLevel[name ?? 'INFO'], suppressOverrideMessage: true },
  );
  delete process.env.OTEL_LOG_LEVEL;
  try {
    return make();
  } finally {
    process.env.OTEL_LOG_LEVEL = level;
  }
}

interface Flushable {
  forceFlush(): Promise<void>;
}

function flushable(value: unknown): value is Flushable {
  return typeof (value as Partial<Flushable> | undefined)?.forceFlush === 'function';
}

/** Export what is pending without ending the SDK (the application goes on). */
async function forceFlush(api: Api): Promise<void> {
  const tracerProvider = api.trace.getTracerProvider() as { getDelegate?: () => unknown };
  const providers = [tracerProvider.getDelegate?.() ?? tracerProvider, api.metrics.getMeterProvider()];
  await Promise.all(providers.filter(flushable).map((provider) => provider.forceFlush()));
}

/** Shut the SDK down once when the event loop drains, and on SIGTERM / SIGINT (see the top). */
function flushOnExit(sdk: NodeSDK, api: Api): void {
  let ended: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (ended ??= sdk.shutdown().catch((error: unknown) => { api.diag.error(`mcp-otel: SDK shutdown failed: ${describe(error)}`); }));
  process.once('beforeExit', () => { void shutdown(); });

  const onSignal = (signal: NodeJS.Signals): void => {
    if (process.listenerCount(signal) > 1) {
      // The application handles it: flush, and leave the rest to it.
      forceFlush(api).catch((error: unknown) => { api.diag.error(`mcp-otel: flush failed: ${describe(error)}`); });
      return;
    }
    // Ours alone: the signal would have ended the process. Export, then let it.
    for (const each of SIGNALS) process.removeListener(each, onSignal);
    let raised = false;
    const raise = (): void => {
      if (raised) return;
      raised = true;
      clearTimeout(timer);
      process.kill(process.pid, signal);
    };
    const timer = setTimeout(raise, SIGNAL_FLUSH_MS);
    void shutdown().finally(raise);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

async function start(): Promise<void> {
  if (process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return;
  let sdkNode: typeof import('@opentelemetry/sdk-node');
  try {
    sdkNode = await import('@opentelemetry/sdk-node');
  } catch (error) {
    const missing = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && describe(error).includes(`'${SDK_NODE}'`);
    say(
      missing
        ? `${SDK_NODE} is not installed, so there is no telemetry: npm install ${SDK_NODE}`
        : `cannot load ${SDK_NODE}, so there is no telemetry: ${describe(error)}`,
    );
    return;
  }
  // Everything is loaded before the loader is registered: none of it goes through the hook.
  const api = await import('@opentelemetry/api');
  const { McpInstrumentation } = await import('./index.js');

  const [instrumentation, loaderReady] = withLoader(() => new McpInstrumentation());
  const sdk = makeSdk(api, () => new sdkNode.NodeSDK({ instrumentations: [instrumentation] }));
  sdk.start();
  flushOnExit(sdk, api);
  await loaderReady();
}

try {
  await start();
} catch (error) {
  say(`telemetry is off: ${describe(error)}`);
}
