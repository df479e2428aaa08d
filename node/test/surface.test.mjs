// The package's public surface, read the way an app gets it: `mcp-otel` resolved by name through
// package.json's `exports` (the package refers to itself), in ES modules, CommonJS and the type
// declarations each condition ships. Exactly the instrumentation, its config type and `Outcome`,
// like an opentelemetry-js-contrib instrumentation; the names module stays inside.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const OUTCOME = { OK: 'ok', FAILED: 'failed', CANCELLED: 'cancelled' };

test('ES modules and CommonJS export the instrumentation and Outcome, nothing else', async () => {
  const esm = await import('mcp-otel');
  const cjs = require('mcp-otel');
  assert.deepEqual(Object.keys(esm).sort(), ['McpInstrumentation', 'Outcome']);
  assert.deepEqual(Object.keys(cjs).sort(), ['McpInstrumentation', 'Outcome']);
  for (const exported of [esm, cjs]) {
    assert.deepEqual({ ...exported.Outcome }, OUTCOME);
    assert.equal(typeof exported.McpInstrumentation.prototype.instrument, 'function', 'the manual entry');
  }
  assert.equal(relative(root, fileURLToPath(import.meta.resolve('mcp-otel'))), join('dist', 'esm', 'index.js'));
  assert.equal(relative(root, require.resolve('mcp-otel')), join('dist', 'cjs', 'index.js'));
  assert.equal(relative(root, fileURLToPath(import.meta.resolve('mcp-otel/register'))), join('dist', 'esm', 'register.js'));
});

test('the package keeps its modules inside: only the exports map reaches them', () => {
  assert.throws(() => require('mcp-otel/dist/cjs/semconv.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
});

/** The names the declarations `mcp-otel` resolves to export, for an `import` or a `require`. */
function typedExports(mode) {
  // noResolve: the index's own names are what is asked, not its dependencies' types (seconds saved).
  const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, noResolve: true, noLib: true, types: [] };
  const from = fileURLToPath(import.meta.url);
  const { resolvedModule } = ts.resolveModuleName('mcp-otel', from, options, ts.sys, undefined, undefined, mode);
  assert.ok(resolvedModule, 'mcp-otel resolves to its declarations');
  const file = resolvedModule.resolvedFileName;
  const program = ts.createProgram([file], options);
  const checker = program.getTypeChecker();
  const names = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file))).map((symbol) => symbol.name);
  return { file: relative(root, file), names: names.sort() };
}

test('the declarations each condition ships export the class, its config type and Outcome', () => {
  const names = ['McpInstrumentation', 'McpInstrumentationConfig', 'Outcome'];
  assert.deepEqual(typedExports(ts.ModuleKind.ESNext), { file: join('dist', 'esm', 'index.d.ts'), names });
  assert.deepEqual(typedExports(ts.ModuleKind.CommonJS), { file: join('dist', 'cjs', 'index.d.ts'), names });
});

test("the instrumentation scope's version is package.json's", async () => {
  const { McpInstrumentation } = await import('mcp-otel');
  const instrumentation = new McpInstrumentation({ enabled: false });
  assert.equal(instrumentation.instrumentationVersion, require('mcp-otel/package.json').version);
});
