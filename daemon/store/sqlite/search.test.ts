/**
 * The history search in broker.db (contract 14): answered through indexes — the trigram FTS5 table for
 * text, `commands_state_seq` / `commands_client_seq` for state and client — never by reading every row;
 * text found in the command, arguments, client, justification, decider and notes, in any case; commands
 * written before this version are indexed by the migration.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Command } from '../../core/index.js';
import { MIGRATIONS } from './schema.js';
import { Store } from './store.js';

const at = '2026-12-01T10:00:00.000Z';
const audit = { at, actor: { kind: 'client' as const, name: 'x' }, action: 'submit' as const };

function command(id: string, client: string, word: string, extra: Partial<Command> = {}): Command {
  return {
    id,
    version: 1,
    tool: 'run_command_wait' as Command['tool'],
    command: 'mark',
    args: { word },
    display: ['mark', word],
    client,
    created_at: at,
    review_expires_at: at,
    phase: { state: 'awaiting_review' },
    ...extra,
  } as Command;
}

describe('[c14.search] the history search', () => {
  it('finds text anywhere it is promised, through the indexes', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ogf-search-')), 'broker.db');
    // A file of the version before the text index's queue, with one command: the migrations index it.
    const queue = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE IF NOT EXISTS commands_search_todo'));
    expect(queue).toBeGreaterThan(0);
    const old = new Database(path);
    for (const m of MIGRATIONS.slice(0, queue)) old.exec(m);
    old.pragma(`user_version = ${queue}`);
    old
      .prepare(
        'INSERT INTO commands (id, client, state, version, created_at, body) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        'c_oldoldold',
        'legacy',
        'awaiting_review',
        1,
        at,
        JSON.stringify(command('c_oldoldold', 'legacy', 'ancient')),
      );
    old.close();
    const store = new Store(path, { searchIndexMs: 0 });
    // What the old triggers indexed stays indexed; the upgrade queues nothing again (search-index.ts).
    const file = new Database(path, { readonly: true });
    const count = (table: string) => file.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
    expect([count('commands_search'), count('commands_search_todo')]).toEqual([1, 0]);
    file.close();
    store.insert(command('c_aaaaaaaa', 'local', 'Alpha', { justification: 'for the weekly report' }), audit);
    store.insert(command('c_bbbbbbbb', 'bot', 'beta'), audit);
    const b = store.get('c_bbbbbbbb')!;
    store.update(
      {
        ...b,
        version: 2,
        phase: {
          state: 'denied',
          reason: 'OwnerDenied',
          detail: 'no',
          decided_at: at,
          decided_by: 'alice',
          owner_note: 'Not on Fridays',
        },
      },
      { ...audit, action: 'deny' },
    );
    const ids = (f: Parameters<Store['search']>[0]) => store.search(f, 10).map((c) => c.id);
    expect(ids({ text: 'ANCIENT' })).toEqual(['c_oldoldold']);
    expect(ids({ text: 'alph' })).toEqual(['c_aaaaaaaa']);
    expect(ids({ text: 'weekly' })).toEqual(['c_aaaaaaaa']);
    expect(ids({ text: 'fridays' })).toEqual(['c_bbbbbbbb']);
    expect(ids({ text: 'alice' })).toEqual(['c_bbbbbbbb']);
    expect(ids({ text: 'bo' })).toEqual(['c_bbbbbbbb']); // shorter than a trigram: still SQLite's work
    expect(ids({ text: '"quoted' })).toEqual([]);
    expect(ids({ state: 'denied' })).toEqual(['c_bbbbbbbb']);
    expect(ids({ client: 'local' })).toEqual(['c_aaaaaaaa']);
    expect(ids({ since: '2026-12-02T00:00:00.000Z' })).toEqual([]);
    expect(ids({ text: 'mark', until: at })).toEqual(['c_bbbbbbbb', 'c_aaaaaaaa', 'c_oldoldold']);
    for (const plan of [
      store.searchPlan({ text: 'abc' }),
      store.searchPlan({ state: 'denied' }),
      store.searchPlan({ client: 'local' }),
    ]) {
      expect(plan.join(' | ')).not.toMatch(/SCAN commands(?:\s|$)/);
    }
    expect(store.searchPlan({ text: 'abc' }).join(' | ')).toMatch(/VIRTUAL TABLE INDEX/);
    expect(store.searchPlan({ state: 'denied' }).join(' | ')).toMatch(/commands_state_seq/);
    expect(store.searchPlan({ client: 'local' }).join(' | ')).toMatch(/commands_client_seq/);
    store.close();
  });
});
