// How the SDK gets instrumented: ES modules through the import-in-the-middle loader hook, CommonJS
// through require hooks (covered by every other test), and by hand for code load hooks cannot see.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (...args) => JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim().split('\n').at(-1));

for (const generation of ['v1', 'v2']) {
  test(`${generation}: an ES module app is instrumented through the loader hook`, () => {
    const spans = run('--import', './test/fixtures/esm-setup.mjs', 'test/fixtures/esm-app.mjs', generation);
    assert.deepEqual(spans, [
      '1 initialize ok',
      '2 initialize ok',
      '2 notifications/initialized -',
      '1 notifications/initialized -',
      '1 tools/call ping ok',
      '2 tools/call ping ok',
    ]);
  });

  test(`${generation}: the SDK loaded before mcp-otel is instrumented by hand, and only then`, () => {
    assert.deepEqual(run('test/fixtures/manual-app.cjs', generation), { instrumented: 0, spans: [] });
    // The Client class and the McpServer instance: one Protocol in v1, one per package in v2.
    assert.deepEqual(run('test/fixtures/manual-app.cjs', generation, 'instrument'), { instrumented: 2, spans: [1, 2] });
  });
}
