// What every framework program shares: the ambient span a test starts around a framework's run,
// waiting for the slow tool to start, and the one JSON line a program prints for its test.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// A test runner that globs every .mjs under a `test` directory (node/'s `node --test test/`) runs
// this program as a test file: it is none, so it stops here, before any framework is imported
// (each program imports this first, and its frameworks with `import()`).
if (process.env.NODE_TEST_CONTEXT) {
  process.stdout.write(`${process.argv[1]}: a program the framework tests run, not a test\n`);
  process.exit(0);
}
const { trace } = await import('@opentelemetry/api');

export const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'server.mjs');
// 'quick': one tool call; 'abort' (and a program's own 'abort-...'): the slow one, aborted.
export const MODE = process.argv[2] ?? 'quick';
export const TOOL = MODE.startsWith('abort') ? 'slow' : 'quick';
export const instrumented = globalThis.__mcpOtelTest !== undefined;

/** A directory the server writes its markers in (server.mjs), removed on exit. */
export function markerDir() {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-otel-fw-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Resolve once the file exists (the server started the slow tool). */
export async function untilFile(path, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Abort `controller` once the server has started the slow tool. */
export function abortWhenSlowStarts(controller, dir) {
  untilFile(join(dir, 'slow-started')).then(
    () => controller.abort(),
    (error) => { process.stderr.write(`${error}\n`); },
  );
}

/**
 * Run `body` inside the test's own OTel span (`ambient`), as an application would around an agent
 * run. Returns what `body` gave or threw, and the ambient span's id (none when not instrumented).
 */
export async function inAmbientSpan(body) {
  const tracer = trace.getTracer('framework-test');
  return tracer.startActiveSpan('ambient', async (span) => {
    try {
      return { value: await body(), ambientSpanId: instrumented ? span.spanContext().spanId : undefined };
    } catch (error) {
      return { error: describe(error), ambientSpanId: instrumented ? span.spanContext().spanId : undefined };
    } finally {
      span.end();
    }
  });
}

/** An error as the application sees it: its class, message, and the chain of causes. */
export function describe(error) {
  const seen = [];
  for (let each = error; each !== undefined && each !== null && seen.length < 5; each = each.cause) {
    seen.push({
      class: each?.constructor?.name ?? typeof each,
      name: each?.name,
      message: String(each?.message ?? each),
      code: typeof each?.code === 'number' || typeof each?.code === 'string' ? each.code : undefined,
    });
  }
  return { ...seen[0], causes: seen.slice(1) };
}

function spanOf(span) {
  return {
    name: span.name,
    kind: span.kind, // 2: CLIENT, 1: SERVER, 0: INTERNAL
    scope: span.instrumentationScope?.name,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    status: span.status,
    attributes: span.attributes,
    events: span.events.map((event) => event.name),
    startMs: span.startTime[0] * 1e3 + span.startTime[1] / 1e6,
    endMs: span.endTime[0] * 1e3 + span.endTime[1] / 1e6,
  };
}

/** Print the one line the test reads: `result` and every span finished, then exit. */
export async function finish(result) {
  await new Promise((resolve) => setTimeout(resolve, 100)); // spans end after the awaited promise
  const spans = instrumented ? globalThis.__mcpOtelTest.exporter.getFinishedSpans().map(spanOf) : [];
  process.stdout.write(`\n@@RESULT ${JSON.stringify({ ...result, instrumented, spans })}\n`);
  process.exit(0);
}

/** Let what is in flight between the processes arrive (a cancel the framework sent). */
export function settle(ms = 200) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
