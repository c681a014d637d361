/**
 * The live-node registry (contract 16): one row per node name in `nodes`, and a session-level advisory
 * lock per name held by the node's feed connection (feed.ts) for as long as it runs. The lock is what
 * makes "two live daemons with one name on one database: the second exits 2" exact — PostgreSQL drops it
 * the moment the holder's session ends (a clean stop, kill -9: the socket closes). The row says who holds
 * it and when it last beat (the database's own clock, `now()`, so the machines' clocks never matter);
 * a holder that stopped beating for `STALE_S` (its machine gone, its socket not yet timed out) is
 * terminated and the name taken over.
 */
import type pg from 'pg';
import { UsageError } from '../../base/index.js';

/** The advisory lock space of node names (the first key; the second is the name's hash). */
const NODE_LOCK = 7_146_028;
/** How often a node moves its heartbeat. */
export const HEARTBEAT_MS = 5000;
/** A node is live while its heartbeat is younger than this (three beats missed: gone). */
export const STALE_S = 15;

/** What a node says of itself in the registry. */
export interface NodeRecord {
  name: string;
  host: string;
  pid: number;
  version: string;
  /**
   * Its audit public key (contract 14) as SPKI PEM (audit/keys.ts `auditPublicKeyText`, what `audit key`
   * prints), so checkpoints of every node verify from any node (`audit verify` names a key known only here).
   */
  auditPublicKey?: string;
}

/** A live node as `status` lists it. */
export interface LiveNode {
  name: string;
  host: string;
  pid: number;
  version: string;
  started_at: string;
  /** Seconds since its last heartbeat. */
  heartbeat_age_s: number;
}

type Q = Pick<pg.ClientBase, 'query'>;

const LOCK_KEY = 'hashtext($1) & 2147483647';

/**
 * Takes the name's lock on `client`'s session and registers the node; a name held by a live node is a
 * UsageError (exit 2) naming the holder.
 */
export async function claimName(client: Q, node: NodeRecord): Promise<void> {
  if (!(await tryLock(client, node.name))) {
    const holder = await holderOf(client, node.name);
    if (holder === undefined || holder.age < STALE_S || !(await takeOver(client, node.name))) {
      const who =
        holder === undefined
          ? 'a session that is not registered'
          : `pid ${holder.pid} on host ${holder.host}, last heartbeat ${Math.round(holder.age)} s ago`;
      throw new UsageError(
        `node_name ${node.name}: another live ogf-broker daemon named ${node.name} uses this database (${who}); give this daemon its own node_name in its config`,
      );
    }
  }
  await client.query(
    `INSERT INTO nodes (name, host, pid, version, started_at, heartbeat_at, stopped_at, audit_public_key)
     VALUES ($1, $2, $3, $4, now(), now(), NULL, $5)
     ON CONFLICT (name) DO UPDATE SET host = $2, pid = $3, version = $4, started_at = now(),
       heartbeat_at = now(), stopped_at = NULL, audit_public_key = coalesce($5, nodes.audit_public_key)`,
    [node.name, node.host, node.pid, node.version, node.auditPublicKey ?? null],
  );
}

/** The node's heartbeat, on the session that holds its name. */
export async function beat(client: Q, name: string): Promise<void> {
  await client.query('UPDATE nodes SET heartbeat_at = now() WHERE name = $1', [name]);
}

/** A clean stop: the node leaves the live list at once. */
export async function stopped(client: Q, name: string): Promise<void> {
  await client.query('UPDATE nodes SET stopped_at = now() WHERE name = $1', [name]);
}

/**
 * Commands stored before nodes existed (no `node`): the first node to start after the upgrade takes them,
 * so each command has one node that recovers and launches it (until then one daemon held the database).
 * Contract 16 (v4): grants stored before grants named their node, and not given the node of the command
 * whose approval made them (schema.ts), are taken the same way — never `*`, which would keep the hole
 * (alpha's grant approving beta's program): at worst a grant now asks the owners where it approved before.
 */
export async function adoptUnowned(client: Q, name: string): Promise<number> {
  const r = await client.query(
    `UPDATE commands SET node = $1, body = jsonb_set(body::jsonb, '{node}', to_jsonb($1::text))::text
     WHERE node IS NULL`,
    [name],
  );
  const g = await client.query(
    `UPDATE grants SET body = jsonb_set(body::jsonb, '{node}', to_jsonb($1::text))::text, rev = rev + 1
     WHERE body::jsonb->'node' IS NULL`,
    [name],
  );
  return (r.rowCount ?? 0) + (g.rowCount ?? 0);
}

/** The live nodes, by name. */
export async function liveNodes(client: Q): Promise<LiveNode[]> {
  const { rows } = await client.query<{
    name: string;
    host: string;
    pid: number;
    version: string;
    started_at: Date;
    age: number;
  }>(
    `SELECT name, host, pid, version, started_at, extract(epoch FROM now() - heartbeat_at)::float8 AS age
     FROM nodes WHERE stopped_at IS NULL AND heartbeat_at > now() - make_interval(secs => $1)
     ORDER BY name`,
    [STALE_S],
  );
  return rows.map((r) => ({
    name: r.name,
    host: r.host,
    pid: r.pid,
    version: r.version,
    started_at: new Date(r.started_at).toISOString(),
    heartbeat_age_s: Math.round(r.age * 10) / 10,
  }));
}

async function tryLock(client: Q, name: string): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>(
    `SELECT pg_try_advisory_lock(${NODE_LOCK}, ${LOCK_KEY}) AS ok`,
    [name],
  );
  return rows[0]?.ok === true;
}

async function holderOf(client: Q, name: string) {
  const { rows } = await client.query<{ host: string; pid: number; age: number }>(
    'SELECT host, pid, extract(epoch FROM now() - heartbeat_at)::float8 AS age FROM nodes WHERE name = $1',
    [name],
  );
  return rows[0];
}

/** Ends the session holding a name whose node stopped beating, then takes the lock (false: still held). */
async function takeOver(client: Q, name: string): Promise<boolean> {
  await client.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks
     WHERE locktype = 'advisory' AND granted AND classid = ${NODE_LOCK} AND objid = (${LOCK_KEY})::oid
       AND objsubid = 2`,
    [name],
  );
  for (let i = 0; i < 20; i++) {
    if (await tryLock(client, name)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
