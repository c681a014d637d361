/**
 * Vitest's global setup: the run's own temp dir. The suites make ~1,000 temp dirs a run (data dirs, fixture
 * trees, PostgreSQL clusters, browser profiles), and a failed or killed test skips its own clean-up: before
 * this, every `npm test` left ~1.2 GB of them in /tmp. Now TMPDIR names one dir under the system's temp dir
 * for the whole run; the workers, the daemons and every child they start inherit it (`os.tmpdir()`), and it
 * is removed when the run ends. A run that was killed cannot remove its own; the next run removes every such
 * dir whose run is no longer alive (the pid it was written with).
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const RUN_PREFIX = 'ogf-tests-';
const OWNER_FILE = 'run.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the run dirs in `base` whose run ended without removing its own (killed, or a crash). */
export function sweepEnded(base: string): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(base)) {
    if (!name.startsWith(RUN_PREFIX)) continue;
    const dir = join(base, name);
    let pid: number;
    try {
      pid = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'));
    } catch {
      continue; // not ours, or being made this instant: left alone
    }
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) continue;
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    removed.push(dir);
  }
  return removed;
}

/**
 * Makes this run's dir in `base`, owned by this process's pid. Mode 0755: the PostgreSQL suites' clusters
 * belong to user postgres and a bridge-client test's files to nobody, and they must reach their own dirs
 * inside (each of which is 0700, as under /tmp).
 */
export function makeRunDir(base: string): string {
  const dir = mkdtempSync(join(base, RUN_PREFIX));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, OWNER_FILE), String(process.pid));
  return dir;
}

/** TMPDIR as it was (unset stays unset). */
export function restoreTmpdir(value: string | undefined): void {
  if (value === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = value;
}

export default function setup(): () => void {
  const before = process.env.TMPDIR;
  const base = tmpdir();
  sweepEnded(base);
  const dir = makeRunDir(base);
  process.env.TMPDIR = dir;
  return () => {
    restoreTmpdir(before);
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
