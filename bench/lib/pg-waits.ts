/**
 * What a database's sessions wait on while a row runs (row 18): one connection of its own samples
 * `pg_stat_activity` every `everyMs` and counts, per sample, the sessions of database `db` that are
 * active and those waiting on a lock (a row lock shows as `Lock`/`transactionid` or `tuple`). The mean of
 * each over the samples tells whether the writers of several daemons queue behind one another, and the
 * ungranted locks that name a table say behind which table's row.
 */
import pg from 'pg';

export interface Waits {
  samples: number;
  /** Mean sessions running a statement or waiting (state = 'active'), other than the sampler's. */
  meanActive: number;
  /** Mean sessions waiting on a heavyweight lock. */
  meanLockWaits: number;
  /** Lock wait events seen, by name (`transactionid`, `tuple`, …), counted over all samples. */
  events: Record<string, number>;
  /** Ungranted locks that name a table (a `tuple` wait does), by table, counted over all samples. */
  tables: Record<string, number>;
}

export async function sampleWaits(
  url: string,
  db: string,
  everyMs = 50,
): Promise<{ stop(): Promise<Waits> }> {
  const client = new pg.Client({ connectionString: url, application_name: 'ogf-bench-sampler' });
  await client.connect();
  let samples = 0;
  let active = 0;
  let waits = 0;
  const events: Record<string, number> = {};
  const tables: Record<string, number> = {};
  let running = true;
  const loop = (async () => {
    while (running) {
      const r = await client.query<{
        state: string | null;
        wait_event_type: string | null;
        wait_event: string | null;
      }>(
        `SELECT state, wait_event_type, wait_event FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        [db],
      );
      samples++;
      for (const row of r.rows) {
        if (row.state === 'active') active++;
        if (row.wait_event_type === 'Lock') {
          waits++;
          const e = row.wait_event ?? '?';
          events[e] = (events[e] ?? 0) + 1;
        }
      }
      const l = await client.query<{ rel: string }>(
        `SELECT relation::regclass::text AS rel FROM pg_locks
          WHERE NOT granted AND relation IS NOT NULL
            AND database = (SELECT oid FROM pg_database WHERE datname = $1)`,
        [db],
      );
      for (const row of l.rows) tables[row.rel] = (tables[row.rel] ?? 0) + 1;
      await new Promise((res) => setTimeout(res, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      return {
        samples,
        meanActive: samples ? active / samples : 0,
        meanLockWaits: samples ? waits / samples : 0,
        events,
        tables,
      };
    },
  };
}
