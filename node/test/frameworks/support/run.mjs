// The tests' side: run a framework program as a child process (with mcp-otel through
// `--import ./support/setup.mjs`, or without it), read the one result line it prints, and look
// at its spans.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(here, '..');
const SETUP = pathToFileURL(join(here, 'setup.mjs')).href;
const PROGRAM_TIMEOUT_MS = 20_000;

/**
 * Why these tests cannot run here, or undefined: their own npm project is not installed (as when
 * node/'s own test run globs them). mcp-otel not built is a failure, not a skip (runProgram).
 */
export function notInstalled() {
  return existsSync(join(ROOT, 'node_modules', 'mcp-otel'))
    ? undefined
    : `the framework tests' own npm project is not installed: run \`npm ci\` in ${ROOT}`;
}

export const SPAN_KIND = { INTERNAL: 0, SERVER: 1, CLIENT: 2 };

/**
 * Run `programs/NAME.mjs MODE ...extra`, instrumented (`--import setup.mjs`) or not. Resolves
 * with its result line (`result`) and its stderr; a program that outlives the timeout is killed
 * by its PID and fails the test.
 */
export function runProgram(name, mode, { instrumented = true, extra = [], env = {} } = {}) {
  if (!existsSync(join(ROOT, 'node_modules', 'mcp-otel', 'dist', 'esm', 'index.js'))) {
    return Promise.reject(new Error('mcp-otel is not built: run `npm run build` in node/'));
  }
  const args = [...(instrumented ? ['--import', SETUP] : []), join(ROOT, 'programs', `${name}.mjs`), mode, ...extra];
  const childEnv = { ...process.env, MASTRA_TELEMETRY_DISABLED: 'true', ...env };
  delete childEnv.NODE_TEST_CONTEXT; // the program is no test file of the runner's
  delete childEnv.NODE_OPTIONS;
  for (const key of Object.keys(childEnv)) if (key.startsWith('OTEL_')) delete childEnv[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const timer = setTimeout(() => {
      process.kill(child.pid, 'SIGKILL');
      reject(new Error(`${name} ${mode} ran over ${PROGRAM_TIMEOUT_MS} ms; stderr:\n${stderr}`));
    }, PROGRAM_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((each) => each.startsWith('@@RESULT '));
      if (code !== 0 || line === undefined) {
        reject(new Error(`${name} ${mode} exited ${code} without a result; stdout:\n${stdout}\nstderr:\n${stderr}`));
        return;
      }
      resolve({ result: JSON.parse(line.slice('@@RESULT '.length)), stderr });
    });
  });
}

/** mcp-otel's spans of a result. */
export function mcpSpans(result) {
  return result.spans.filter((span) => span.scope === 'mcp_otel');
}

/** The names of mcp-otel's spans, kind by kind, sorted (for an exact comparison). */
export function spanNames(result, kind = SPAN_KIND.CLIENT) {
  return mcpSpans(result)
    .filter((span) => span.kind === kind)
    .map((span) => span.name)
    .sort();
}

/** The one CLIENT span named `name` (fails unless there is exactly one). */
export function onlyClientSpan(assert, result, name) {
  const found = mcpSpans(result).filter((span) => span.kind === SPAN_KIND.CLIENT && span.name === name);
  assert.equal(found.length, 1, `exactly one CLIENT span ${name}; spans:\n${dump(result)}`);
  return found[0];
}

/** The spans, one line each, for a failing assertion's message. */
export function dump(result) {
  return result.spans
    .map((span) => `${span.kind} ${span.name} ${span.spanId} parent=${span.parentSpanId ?? '-'} status=${span.status.code} ${JSON.stringify(span.attributes)}`)
    .join('\n');
}

/**
 * What every tools/call CLIENT span of a framework run must say: the outcome given, its
 * attributes, status UNSET, and the test's ambient span as its parent (same trace).
 */
export function assertToolCallSpan(assert, result, span, { tool, server, outcome, cancelReason }) {
  const context = `span:\n${JSON.stringify(span, null, 1)}`;
  const expected = {
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool,
    'mcp.server.name': server,
    'mcp.server.version': '1.0.0',
    'network.transport': 'pipe',
    'mcp.request.outcome': outcome,
    'tool.outcome': outcome,
  };
  if (cancelReason !== undefined) {
    expected['mcp.request.cancel.reason'] = cancelReason;
    expected['tool.cancel.reason'] = cancelReason;
  }
  for (const [key, value] of Object.entries(expected)) assert.equal(span.attributes[key], value, `${key}; ${context}`);
  if (cancelReason === undefined) {
    assert.equal(span.attributes['mcp.request.cancel.reason'], undefined, context);
  }
  assert.equal(span.attributes['error.type'], undefined, context);
  assert.equal(span.attributes['rpc.response.status_code'], undefined, context);
  assert.match(String(span.attributes['jsonrpc.request.id']), /^\d+$/, context);
  assert.equal(span.status.code, 0, `status UNSET; ${context}`);
  assert.equal(span.kind, SPAN_KIND.CLIENT, context);
  assert.ok(result.ambientSpanId, 'the ambient span was made');
  assert.equal(span.parentSpanId, result.ambientSpanId, `parent is the ambient span; spans:\n${dump(result)}`);
  const ambient = result.spans.find((each) => each.spanId === result.ambientSpanId);
  assert.equal(span.traceId, ambient.traceId, 'same trace as the ambient span');
  // It starts within the ambient span. A call that ended on its own answer also ends within it; an
  // aborted one ends when the SDK's rejection is handled, which may come after a framework that
  // rejects at the abort itself has already left the ambient span (two promise chains, either first).
  assert.ok(span.startMs >= ambient.startMs && span.startMs <= ambient.endMs, 'starts within the ambient span');
  if (cancelReason === undefined) assert.ok(span.endMs <= ambient.endMs, 'ends within the ambient span');
}

/** Every request span (not a notification's) of mcp-otel's has an outcome, but v2's connect-time
 * server/discover probe the server refuses: a version negotiation step, no result yet. */
export function assertEveryRequestHasAnOutcome(assert, result) {
  for (const span of mcpSpans(result)) {
    if (span.name.startsWith('notifications/')) {
      assert.equal(span.attributes['mcp.request.outcome'], undefined, `a notification has no outcome: ${span.name}`);
    } else if (span.name === 'server/discover' && span.attributes['rpc.response.status_code'] === '-32601') {
      assert.equal(span.attributes['mcp.request.result_type'], 'negotiation', `the refused probe; spans:\n${dump(result)}`);
      assert.equal(span.attributes['mcp.request.outcome'], undefined);
    } else {
      assert.ok(span.attributes['mcp.request.outcome'], `an outcome on ${span.name}; spans:\n${dump(result)}`);
    }
  }
}
