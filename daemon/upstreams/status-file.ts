/**
 * `<data-dir>/upstreams.json`: each upstream's state as the running daemon sees it, for `ogf-broker status`
 * (contract 1.1 (v2): connected with N tools / down and why). Written whole (temp file + rename, 0600) on
 * every change and removed on clean exit with daemon.json; it never holds a header value or an env value.
 */
import { readFileSync, renameSync, unlinkSync } from 'node:fs';
import { writePrivateFileExclusive } from '../datadir.js';
import type { UpstreamStatus } from './registry.js';

export function writeUpstreamStatus(path: string, pid: number, status: readonly UpstreamStatus[]): void {
  const tmp = `${path}.${pid}.tmp`;
  writePrivateFileExclusive(tmp, `${JSON.stringify({ pid, upstreams: status }, null, 2)}\n`);
  renameSync(tmp, path);
}

/** The states the daemon `pid` last wrote, or undefined when the file is missing or another daemon's. */
export function readUpstreamStatus(path: string, pid: number): UpstreamStatus[] | undefined {
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; upstreams?: unknown };
    return data.pid === pid && Array.isArray(data.upstreams)
      ? (data.upstreams as UpstreamStatus[])
      : undefined;
  } catch {
    return undefined;
  }
}

export function removeUpstreamStatus(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** One line per upstream, as `status` and `doctor` print them. */
export function describeUpstream(s: UpstreamStatus): string {
  if (s.state === 'connected') return `${s.name}: connected with ${s.tools} tool${s.tools === 1 ? '' : 's'}`;
  if (s.state === 'connecting') return `${s.name}: connecting`;
  return `${s.name}: down (${s.why ?? 'not connected'})`;
}
