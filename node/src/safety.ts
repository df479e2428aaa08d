/**
 * Fail-open bookkeeping: our own errors are logged once (through the OpenTelemetry diagnostic
 * logger) and never reach the application.
 */
import { diag } from '@opentelemetry/api';

const reported = new Set<string>();

/** Log a problem in mcp-otel's own code the first time it happens at `where`. */
export function reportOnce(where: string, error?: unknown): void {
  if (reported.has(where)) return;
  reported.add(where);
  diag.warn(`mcp-otel: ${where}${error === undefined ? '' : `: ${describe(error)}`} (reported once)`);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : typeof error;
}
