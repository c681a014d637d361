/**
 * The history search's text index is written after the commit that makes a command, not in it (bench row 4:
 * indexing inline cost ~0.1 ms and several pages per durable submission). What must still hold: a search
 * finds every command committed before it, a decision's new text included, whether or not the background
 * pass has run; the background pass empties the queue on its own, in bounded transactions; a search that
 * cannot write the index still answers. (A file of the version before: search.test.ts.)
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Command } from '../../core/index.js';
import { SqliteAudit } from './audit.js';
import { SqliteCommands } from './commands.js';
import { searchQuery } from './search.js';
import { SEARCH_PASS_ROWS, SearchIndex } from './search-index.js';
import { Store } from './store.js';

const at = '2026-12-07T10:00:00.000Z';
const audit = { at, actor: { kind: 'client' as const, name: 'x' }, action: 'submit' as const };

function command(id: string, word: string): Command {
  return {
    id,
    version: 1,
    tool: 'run_command_wait' as Command['tool'],
    command: 'mark',
    args: { word },
    display: ['mark', word],
    client: 'local',
    created_at: at,
    review_expires_at: at,
    phase: { state: 'awaiting_review' },
  } as Command;
}

function fresh(): string {
  return join(mkdtempSync(join(tmpdir(), 'ogf-search-index-')), 'broker.db');
}

/** What the file holds: the rows the FTS table indexed, and the seqs still queued for it. */
function look(path: string): { indexed: number; queued: number } {
  const db = new Database(path, { readonly: true });
  try {
    const n = (sql: string) => (db.prepare(sql).pluck().get() as number) ?? 0;
    return {
      indexed: n('SELECT count(*) FROM commands_search'),
      queued: n('SELECT count(*) FROM commands_search_todo'),
    };
  } finally {
    db.close();
  }
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

describe('[c14.search] the text index, written after the commit', () => {
  it('a submit queues its row; a search indexes what is queued first, decisions included', () => {
    const path = fresh();
    // No background pass in this test: only the search brings the index up to date.
    const store = new Store(path, { searchIndexMs: 0 });
    store.insert(command('c_aaaaaaaa', 'zebra'), audit);
    expect(look(path)).toEqual({ indexed: 0, queued: 1 });
    expect(store.search({ text: 'zebr' }, 10).map((c) => c.id)).toEqual(['c_aaaaaaaa']);
    expect(look(path)).toEqual({ indexed: 1, queued: 0 });
    const a = store.get('c_aaaaaaaa')!;
    store.update(
      {
        ...a,
        version: 2,
        phase: { state: 'denied', reason: 'OwnerDenied', detail: 'no', decided_at: at, decided_by: 'bob' },
      },
      { ...audit, action: 'deny' },
    );
    expect(look(path)).toEqual({ indexed: 1, queued: 1 });
    expect(store.search({ text: 'bob' }, 10).map((c) => c.id)).toEqual(['c_aaaaaaaa']);
    // Re-indexed, not indexed twice.
    expect(look(path)).toEqual({ indexed: 1, queued: 0 });
    expect(store.search({ text: 'zebra' }, 10).map((c) => c.id)).toEqual(['c_aaaaaaaa']);
    store.close();
  });

  it('a search without a text term reads, and writes nothing (a policy_test replay pages through it)', () => {
    const path = fresh();
    const store = new Store(path, { searchIndexMs: 0 });
    store.insert(command('c_aaaaaaaa', 'zebra'), audit);
    expect(store.search({ command: 'mark' }, 10).map((c) => c.id)).toEqual(['c_aaaaaaaa']);
    expect(store.search({}, 10).map((c) => c.id)).toEqual(['c_aaaaaaaa']);
    expect(store.search({ text: '  ' }, 10).map((c) => c.id)).toEqual(['c_aaaaaaaa']);
    expect(look(path)).toEqual({ indexed: 0, queued: 1 });
    store.close();
  });

  it('the background pass empties the queue by itself, in bounded transactions', async () => {
    const path = fresh();
    const store = new Store(path, { searchIndexMs: 10 });
    for (let i = 0; i < 700; i++) store.insert(command(`c_${String(i).padStart(8, '0')}`, `w${i}`), audit);
    await until(() => look(path).queued === 0);
    expect(look(path).indexed).toBe(700);
    store.close();
  });

  it('one pass indexes the oldest rows it may and says whether more are queued', () => {
    const path = fresh();
    const store = new Store(path, { searchIndexMs: 0 });
    for (let i = 0; i < 300; i++) store.insert(command(`c_${String(i).padStart(8, '0')}`, `w${i}`), audit);
    const index = new SearchIndex(new Database(path), (fn) => fn());
    expect(index.catchUp(SEARCH_PASS_ROWS)).toBe(true);
    expect(look(path)).toEqual({ indexed: SEARCH_PASS_ROWS, queued: 300 - SEARCH_PASS_ROWS });
    expect(index.catchUp(SEARCH_PASS_ROWS)).toBe(false);
    expect(look(path)).toEqual({ indexed: 300, queued: 0 });
    expect(index.catchUp(SEARCH_PASS_ROWS)).toBe(false);
    store.close();
  });

  it('a search that cannot write the index (a full disk) still finds what is queued, read-only', () => {
    const path = fresh();
    new Store(path, { searchIndexMs: 0 }).close();
    const db = new Database(path);
    let full = false;
    // The transactions of this connection fail as SQLite's do on a full disk, once `full` is set.
    const commands = new SqliteCommands(db, new SqliteAudit(db), (fn) => {
      if (full) throw new Error('SQLITE_FULL: database or disk is full');
      db.transaction(fn).immediate();
    });
    commands.insert(command('c_aaaaaaaa', 'zebra'), audit);
    expect(commands.search({ text: 'zebr' }, 10).map((c) => c.id)).toEqual(['c_aaaaaaaa']);
    commands.insert(command('c_bbbbbbbb', 'Quokka'), audit);
    commands.insert(command('c_cccccccc', 'ox'), audit);
    full = true;
    const ids = (text: string) => commands.search({ text }, 10).map((c) => c.id);
    expect(look(path)).toEqual({ indexed: 1, queued: 2 });
    expect(ids('quokka')).toEqual(['c_bbbbbbbb']);
    expect(ids('ox')).toEqual(['c_cccccccc']);
    expect(ids('zebra')).toEqual(['c_aaaaaaaa']);
    expect(ids('mark')).toEqual(['c_cccccccc', 'c_bbbbbbbb', 'c_aaaaaaaa']);
    // A decision queued for re-indexing is found by its new text, not its old one.
    const a = commands.get('c_aaaaaaaa')!;
    full = false;
    commands.update(
      {
        ...a,
        version: 2,
        phase: { state: 'denied', reason: 'OwnerDenied', detail: 'no', decided_at: at, decided_by: 'carol' },
      },
      { ...audit, action: 'deny' },
    );
    full = true;
    expect(ids('carol')).toEqual(['c_aaaaaaaa']);
    expect(look(path).queued).toBe(3);
    // Still through the index and the queue's rowids, never a scan of every command.
    const { sql, params } = searchQuery({ text: 'abc' }, undefined, true);
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params, 10) as Array<{ detail: string }>)
      .map((r) => r.detail)
      .join(' | ');
    expect(plan).toMatch(/VIRTUAL TABLE INDEX/);
    expect(plan).not.toMatch(/SCAN commands(?:\s|$)/);
    db.close();
  });
});
