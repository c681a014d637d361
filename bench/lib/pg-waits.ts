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
  /** Why sampling stopped early (the connection was lost), when it did. */
  lost?: string;
}

export async function sampleWaits(
  url: string,
  db: string,
  everyMs = 50,
): Promise<{ stop(): Promise<Waits> }> {
  const client = new pg.Client({ connectionString: url, application_name: 'ogf-bench-sampler' });
  // A connection lost under the sampler (PostgreSQL stopped while a row failed) ends the sampling; an
  // `error` event with no listener would end the whole bench (issue 41).
  let lost: Error | undefined;
  client.on('error', (e) => {
    lost = e;
  });
  await client.connect();
  let samples = 0;
  let active = 0;
  let waits = 0;
  const events: Record<string, number> = {};
  const tables: Record<string, number> = {};
  let running = true;
  const loop = (async () => {
    while (running && lost === undefined) {
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
  })().catch((e: unknown) => {
    lost = e as Error;
  });
  let stopped: Promise<Waits> | undefined;
  return {
    stop() {
      stopped ??= finish();
      return stopped;
    },
  };
  async function finish(): Promise<Waits> {
    running = false;
    await loop;
    await client.end().catch(() => {});
    return {
      ...(lost === undefined ? {} : { lost: lost.message }),
      samples,
      meanActive: samples ? active / samples : 0,
      meanLockWaits: samples ? waits / samples : 0,
      events,
      tables,
    };
  }
}

/** `sampleWaits` around `work`: the sampler ends whether or not the work throws. */
export async function sampling<T>(url: string, db: string, work: () => Promise<T>): Promise<[T, Waits]> {
  const s = await sampleWaits(url, db);
  try {
    const result = await work();
    return [result, await s.stop()];
  } finally {
    await s.stop();
  }
}
