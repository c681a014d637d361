/**
 * The suites' PostgreSQL (contract 16) is the bench's (`bench/lib/postgres.ts`, rows 16–18 start the same
 * server): one helper, so tests and bench run the same Debian PostgreSQL the same way.
 */
import { afterAll, beforeAll } from 'vitest';
import { type Postgres, startPostgres } from '../../bench/lib/postgres.js';
import type { RunningDaemon } from './daemon.js';

export * from '../../bench/lib/postgres.js';

/**
 * One PostgreSQL for the test file that calls this (at its top level), started before its tests and
 * destroyed after them, with the daemons the file started on it (`daemons`) stopped first.
 */
export function postgresForFile(): { server(): Postgres; daemons: RunningDaemon[] } {
  let pg: Postgres | undefined;
  const daemons: RunningDaemon[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    for (const d of daemons) await d.stop();
    await pg?.destroy();
  });
  return {
    server: () => {
      if (pg === undefined) throw new Error('PostgreSQL is not started yet (use it inside a test)');
      return pg;
    },
    daemons,
  };
}
