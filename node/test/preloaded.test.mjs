// The SDK loaded before the instrumentation: said once through the diagnostic logger, naming the
// module, in an ES module app with static imports and in a CommonJS app; nothing said, and the
// calls traced, when an --import file registers it before the application loads.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'preloaded');
const FIX = 'make and register McpInstrumentation in a file loaded before the application: node --import ./telemetry.mjs app.mjs (ES modules) or require it first (CommonJS); see docs/typescript.md, "In code"';

function run(...args) {
  const env = { ...process.env };
  delete env.OTEL_LOG_LEVEL;
  const completed = spawnSync(process.execPath, args, { cwd: FIXTURES, env, encoding: 'utf8' });
  assert.equal(completed.status, 0, completed.stderr);
  return completed;
}

test('an ES module importing the SDK statically before registering: one warning naming the modules', () => {
  const { stdout, stderr } = run('static-imports.mjs');
  assert.equal(stdout, 'function function\n');
  const url = `file://${join(FIXTURES, 'static-imports.mjs')}`;
  assert.equal(
    stderr,
    `mcp_otel Modules @modelcontextprotocol/sdk/client/index.js, @modelcontextprotocol/server have been imported before mcp_otel so it is not instrumented (the static imports of ${url} run before its code): ${FIX}\n`,
  );
});

test('a CommonJS app requiring the SDK first: one warning naming the package', () => {
  const { stdout, stderr } = run('required-first.cjs');
  assert.equal(stdout, 'function\n');
  assert.equal(stderr, `mcp_otel Module @modelcontextprotocol/sdk has been loaded before mcp_otel so it is not instrumented: ${FIX}\n`);
});

test('registered by an --import file before the app: no warning, the calls traced', () => {
  const { stdout, stderr } = run('--import', './telemetry.mjs', 'app.mjs');
  assert.equal(stderr, '');
  assert.equal(stdout, 'tools/call echo,tools/call echo\n'); // the CLIENT's and the SERVER's
});
