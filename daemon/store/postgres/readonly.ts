/**
 * A read of the shared database by a process that is not the daemon (`status`, `doctor`, contract 16):
 * one short connection, no migration, nothing written. Says why when the database cannot be read, never
 * the URL.
 */
import pg from 'pg';

export type DatabaseLook =
  | { ok: true; counts: Record<string, number>; owners: number }
  | { ok: false; error: string };

/**
 * Commands by state and how many owners the database at `url` holds (nothing before the daemon's first
 * start created the tables).
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
    return {
      ok: true,
      counts: Object.fromEntries(rows.map((r) => [r.state, r.n])),
      owners: owners.rows[0]?.n ?? 0,
    };
  } catch (e) {
    // 42P01: no such table yet (no daemon ever started on this database).
    if ((e as { code?: string }).code === '42P01') return { ok: true, counts: {}, owners: 0 };
    return { ok: false, error: (e as Error).message };
  } finally {
    await client.end().catch(() => {});
  }
}
