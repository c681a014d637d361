/**
 * `<data-dir>/rules.json`: how many rules the running daemon read at start, for `ogf-broker status`
 * (contract 11: "status prints how many rules are active"; the daemon may run with `--config F`, so status
 * cannot read the count from the data dir's config). Written whole (temp file + rename, 0600) at start,
 * removed on clean exit with daemon.json, like upstreams.json.
 */
import { readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFileExclusive } from '../datadir/index.js';

export function rulesStatusPath(dataDir: string): string {
  return join(dataDir, 'rules.json');
}

export function writeRulesStatus(dataDir: string, pid: number, active: number): void {
  const path = rulesStatusPath(dataDir);
  const tmp = `${path}.${pid}.tmp`;
  writePrivateFileExclusive(tmp, `${JSON.stringify({ pid, active })}\n`);
  renameSync(tmp, path);
}

/** The count the daemon `pid` wrote, or undefined (no file, another daemon's). */
export function readRulesStatus(dataDir: string, pid: number): number | undefined {
  try {
    const data = JSON.parse(readFileSync(rulesStatusPath(dataDir), 'utf8')) as {
      pid?: unknown;
      active?: unknown;
    };
    return data.pid === pid && typeof data.active === 'number' ? data.active : undefined;
  } catch {
    return undefined;
  }
}

export function removeRulesStatus(dataDir: string): void {
  try {
    unlinkSync(rulesStatusPath(dataDir));
  } catch {
    // Already gone.
  }
}
