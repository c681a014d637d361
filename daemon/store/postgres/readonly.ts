/**
 * A read of the shared database by a process that is not the daemon (`status`, contract 16): one short
 * connection, no migration, nothing written. Says why when the database cannot be read, never the URL.
 */
import pg from 'pg';

export type DatabaseCounts = { ok: true; counts: Record<string, number> } | { ok: false; error: string };

/** Commands by state in the database at `url` (empty before the daemon's first start created the tables). */
export async function countsByStateAt(url: string): Promise<DatabaseCounts> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ state: string; n: number }>(
      'SELECT state, count(*)::int AS n FROM commands GROUP BY state',
    );
    return { ok: true, counts: Object.fromEntries(rows.map((r) => [r.state, r.n])) };
  } catch (e) {
    // 42P01: no commands table yet (no daemon ever started on this database).
    if ((e as { code?: string }).code === '42P01') return { ok: true, counts: {} };
    return { ok: false, error: (e as Error).message };
  } finally {
    await client.end().catch(() => {});
  }
}
