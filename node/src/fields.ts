/** Reading fields of SDK objects and peers' messages, which may be of any shape: never throws. */

/** A field of an object, or `undefined` (a getter that throws, a proxy, a primitive: `undefined`). */
export function field(value: unknown, name: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[name];
  } catch {
    return undefined;
  }
}

/** `value` when it is a non-empty string. */
export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value ? value : undefined;
}
