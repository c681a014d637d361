/**
 * Each channel's last success and last failure (contract 13.1: `status` prints them), kept by the running
 * daemon in `<data-dir>/notify.json` (0600, written whole by datadir/status-file.ts, at most every 250 ms). It is
 * left in place when the daemon stops, so `status` still tells how the last run went. It holds channel ids,
 * times, HTTP statuses and error codes — never a URL or a header value.
 */
import { readStatusFile, writeStatusFile } from '../datadir/index.js';

export interface ChannelStatus {
  id: string;
  /** `webhook/ntfy`, `email`, `push`. */
  kind: string;
  /** Contract 19 (v4): whom its actions decide as (an owner, or `each device's owner`); absent: it cannot decide. */
  decides_as?: string;
  last_success?: string;
  last_failure?: { at: string; status?: number; error?: string };
}

export function writeNotifyStatus(path: string, pid: number, channels: readonly ChannelStatus[]): void {
  writeStatusFile(path, pid, { channels });
}

/** What the daemon last wrote, or undefined when there is no such file. */
export function readNotifyStatus(path: string): { pid: number; channels: ChannelStatus[] } | undefined {
  const data = readStatusFile(path);
  if (data === undefined || !Array.isArray(data.channels)) return undefined;
  return { pid: data.pid, channels: data.channels as ChannelStatus[] };
}

/**
 * One `status` line: `phone (webhook/ntfy): last success 2026-…, last failure never`; a channel with actions
 * (contract 19) says so: `phone (webhook/ntfy, can decide as owner): …`.
 */
export function describeChannel(c: ChannelStatus): string {
  const f = c.last_failure;
  const why =
    f === undefined
      ? ''
      : ` (${[f.status === undefined ? undefined : `status ${f.status}`, f.error].filter(Boolean).join(', ')})`;
  const decides = c.decides_as === undefined ? '' : `, can decide as ${c.decides_as}`;
  return `${c.id} (${c.kind}${decides}): last success ${c.last_success ?? 'never'}, last failure ${f === undefined ? 'never' : `${f.at}${why}`}`;
}
