/**
 * `<data-dir>/upstreams.json`: each upstream's state as the running daemon sees it, for `ogf-broker status`
 * (contract 1.1 (v2): connected with N tools / down and why). Written whole (temp file + rename, 0600) on
 * every change (datadir/status-file.ts) and removed on clean exit with daemon.json; it never holds a header value or an env value.
 */
import { readStatusFile, removeStatusFile, writeStatusFile } from '../datadir/index.js';
import type { UpstreamStatus } from './registry.js';

/** One upstream's line in the file: the registry's state plus how many of its tools are exposed. */
export interface UpstreamStatusLine extends UpstreamStatus {
  /**
   * Tools exposed to the AI (issue 19: the config's `tools` filter and skipped tools make this differ from
   * `tools`, which counts what the upstream listed). Absent in a file an older daemon wrote.
   */
  exposed?: number;
}

/**
 * The registry's states with each upstream's exposed tool count, from the upstream source's
 * `list_commands` part (`upstreams: [{name, tools: [exposed names]}]`, kinds/upstream/source.ts).
 */
export function withExposed(
  status: readonly UpstreamStatus[],
  listing: Record<string, unknown> | undefined,
): UpstreamStatusLine[] {
  const parts = (listing?.upstreams ?? []) as Array<{ name: string; tools: readonly string[] }>;
  const exposed = new Map(parts.map((u) => [u.name, u.tools.length]));
  return status.map((s) => {
    const n = exposed.get(s.name);
    return n === undefined ? { ...s } : { ...s, exposed: n };
  });
}

export function writeUpstreamStatus(path: string, pid: number, status: readonly UpstreamStatusLine[]): void {
  writeStatusFile(path, pid, { upstreams: status });
}

/** The states the daemon `pid` last wrote, or undefined when the file is missing or another daemon's. */
export function readUpstreamStatus(path: string, pid: number): UpstreamStatusLine[] | undefined {
  const upstreams = readStatusFile(path, pid)?.upstreams;
  return Array.isArray(upstreams) ? (upstreams as UpstreamStatusLine[]) : undefined;
}

export function removeUpstreamStatus(path: string): void {
  removeStatusFile(path);
}

/**
 * One line per upstream, as `status` prints them: contract 1.1's "connected with N tools" (N as the upstream
 * listed them), then — when fewer are exposed (the `tools` filter, skipped tools) — how many the AI sees
 * (issue 19: "14 tools" where 4 are exposed misled).
 */
export function describeUpstream(s: UpstreamStatusLine): string {
  if (s.state === 'connected') {
    const listed = `${s.name}: connected with ${s.tools} tool${s.tools === 1 ? '' : 's'}`;
    return s.exposed === undefined || s.exposed === s.tools ? listed : `${listed}, ${s.exposed} exposed`;
  }
  if (s.state === 'connecting') return `${s.name}: connecting`;
  return `${s.name}: down (${s.why ?? 'not connected'})`;
}
