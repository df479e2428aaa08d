/** The package's version (the instrumentation scope's version); `test/surface.test.mjs` checks it against package.json. */
export const VERSION = '0.1.0';
