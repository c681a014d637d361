/**
 * Start-up steps on the data dir: an unwritable data dir becomes one clear line and exit 2 (contract 1.1:
 * bad values exit 2 naming the field), not a stack trace.
 */
import { UsageError } from '../base/index.js';

/** Errors that mean the data dir cannot be written (a read-only mount, a full disk, no permission). */
const UNWRITABLE = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOSPC', 'EDQUOT']);

/**
 * Runs one start-up step on the data dir; an unwritable data dir becomes one clear line and exit 2
 * (contract 1.1: bad values exit 2 naming the field), not a stack trace. On a read-only mount Node's
 * recursive mkdir reports ENOENT for a missing child, so that counts too.
 */
export function unwritable<T>(dataDir: string, step: () => T): T {
  try {
    return step();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // SQLite reports a full or read-only disk under several extended codes (SQLITE_IOERR_WRITE, …).
    const sqlite = code !== undefined && /^SQLITE_(FULL|READONLY|IOERR|CANTOPEN)/.test(code);
    if (
      e instanceof UsageError ||
      code === undefined ||
      !(UNWRITABLE.has(code) || code === 'ENOENT' || sqlite)
    )
      throw e;
    throw new UsageError(
      `--data-dir: ${dataDir} must be a writable directory on a writable file system with free space; ${detail(code, (e as Error).message)}`,
      { cause: e },
    );
  }
}

/** A start-up step that settles later (the store, the tokens, recovery): its rejection told the same way. */
export function unwritableAsync<T>(dataDir: string, step: Promise<T>): Promise<T> {
  return step.catch((e: unknown) =>
    unwritable(dataDir, () => {
      throw e;
    }),
  );
}

function detail(code: string, message: string): string {
  return message.startsWith(code) ? message : `${code}: ${message}`;
}
