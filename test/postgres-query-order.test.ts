/**
 * Contract 16: a transaction's statements on PostgreSQL go to its one client one after another, each sent
 * once the one before it has answered — never a `client.query()` while that client is still executing
 * another. node-postgres 8 queues such calls itself, but warns that this is deprecated (a DeprecationWarning
 * in the daemon's log at its first batch) and that pg 9 will no longer do it; the group commit issues a
 * whole batch's writes in one turn (core/runtime/group-commit.ts), so the store must order them itself.
 *
 * The store runs here on a real PostgreSQL, as the daemon runs it: a batch of audit appends and command
 * writes in one transaction, with checkpoints signed inside it. node-postgres' `Client.prototype.query` is
 * watched (not replaced): each call is counted while its answer is outstanding, per client.
 */
import { rmSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateAuditKey, signerOf } from '../daemon/audit/index.js';
import type { AuditEntry } from '../daemon/core/index.js';
import { PostgresStore } from '../daemon/store/postgres/index.js';
import { makeDataDir } from './helpers/daemon.js';
import { type Postgres, startPostgres } from './helpers/postgres.js';

let server: Postgres;
let url: string;

/** The most calls one client had outstanding at once, over every client, since `watch()`. */
const outstanding = new WeakMap<object, number>();
let most = 0;
const query = pg.Client.prototype.query;
const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);

function watch(): void {
  most = 0;
  pg.Client.prototype.query = function watched(this: pg.Client, ...args: unknown[]) {
    const now = (outstanding.get(this) ?? 0) + 1;
    outstanding.set(this, now);
    most = Math.max(most, now);
    const done = () => outstanding.set(this, (outstanding.get(this) ?? 1) - 1);
    // Callers here use the promise form; a callback-form call would return undefined.
    const r = (query as (...a: unknown[]) => unknown).apply(this, args) as Promise<unknown> | undefined;
    r?.then(done, done);
    return r;
  } as typeof pg.Client.prototype.query;
}

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  process.on('warning', onWarning);
});

afterAll(async () => {
  pg.Client.prototype.query = query;
  process.off('warning', onWarning);
  await server?.destroy();
});

const entry = (i: number): AuditEntry => ({
  at: new Date(Date.UTC(2026, 11, 7, 12, 0, 0, i)).toISOString(),
  actor: { kind: 'owner', name: 'owner' },
  action: 'approve',
  command_id: `c_order${i}`,
  version: 2,
  detail: { state: 'approved', command: 'noop' },
});

describe('a PostgreSQL transaction sends its statements one at a time', () => {
  it('a batch of 1,500 appends (a checkpoint signed inside it) never has two queries outstanding on one client', async () => {
    const keyDir = makeDataDir('ogf-pg-order-');
    const store = await PostgresStore.open(url, { max: 2, signer: signerOf(loadOrCreateAuditKey(keyDir)) });
    const db = url.split('/').pop()!;
    try {
      watch();
      // As the group commit issues a batch: every write in one turn, then awaited together.
      await store.transaction(() =>
        Promise.all(Array.from({ length: 1500 }, (_, k) => store.audits.append(entry(k)))).then(() => {}),
      );
      const tail = await server.sql(db, 'SELECT seq FROM audit_tail');
      expect(Number(tail)).toBeGreaterThanOrEqual(1500);
      // Every 1,000th entry is signed in the same transaction (a statement this layer issues itself).
      const checkpoints = await server.sql(db, 'SELECT count(*) FROM audit_checkpoints');
      expect(Number(checkpoints)).toBeGreaterThanOrEqual(1);
      expect(most).toBe(1);
      expect(warnings.filter((w) => w.includes('client.query()'))).toEqual([]);
    } finally {
      pg.Client.prototype.query = query;
      store.close();
      await store.closed();
      rmSync(keyDir, { recursive: true, force: true });
    }
  });
});
