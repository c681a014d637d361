/**
 * The harness itself (test/helpers/postgres.ts): a real PostgreSQL 15 starts in a temp dir on a free port,
 * gives each suite a fresh database, survives an immediate stop and a start with its data, and goes away.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Postgres, startPostgres } from './helpers/postgres.js';

let pg: Postgres;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  const dir = pg.dir;
  await pg.destroy();
  // Nothing left behind: the data dir, the socket and the log go with it.
  expect(existsSync(dir)).toBe(false);
});

describe('a real PostgreSQL for the tests', () => {
  it('runs version 15 or newer on 127.0.0.1, a fresh database per call, data kept across a crash and a start', async () => {
    const a = await pg.createDatabase();
    const b = await pg.createDatabase();
    expect(a).not.toBe(b);
    expect(a).toMatch(new RegExp(`^postgres://postgres@127\\.0\\.0\\.1:${pg.port}/`));
    const db = a.split('/').pop()!;
    expect(Number(await pg.sql(db, 'SHOW server_version_num'))).toBeGreaterThanOrEqual(150000);
    await pg.sql(db, 'CREATE TABLE t (x int); INSERT INTO t VALUES (42)');
    await pg.stop('immediate');
    expect(pg.running()).toBe(false);
    await expect(pg.sql(db, 'SELECT 1')).rejects.toThrow();
    await pg.start();
    expect(await pg.sql(db, 'SELECT x FROM t')).toBe('42');
  });
});
