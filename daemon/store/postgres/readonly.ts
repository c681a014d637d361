/**
 * A read of the shared database by a process that is not the daemon (`status`, `doctor`, contract 16):
 * one short connection, no migration, nothing written. Says why when the database cannot be read, never
 * the URL.
 */
import pg from 'pg';
import type { Command } from '../../core/index.js';
import { type LiveNode, liveNodes } from './nodes.js';

export type DatabaseLook =
  | { ok: true; counts: Record<string, number>; owners: number; nodes: LiveNode[] }
  | { ok: false; error: string };

/** 42P01: no such table yet (no daemon ever started on this database, or one older than the table). */
const noTable = (e: unknown) => (e as { code?: string }).code === '42P01';

/**
 * Commands by state, how many owners, and the live nodes the database at `url` holds (nothing before the
 * daemon's first start created the tables).
 */
export async function lookAt(url: string): Promise<DatabaseLook> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ state: string; n: number }>(
      'SELECT state, count(*)::int AS n FROM commands GROUP BY state',
    );
    const owners = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM owners');
    // Contract 16: live = not stopped, and a heartbeat (every 5 s) within 15 s, by the database's clock.
    const nodes = await liveNodes(client).catch((e: unknown) => {
      if (noTable(e)) return [];
      throw e;
    });
    return {
      ok: true,
      counts: Object.fromEntries(rows.map((r) => [r.state, r.n])),
      owners: owners.rows[0]?.n ?? 0,
      nodes,
    };
  } catch (e) {
    if (noTable(e)) return { ok: true, counts: {}, owners: 0, nodes: [] };
    return { ok: false, error: (e as Error).message };
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The newest `limit` commands, newest first (`policy test`, contract 11 and 16 v4): none before the first
 * daemon created the table; rejects with the driver's reason when the database cannot be read.
 */
export async function newestPgCommands(url: string, limit: number): Promise<Command[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ body: string }>(
      'SELECT body FROM commands ORDER BY seq DESC LIMIT $1',
      [limit],
    );
    return rows.map((r) => JSON.parse(r.body) as Command);
  } catch (e) {
    if (noTable(e)) return [];
    throw e;
  } finally {
    await client.end().catch(() => {});
  }
}
