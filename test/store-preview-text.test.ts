/**
 * Contract 12 (v4) for commands that ended before this version: the migration removes their preview text
 * from the store (broker.db and PostgreSQL alike), while a command still awaiting review keeps the text its
 * owners decide on. Each store is given a database as the previous version left it (the newest migration not
 * applied yet, rows written then), and opened by this build.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../daemon/core/index.js';
import { PostgresStore } from '../daemon/store/postgres/index.js';
import { MIGRATIONS as PG_MIGRATIONS } from '../daemon/store/postgres/schema.js';
import { Store } from '../daemon/store/sqlite/index.js';
import { MIGRATIONS } from '../daemon/store/sqlite/schema.js';
import { type Postgres, startPostgres } from './helpers/postgres.js';

const at = '2026-11-30T10:00:00.000Z';
const diff = '--- /n/a.env\n+++ /n/a.env\n@@ -1,1 +1,1 @@\n-TOKEN=old-secret\n+TOKEN=x\n';

function command(id: string, ended: boolean): Command {
  return {
    id,
    tool: 'upstream',
    command: 'notes__write_file',
    display: ['notes', 'write_file'],
    args: { path: '/n/a.env', content: 'TOKEN=x\n' },
    client: 'local',
    created_at: at,
    review_expires_at: at,
    version: ended ? 2 : 1,
    phase: ended
      ? { state: 'denied', reason: 'OwnerDenied', detail: 'denied', decided_at: at, decided_by: 'owner' }
      : { state: 'awaiting_review' },
    preview: { kind: 'file_diff', status: 'ready', diff, computed_at: at },
  } as Command;
}

const rows = [command('c_endedended', true), command('c_waitingwait', false)];

function expectMigrated(ended: Command | undefined, waiting: Command | undefined): void {
  expect(ended?.preview).toEqual({ kind: 'file_diff', status: 'ready', computed_at: at });
  expect(JSON.stringify(ended)).not.toContain('old-secret');
  expect(waiting?.preview?.diff).toBe(diff);
}

let pg: Postgres | undefined;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.destroy();
});

describe('[c12.text-removed] the migration removes the preview text of commands that already ended', () => {
  it('[c12.text-removed] broker.db', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ogf-preview-text-')), 'broker.db');
    const old = new Database(path);
    // The file as it was just before the migration that removes the text (later ones run after it).
    const before = MIGRATIONS.findIndex((m) => m.includes("'$.preview.diff'"));
    for (const m of MIGRATIONS.slice(0, before)) old.exec(m);
    old.pragma(`user_version = ${before}`);
    const insert = old.prepare(
      'INSERT INTO commands (id, client, state, version, created_at, body) VALUES (?, ?, ?, ?, ?, ?)',
    );
    for (const c of rows) insert.run(c.id, c.client, c.phase.state, c.version, at, JSON.stringify(c));
    old.close();
    const store = new Store(path);
    try {
      expectMigrated(store.get('c_endedended'), store.get('c_waitingwait'));
    } finally {
      store.close();
    }
  });

  it('[c12.text-removed] PostgreSQL', async () => {
    const url = await pg!.createDatabase();
    const db = url.split('/').pop()!;
    // The newest schema, then set back to just before the text's removal, with rows written as then.
    const removal = PG_MIGRATIONS.findIndex((m) => m.includes('{preview,diff}')) + 1;
    const first = await PostgresStore.open(url, { max: 2 });
    first.close();
    await first.closed();
    const values = rows
      .map(
        (c) =>
          `('${c.id}', '${c.client}', '${c.phase.state}', ${c.version}, '${at}', '${JSON.stringify(c).replaceAll("'", "''")}')`,
      )
      .join(', ');
    await pg!.sql(
      db,
      `INSERT INTO commands (id, client, state, version, created_at, body) VALUES ${values};
       DELETE FROM ogf_broker_migrations WHERE version >= ${removal};`,
    );
    const store = await PostgresStore.open(url, { max: 2 });
    try {
      expectMigrated(await store.commands.get('c_endedended'), await store.commands.get('c_waitingwait'));
    } finally {
      store.close();
      await store.closed();
    }
  });
});
