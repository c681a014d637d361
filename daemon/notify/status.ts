/**
 * Each channel's last success and last failure (contract 13.1: `status` prints them), kept by the running
 * daemon in `<data-dir>/notify.json` (0600, written whole: temp file + rename, at most every 250 ms). It is
 * left in place when the daemon stops, so `status` still tells how the last run went. It holds channel ids,
 * times, HTTP statuses and error codes — never a URL or a header value.
 */
import { readFileSync, renameSync } from 'node:fs';
import { writePrivateFileExclusive } from '../datadir/index.js';

export interface ChannelStatus {
  id: string;
  /** `webhook/ntfy`, `email`, `push`. */
  kind: string;
  last_success?: string;
  last_failure?: { at: string; status?: number; error?: string };
}

export function writeNotifyStatus(path: string, pid: number, channels: readonly ChannelStatus[]): void {
  const tmp = `${path}.${pid}.tmp`;
  writePrivateFileExclusive(tmp, `${JSON.stringify({ pid, channels }, null, 2)}\n`);
  renameSync(tmp, path);
}

/** What the daemon last wrote, or undefined when there is no such file. */
export function readNotifyStatus(path: string): { pid: number; channels: ChannelStatus[] } | undefined {
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; channels?: unknown };
    if (typeof data.pid !== 'number' || !Array.isArray(data.channels)) return undefined;
    return { pid: data.pid, channels: data.channels as ChannelStatus[] };
  } catch {
    return undefined;
  }
}

/** One `status` line: `phone (webhook/ntfy): last success 2026-…, last failure never`. */
export function describeChannel(c: ChannelStatus): string {
  const f = c.last_failure;
  const why =
    f === undefined
      ? ''
      : ` (${[f.status === undefined ? undefined : `status ${f.status}`, f.error].filter(Boolean).join(', ')})`;
  return `${c.id} (${c.kind}): last success ${c.last_success ?? 'never'}, last failure ${f === undefined ? 'never' : `${f.at}${why}`}`;
}
