/** The package's version (the instrumentation scope's version); `tests/test_languages.py` checks it against package.json. */
export const VERSION = '0.1.0';
