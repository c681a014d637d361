/**
 * The audit chain in a real broker.db (contract 14): appends chain in order, an older file's entries are
 * chained at the first start of this version (in one transaction), and a chained row can be neither
 * changed nor deleted through SQLite while the triggers stand.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from './schema.js';
import { Store } from './store.js';

/** The chain as an outsider recomputes it: seq from 1, prev links, SHA-256 of the RFC 8785 JSON. */
function recompute(path: string): Array<Record<string, unknown>> {
  const db = new Database(path, { readonly: true });
  const rows = db.prepare('SELECT seq, entry, hash FROM audit ORDER BY seq').all() as Array<{
    seq: number;
    entry: string;
    hash: string;
  }>;
  db.close();
  let prev = '0'.repeat(64);
  return rows.map((r, i) => {
    const e = JSON.parse(r.entry) as Record<string, unknown>;
    expect(e.seq).toBe(i + 1);
    expect(e.prev).toBe(prev);
    expect(createHash('sha256').update(canonicalize(e)!).digest('hex')).toBe(r.hash);
    prev = r.hash;
    return { ...e, hash: r.hash };
  });
}

function tmpDb(): string {
  return join(mkdtempSync(join(tmpdir(), 'ogf-audit-')), 'broker.db');
}

describe('[c14.chain] the hash chain in broker.db', () => {
  it('chains every append in order, with the contract’s events and actors', () => {
    const path = tmpDb();
    const store = new Store(path);
    const at = '2026-12-01T10:00:00.000Z';
    store.audit({
      at,
      actor: { kind: 'client', name: 'local' },
      action: 'cue_refused',
      detail: { reason: 'x' },
    });
    store.audit({
      at,
      actor: { kind: 'owner', name: 'owner:browser' },
      action: 'owner_login_refused',
      detail: {},
    });
    store.audit({
      at,
      actor: { kind: 'daemon', name: 'daemon' },
      action: 'grant_used',
      detail: { command_id: 'c_1', grant_id: 'g_1' },
    });
    store.setClientTokenHash('bot', 'a'.repeat(64), at, { kind: 'owner', name: 'owner' });
    store.setClientTokenHash('bot', 'b'.repeat(64), at, { kind: 'owner', name: 'owner' });
    store.close();
    const chain = recompute(path);
    expect(chain.map((e) => [e.event, e.actor, e.command_id])).toEqual([
      ['cue_refused', 'client:local', undefined],
      ['owner_login_refused', 'anonymous', undefined],
      ['grant_used', 'daemon', 'c_1'],
      ['token_created', 'owner', undefined],
      ['token_rotated', 'owner', undefined],
    ]);
  });

  it('chains an older file’s entries at the first start, then keeps appending after them', () => {
    const path = tmpDb();
    const old = new Database(path);
    for (const m of MIGRATIONS.slice(0, 5)) old.exec(m);
    old.pragma('user_version = 5');
    const ins = old.prepare(
      'INSERT INTO audit (at, actor_kind, actor, action, command_id, version, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    ins.run(
      '2026-11-01T00:00:00.000Z',
      'client',
      'local',
      'submit',
      'c_old',
      1,
      '{"state":"awaiting_review","command":"echo"}',
    );
    ins.run(
      '2026-11-01T00:00:01.000Z',
      'owner',
      'owner',
      'approve',
      'c_old',
      2,
      '{"state":"approved","command":"echo"}',
    );
    ins.run(
      '2026-11-01T00:00:02.000Z',
      'daemon',
      'daemon',
      'mcp_token_set',
      null,
      null,
      '{"client":"local"}',
    );
    old.close();
    const store = new Store(path);
    store.audit({
      at: '2026-12-01T00:00:00.000Z',
      actor: { kind: 'owner', name: 'owner' },
      action: 'owner_logout',
      detail: {},
    });
    store.close();
    const chain = recompute(path);
    expect(chain.map((e) => [e.seq, e.event, e.actor])).toEqual([
      [1, 'submit', 'client:local'],
      [2, 'approve', 'owner'],
      [3, 'token_set', 'daemon'],
      [4, 'owner_logout', 'owner'],
    ]);
    expect(chain[1]!.data).toEqual({ state: 'approved', command: 'echo', version: 2 });
  });

  it('refuses to change or delete a chained entry or a checkpoint while the triggers stand', () => {
    const path = tmpDb();
    const store = new Store(path);
    store.audit({
      at: '2026-12-01T00:00:00.000Z',
      actor: { kind: 'owner', name: 'owner' },
      action: 'owner_login',
      detail: {},
    });
    store.close();
    const db = new Database(path);
    expect(() => db.prepare("UPDATE audit SET entry = '{}' WHERE seq = 1").run()).toThrow(/append-only/);
    expect(() => db.prepare('UPDATE audit SET hash = NULL WHERE seq = 1').run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM audit WHERE seq = 1').run()).toThrow(/append-only/);
    db.close();
  });
});
