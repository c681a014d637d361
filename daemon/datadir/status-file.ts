/**
 * The running daemon's status files, written one way (issue 37 item 5): daemon.json, rules.json,
 * upstreams.json, notify.json and database.json each tell another process (`status`, `doctor`, `token`, …)
 * what this daemon knows. Each is written whole — a private temp file named by the pid, then a rename —
 * so a reader never sees half of one, and each carries the writer's pid so a reader can tell a file
 * left by an earlier daemon from the running one's.
 */
import { readFileSync, renameSync, unlinkSync } from 'node:fs';
import { writePrivateFileExclusive } from './datadir.js';

/** Writes `{pid, ...fields}` to `path` (0600) through `<path>.<pid>.tmp` and a rename. */
export function writeStatusFile(path: string, pid: number, fields: object): void {
  const tmp = `${path}.${pid}.tmp`;
  writePrivateFileExclusive(tmp, `${JSON.stringify({ pid, ...fields }, null, 2)}\n`);
  renameSync(tmp, path);
}

/**
 * The parsed file, or undefined when it is missing, not a JSON object with a numeric pid, or — given
 * `pid` — another daemon's.
 */
export function readStatusFile(
  path: string,
  pid?: number,
): ({ pid: number } & Record<string, unknown>) | undefined {
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
    const file = data as { pid?: unknown } & Record<string, unknown>;
    if (typeof file.pid !== 'number' || (pid !== undefined && file.pid !== pid)) return undefined;
    return file as { pid: number } & Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Removes the file; one already gone is fine. */
export function removeStatusFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
