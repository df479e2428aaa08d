/**
 * The MCP SDK modules loaded before the instrumentation was enabled, which its load hooks can no
 * longer patch: what js-contrib's `InstrumentationBase` warns of from `require.cache`, here for
 * both module systems.
 *
 * - CommonJS: a hooked file of the SDK already in `require.cache` (every CommonJS module loaded,
 *   by `require` or by `import`, is there).
 * - ES modules: no registry of loaded ES modules is exposed, but an ES module's static `import`s
 *   all run before its first line of code. So the module that makes the instrumentation (the first
 *   frame of its stack outside `node_modules`) is read: each MCP SDK specifier it imports
 *   statically was loaded before it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const SDK_PATH = /\/node_modules\/(@modelcontextprotocol\/(?:sdk|client|server))\//;
// `import ... from '<specifier>'` and `import '<specifier>'`, at the start of a line.
const STATIC_IMPORT = /^\s*import\s[^;]*?['"](@modelcontextprotocol\/(?:sdk|client|server)(?:\/[^'"]*)?)['"]/gm;
// A stack frame's location: `(file:///a/b.mjs:1:2)`, `at /a/b.cjs:1:2`.
const FRAME = /(?:\(|at )((?:file:\/\/)?\/[^():]+):\d+:\d+\)?$/;

/** The MCP SDK packages whose hooked CommonJS files (`files`, the ends of their paths) are loaded. */
export function loadedCommonJs(files: readonly string[]): string[] {
  const cache = createRequire(`${process.cwd()}/`).cache;
  const found = new Set<string>();
  for (const [path, module] of Object.entries(cache)) {
    const normal = path.replace(/\\/g, '/');
    const sdk = SDK_PATH.exec(normal);
    if (sdk !== null && module?.loaded && files.some((file) => normal.endsWith(file))) found.add(sdk[1]);
  }
  return [...found];
}

/**
 * The module making the instrumentation and the MCP SDK specifiers it imports statically, from
 * `stack` (taken in this package: its first frame is ours, and so is every frame in its folder).
 */
export function importedFirst(stack: string | undefined): { module: string; specifiers: string[] } | undefined {
  const locations = (stack ?? '').split('\n').flatMap((line) => FRAME.exec(line.trim())?.[1] ?? []);
  const own = locations[0]?.replace(/[^\\/]*$/, '');
  const caller = locations.find(
    (location) => own !== undefined && !location.startsWith(own) && !/[\\/]node_modules[\\/]/.test(location),
  );
  if (caller === undefined) return undefined;
  let source: string;
  try {
    source = readFileSync(caller.startsWith('file:') ? fileURLToPath(caller) : caller, 'utf8');
  } catch {
    return undefined;
  }
  const specifiers = [...new Set([...source.matchAll(STATIC_IMPORT)].map((match) => match[1]))];
  return specifiers.length ? { module: caller, specifiers } : undefined;
}
