/**
 * `<data-dir>/rules.json`: how many rules the running daemon read at start, for `ogf-broker status`
 * (contract 11: "status prints how many rules are active"; the daemon may run with `--config F`, so status
 * cannot read the count from the data dir's config). Written whole (temp file + rename, 0600) at start,
 * removed on clean exit with daemon.json, like upstreams.json (datadir/status-file.ts writes them all).
 */
import { join } from 'node:path';
import { readStatusFile, removeStatusFile, writeStatusFile } from '../datadir/index.js';

export function rulesStatusPath(dataDir: string): string {
  return join(dataDir, 'rules.json');
}

export function writeRulesStatus(dataDir: string, pid: number, active: number): void {
  writeStatusFile(rulesStatusPath(dataDir), pid, { active });
}

/** The count the daemon `pid` wrote, or undefined (no file, another daemon's). */
export function readRulesStatus(dataDir: string, pid: number): number | undefined {
  const active = readStatusFile(rulesStatusPath(dataDir), pid)?.active;
  return typeof active === 'number' ? active : undefined;
}

export function removeRulesStatus(dataDir: string): void {
  removeStatusFile(rulesStatusPath(dataDir));
}
