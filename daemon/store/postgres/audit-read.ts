/**
 * The shared audit chain read by a process that is not a daemon (`audit verify`, `audit export`, contracts
 * 14 and 16): one connection, one read-only REPEATABLE READ snapshot (daemons on other nodes keep
 * appending; what is read is one consistent state of the chain, its checkpoints and its nodes), nothing
 * written, no migration. The rows stream through a cursor, 5,000 a fetch, so 100,000 entries are never one
 * result. Errors never show the URL (it may hold a password).
 */
import pg from 'pg';
import type { Checkpoint } from '../../core/index.js';
import type { AuditRange } from '../rules/index.js';
import { type PgHistory, readHistoryIn } from './history-read.js';

/** A node's name and the audit public key it published (`nodes.audit_public_key`, null until it did). */
export interface NodeKey {
  name: string;
  key: string | null;
}

/** The chain's checkpoints and the nodes' keys, read in the walk's snapshot. */
export interface PgChainMeta {
  checkpoints: Checkpoint[];
  nodes: NodeKey[];
}

const FETCH = 5000;

/** The database is there but holds no chain (no daemon of this version ever started on it). */
export class NoAuditChain extends Error {}

async function inSnapshot<T>(url: string, read: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5000,
    application_name: 'ogf-broker-audit',
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const columns = await client.query<{ name: string }>(
      "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'audit'",
    );
    if (!columns.rows.some((r) => r.name === 'hash')) throw new NoAuditChain('no audit chain');
    const out = await read(client);
    await client.query('COMMIT');
    return out;
  } finally {
    await client.end().catch(() => {});
  }
}

async function meta(c: pg.Client): Promise<PgChainMeta> {
  const cps = await c.query<{ seq: string; hash: string; at: string; signature: string }>(
    'SELECT seq, hash, at, signature FROM audit_checkpoints ORDER BY seq',
  );
  const checkpoints = cps.rows.map((r) => ({
    seq: Number(r.seq),
    hash: r.hash,
    at: r.at,
    signature: r.signature,
  }));
  let nodes: NodeKey[] = [];
  // `nodes` (schema v14+) may be missing on a database a daemon of an older version made.
  const has = await c.query(
    "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'nodes'",
  );
  if (has.rows.length > 0) {
    const r = await c.query<NodeKey>('SELECT name, audit_public_key AS key FROM nodes ORDER BY name');
    nodes = r.rows;
  }
  return { checkpoints, nodes };
}

/**
 * The whole chain in one streaming pass, in seq order (`audit verify`'s first pass, daemon/audit/walk.ts):
 * `visit` sees each row's entry text and hash and returns false to stop. Then the checkpoints and the
 * nodes' keys, from the same snapshot. Rejects NoAuditChain on a database without the chain.
 */
export function walkPgAuditChain(
  url: string,
  visit: (entry: string | null, hash: string | null) => boolean,
): Promise<PgChainMeta & { stopped: boolean; history?: PgHistory }> {
  return inSnapshot(url, async (c) => {
    // Every row, duplicates of a seq included (a cursor, not keyset pages that would skip one).
    await c.query('DECLARE audit_walk NO SCROLL CURSOR FOR SELECT entry, hash FROM audit ORDER BY seq');
    let stopped = false;
    let walked = 0;
    for (;;) {
      const page = await c.query<[string | null, string | null]>({
        text: `FETCH ${FETCH} FROM audit_walk`,
        rowMode: 'array',
      });
      for (const [entry, hash] of page.rows) {
        walked++;
        if (!visit(entry, hash)) {
          stopped = true;
          break;
        }
      }
      if (stopped || page.rows.length < FETCH) break;
    }
    await c.query('CLOSE audit_walk');
    if (stopped) return { checkpoints: [], nodes: [], stopped };
    // Contract 14 (v4): the history the chain is checked against, in the same snapshot.
    return { ...(await meta(c)), stopped, history: await readHistoryIn(c, walked) };
  });
}

/** The history alone, in a snapshot of its own (`audit verify` when its walk stopped but the chain is whole). */
export function readPgHistory(url: string): Promise<PgHistory> {
  return inSnapshot(url, (c) => readHistoryIn(c, Number.MAX_SAFE_INTEGER));
}

/**
 * The chain's rows (those of `range`), its checkpoints and the nodes' keys in one snapshot (`audit verify`
 * on a record found off, for the first bad seq and why; `audit export`). Rejects NoAuditChain as above.
 */
export function readPgAuditChain(
  url: string,
  range: AuditRange = {},
): Promise<PgChainMeta & { rows: Array<{ seq: number; entry: string | null; hash: string | null }> }> {
  return inSnapshot(url, async (c) => {
    const { where, params } = rangeSql(range);
    await c.query({
      text: `DECLARE audit_read NO SCROLL CURSOR FOR SELECT seq, entry, hash FROM audit ${where} ORDER BY seq`,
      values: params,
    });
    const rows: Array<{ seq: number; entry: string | null; hash: string | null }> = [];
    for (;;) {
      const page = await c.query<{ seq: string; entry: string | null; hash: string | null }>(
        `FETCH ${FETCH} FROM audit_read`,
      );
      for (const r of page.rows) rows.push({ seq: Number(r.seq), entry: r.entry, hash: r.hash });
      if (page.rows.length < FETCH) break;
    }
    await c.query('CLOSE audit_read');
    return { rows, ...(await meta(c)) };
  });
}

/** `range` (store/rules/rules.ts AuditRange) in PostgreSQL's SQL. */
function rangeSql(r: AuditRange): { where: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (r.since !== undefined) {
    params.push(r.since);
    parts.push(`seq >= (SELECT COALESCE(MIN(seq), 9e18::bigint) FROM audit WHERE at >= $${params.length})`);
  }
  if (r.until !== undefined) {
    params.push(r.until);
    parts.push(`seq <= (SELECT COALESCE(MAX(seq), 0) FROM audit WHERE at <= $${params.length})`);
  }
  if (r.commandIds !== undefined) {
    params.push([...r.commandIds]);
    parts.push(`command_id = ANY($${params.length})`);
  }
  return { where: parts.length === 0 ? '' : `WHERE ${parts.join(' AND ')}`, params };
}
