/**
 * Per-client reads stay per client (issue 19 finding 3): tasks/list reads one client's tasks through the
 * index `commands_client_tasks`, a bounded page at a time; `history` stops at a size; the migration marks
 * the tasks an older file already holds. A real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../store/sqlite/index.js';
import { MIGRATIONS } from '../../store/sqlite/schema.js';
import type { Command } from '../model/lifecycle.js';

let dir: string;
let path: string;
let store: Store;
let n = 0;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-store-tasks-'));
  path = join(dir, 'broker.db');
  store = new Store(path);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function command(client: string, task: boolean, big = 0): Command {
  n++;
  const c: Command = {
    id: `c_${String(n).padStart(8, '0')}`,
    version: 1,
    tool: 'run_command_wait',
    command: 'echo',
    args: big > 0 ? { text: 'x'.repeat(big) } : {},
    display: ['echo'],
    client,
    created_at: new Date(Date.UTC(2026, 10, 30, 10, 0, n)).toISOString(),
    review_expires_at: '2026-11-30T11:00:00.000Z',
    phase: { state: 'awaiting_review' },
  };
  if (task) c.task = { ttl_ms: 60_000 };
  return c;
}

function put(c: Command): Command {
  store.insert(c, { at: c.created_at, actor: { kind: 'client', name: c.client }, action: 'submit' });
  return c;
}

describe("[c10.tasks-list-bounded] one client's tasks, by index", () => {
  it('the tasks/list query searches commands_client_tasks, never scans the table', () => {
    const plan = store.tasksPlan().join('\n');
    expect(plan).toMatch(/SEARCH commands USING INDEX commands_client_tasks \(client=\? AND seq<\?\)/);
    expect(plan).not.toMatch(/SCAN/);
  });

  it("returns only this client's tasks, newest first, a page at a time, and refuses a foreign cursor", () => {
    const mine: Command[] = [];
    for (let i = 0; i < 7; i++) {
      put(command('evil', true, 100));
      put(command('evil', false));
      mine.push(put(command('me', true)));
      put(command('me', false));
    }
    expect(store.tasksOf('nobody', 50, 1 << 20)).toEqual({ commands: [], more: false });
    const first = store.tasksOf('me', 3, 1 << 20)!;
    expect(first.commands.map((c) => c.id)).toEqual(
      mine
        .slice(-3)
        .reverse()
        .map((c) => c.id),
    );
    expect(first.more).toBe(true);
    const rest = store.tasksOf('me', 50, 1 << 20, first.commands.at(-1)!.id)!;
    expect(rest.commands.map((c) => c.id)).toEqual(
      mine
        .slice(0, 4)
        .reverse()
        .map((c) => c.id),
    );
    expect(rest.more).toBe(false);
    // A cursor that is not one of this client's tasks: undefined (the edge refuses it).
    expect(store.tasksOf('me', 50, 1 << 20, 'c_nonexistent')).toBeUndefined();
    const theirs = store.tasksOf('evil', 1, 1 << 20)!.commands[0]!.id;
    expect(store.tasksOf('me', 50, 1 << 20, theirs)).toBeUndefined();
  });

  it('stops a page once the records read reach the size bound, always giving at least one', () => {
    const big = [
      put(command('me', true, 1000)),
      put(command('me', true, 1000)),
      put(command('me', true, 1000)),
    ];
    const one = store.tasksOf('me', 50, 10)!;
    expect(one.commands.map((c) => c.id)).toEqual([big[2]!.id]);
    expect(one.more).toBe(true);
    const two = store.tasksOf('me', 50, 3000)!;
    expect(two.commands).toHaveLength(2);
    expect(two.more).toBe(true);
    expect(store.tasksOf('me', 50, 3000, two.commands[1]!.id)).toMatchObject({ more: false });
  });

  it('history stops at its size bound too, and a time cursor reads an index', () => {
    const rows = Array.from({ length: 5 }, () => put(command('evil', false, 1000)));
    expect(store.history(500, undefined, 3000)).toHaveLength(2);
    expect(store.history(500)).toHaveLength(5);
    expect(store.history(500, rows[2]!.created_at).map((c) => c.id)).toEqual([rows[1]!.id, rows[0]!.id]);
    // The query `history` runs (store/sqlite/commands.ts), not a copy of it.
    expect(store.historyPlan().join('\n')).toMatch(/USING INDEX commands_created/);
  });

  it('the migration marks the tasks an older broker.db already holds', () => {
    const old = put(command('me', true));
    put(command('me', false));
    const rows = new Database(path, { readonly: true })
      .prepare(
        'SELECT seq, id, client, request_id, state, version, created_at, body FROM commands ORDER BY seq',
      )
      .all();
    store.close();
    // A file as version 3 left it, built by version 3's own migrations (no `task` column, no new indexes),
    // holding the same rows: every later migration then runs on it at open.
    const olderPath = join(dir, 'older.db');
    const db = new Database(olderPath);
    for (const m of MIGRATIONS.slice(0, 3)) db.exec(m);
    db.pragma('user_version = 3');
    const insert = db.prepare(
      'INSERT INTO commands (seq, id, client, request_id, state, version, created_at, body) VALUES (@seq, @id, @client, @request_id, @state, @version, @created_at, @body)',
    );
    for (const row of rows) insert.run(row);
    db.close();
    store = new Store(olderPath);
    expect(store.tasksOf('me', 50, 1 << 20)!.commands.map((c) => c.id)).toEqual([old.id]);
    expect(store.tasksPlan().join('\n')).toMatch(/commands_client_tasks/);
  });
});
