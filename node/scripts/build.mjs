// Builds the package: ESM (dist/esm) and CommonJS (dist/cjs), each with its type declarations.
// `--import mcp-otel/register` is ESM only (a loader hook is registered from an ES module). The
// build is written beside dist/ and swapped in at the end, so a process reading dist/ meanwhile
// (a test, a benchmark) never finds it half built.
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const next = join(root, `dist.next-${process.pid}`);
rmSync(next, { recursive: true, force: true });
try {
  for (const [project, type] of [
    ['tsconfig.json', 'module'],
    ['tsconfig.cjs.json', 'commonjs'],
  ]) {
    const out = join(next, type === 'module' ? 'esm' : 'cjs');
    execFileSync(process.execPath, [tsc, '-p', join(root, project), '--outDir', out], { stdio: 'inherit', cwd: root });
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type })}\n`);
  }
  const old = join(root, `dist.old-${process.pid}`);
  try {
    renameSync(join(root, 'dist'), old);
  } catch {
    // no build yet
  }
  renameSync(next, join(root, 'dist'));
  rmSync(old, { recursive: true, force: true });
} finally {
  rmSync(next, { recursive: true, force: true });
}
