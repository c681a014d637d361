/**
 * Structured logs: one JSON line per event on stderr. Callers pass fields, never secrets or tokens —
 * the logger takes no session UUID or token because no caller has a reason to hand it one; the secret
 * scan (test/secret-scan.test.ts) checks that this stays true.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void;
}

/** Loggers holding lines not yet written; the process's exit writes them (one hook for all). */
const unwritten = new Set<() => void>();
let hooked = false;
/** Set by that hook: a line logged later in the exit (another `exit` listener) is written at once. */
let exiting = false;

/**
 * A logger writing JSON lines to a stream (stderr by default). The lines of one event-loop turn are written
 * together at its end (setImmediate), and at the process's exit: a write to stderr is a system call in the
 * event loop's thread (stdio pipes and files are written synchronously), and a commit logs each change
 * before an approved call is sent (bench row 8). A kill -9 loses at most that turn's lines, never the
 * audit record's.
 */
export function createLogger(
  stream: { write(s: string): unknown } = process.stderr,
  now: () => Date = () => new Date(),
): Logger {
  let lines = '';
  const flush = () => {
    unwritten.delete(flush);
    if (lines === '') return;
    const text = lines;
    lines = '';
    stream.write(text);
  };
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      exiting = true;
      for (const f of unwritten) f();
    });
  }
  return {
    log(level, event, fields = {}) {
      const line = `${JSON.stringify({ time: now().toISOString(), level, event, ...fields })}\n`;
      if (exiting) {
        stream.write(line); // no later turn will come
        return;
      }
      if (lines === '') {
        unwritten.add(flush);
        setImmediate(flush);
      }
      lines += line;
    },
  };
}

/** A logger that drops everything (tests and the stdio front, where stdout is the protocol). */
export const silentLogger: Logger = { log() {} };
