/**
 * Structured logs: one JSON line per event on stderr. Callers pass fields, never secrets or tokens —
 * the logger takes no session UUID or token because no caller has a reason to hand it one; the secret
 * scan (test/secret-scan.test.ts) checks that this stays true.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void;
}

/** A logger writing JSON lines to a stream (stderr by default). */
export function createLogger(
  stream: { write(s: string): unknown } = process.stderr,
  now: () => Date = () => new Date(),
): Logger {
  return {
    log(level, event, fields = {}) {
      stream.write(`${JSON.stringify({ time: now().toISOString(), level, event, ...fields })}\n`);
    },
  };
}

/** A logger that drops everything (tests and the stdio front, where stdout is the protocol). */
export const silentLogger: Logger = { log() {} };
