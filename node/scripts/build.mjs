// Builds the package: ESM (dist/esm) and CommonJS (dist/cjs), each with its type declarations.
// `--import mcp-otel/register` is ESM only (a loader hook is registered from an ES module).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const [project, type] of [['tsconfig.json', 'module'], ['tsconfig.cjs.json', 'commonjs']]) {
  execFileSync(process.execPath, [tsc, '-p', join(root, project)], { stdio: 'inherit', cwd: root });
  const out = join(root, 'dist', type === 'module' ? 'esm' : 'cjs');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type })}\n`);
}
