/**
 * What `ogf-broker status` says about nodes (contract 16): this data dir's node, the running daemon's view
 * of its shared database when it lost it ("a node that loses the database keeps answering (`status` says
 * so)"), and the live nodes of the `nodes` registry. Another daemon wrote those rows (its host name
 * among them), so each text passes through escapeForTerminal like every stored text `list` prints.
 */
import { escapeForTerminal as esc } from '../base/index.js';
import type { DatabaseStatus, LiveNode } from '../store/index.js';

/** `node: laptop`: this data dir's `node_name` (config, default the host name). */
export function nodeLine(name: string | undefined): string {
  return name === undefined ? 'node: unknown (the config does not load)' : `node: ${esc(name)}`;
}

/** "3 s", "2 min 5 s", "4 h 10 min": how long ago, for a person. */
export function ago(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  const m = Math.floor(s / 60);
  return m % 60 === 0 ? `${m / 60} h` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/**
 * The running daemon's own view of the shared database, when it cannot reach it (undefined when it can,
 * or has not said): `status`'s own connection may well reach a database the daemon lost, or the reverse.
 */
export function daemonDatabaseLine(status: DatabaseStatus | undefined, nowMs: number): string | undefined {
  if (status === undefined || status.available) return undefined;
  const since = Date.parse(status.since);
  const forHow = Number.isNaN(since) ? '' : ` for ${ago((nowMs - since) / 1000)}`;
  const why = status.error === undefined ? '' : ` (${esc(status.error)})`;
  return (
    `daemon's database: out of reach${forHow}${why}; the daemon answers from memory, ` +
    'but queues and decides nothing until it is back'
  );
}

/** `live nodes: N` then one line each: name, host, pid, version, seconds since its heartbeat. */
export function liveNodeLines(nodes: readonly LiveNode[], self: string | undefined): string[] {
  if (nodes.length === 0) return ['live nodes: none'];
  const lines = [`live nodes: ${nodes.length}`];
  for (const n of nodes) {
    const mark = n.name === self ? ' (this data dir)' : '';
    const beat = `${n.heartbeat_age_s.toFixed(1)} s ago`;
    lines.push(
      `  ${esc(n.name)}${mark}  host ${esc(n.host)}  pid ${n.pid}  version ${esc(n.version)}  heartbeat ${beat}`,
    );
  }
  return lines;
}
