// Runs the package's own tests (test/*.test.cjs|mjs), one file at a time; the frameworks' and the
// lowest versions' projects under test/ have their own commands (see the Makefile).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const tests = join(dirname(fileURLToPath(import.meta.url)), '..', 'test');
const files = readdirSync(tests)
  .filter((name) => /\.test\.(c|m)?js$/.test(name))
  .sort()
  .map((name) => join(tests, name));
const { status } = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...process.argv.slice(2), ...files], {
  stdio: 'inherit',
});
process.exit(status ?? 1);
