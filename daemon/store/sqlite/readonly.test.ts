/**
 * broker.db's reader of seq ranges (`audit verify`'s first pass, bench row 15) hands over exactly the rows
 * readAuditChain reads, text for text, range by range; a range it cannot hand over exactly (a NULL, a
 * non-text value, a missing or extra seq) it refuses whole, and an entry holding a newline shows as one
 * piece too many — never anything shifted, merged or skipped, so what the walk accepts, verify.ts over the
 * whole record reads the same.
 */
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openAuditChain, readAuditChain } from './readonly.js';
import { Store } from './store.js';

const actor = { kind: 'owner' as const, name: 'owner' };

/** A broker.db of `n` chained entries written by the store. */
async function record(n: number): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'ogf-walk-')), 'broker.db');
  const store = new Store(path);
  for (let i = 0; i < n; i += 500) {
    await store.transaction(() =>
      Promise.all(
        Array.from({ length: Math.min(500, n - i) }, (_, k) =>
          store.audits.append({
            at: '2026-12-02T10:00:00.000Z',
            actor,
            action: 'owner_login',
            detail: { k: i + k },
          }),
        ),
      ).then(() => undefined),
    );
  }
  store.close();
  return path;
}

/** A copy of `path` changed as an attacker would: the triggers dropped, then `sql`. */
function tampered(path: string, sql: string): string {
  const copy = join(mkdtempSync(join(tmpdir(), 'ogf-walk-')), 'broker.db');
  copyFileSync(path, copy);
  const db = new Database(copy);
  db.exec('DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;');
  db.exec(sql);
  db.close();
  return copy;
}

/** The rows the reader hands over, 1,000 seqs a range, as the walk splits them; `stopped` at the first refused. */
function walked(path: string): { pairs: Array<[string | null, string | null]>; stopped: boolean } {
  const pairs: Array<[string | null, string | null]> = [];
  const reader = openAuditChain(path)!;
  try {
    const last = reader.last();
    if (last === undefined) return { pairs, stopped: true };
    for (let after = 0; after < last; after += 1000) {
      const upTo = Math.min(after + 1000, last);
      const read = reader.rows(after, upTo);
      const pieces = read?.entries.toString('utf8').split('\n');
      if (read === undefined || pieces!.length !== upTo - after) return { pairs, stopped: true };
      pieces!.forEach((p, i) => {
        pairs.push([p, read.hashes.slice(64 * i, 64 * i + 64)]);
      });
    }
    return { pairs, stopped: false };
  } finally {
    reader.close();
  }
}

const rowsOf = (path: string) => readAuditChain(path)!.rows.map((r) => [r.entry, r.hash]);

describe('[c14.verify] the walk of broker.db', () => {
  it('hands over every row as readAuditChain reads it, across chunks, and stops at one it cannot', async () => {
    const path = await record(2500);
    const whole = walked(path);
    expect(whole.stopped).toBe(false);
    expect(whole.pairs).toEqual(rowsOf(path));

    const attacks: Array<[string, string]> = [
      [
        'a newline inside an entry (still JSON)',
        `UPDATE audit SET entry = replace(entry, ',"data"', ',' || char(10) || '"data"') WHERE seq = 1500`,
      ],
      [
        'two rows merged into one with a newline',
        `UPDATE audit SET entry = entry || char(10) || '{}' WHERE seq = 1200; UPDATE audit SET entry = NULL WHERE seq = 1201`,
      ],
      ['a NULL hash', 'UPDATE audit SET hash = NULL WHERE seq = 2001'],
      ['an entry stored as a blob', 'UPDATE audit SET entry = CAST(entry AS BLOB) WHERE seq = 999'],
      ['an empty entry', "UPDATE audit SET entry = '' WHERE seq = 2500"],
      ['a hash one character short', 'UPDATE audit SET hash = substr(hash, 2) WHERE seq = 10'],
      [
        'a NUL character inside an entry',
        "UPDATE audit SET entry = entry || char(0) || 'x' WHERE seq = 1000",
      ],
      ['a row deleted', 'DELETE FROM audit WHERE seq = 1777'],
      [
        'a row added below seq 1',
        'INSERT INTO audit (seq, at, actor_kind, actor, action, entry, hash) SELECT 0, at, actor_kind, actor, action, entry, hash FROM audit WHERE seq = 1',
      ],
      [
        'a row added far past the last',
        'INSERT INTO audit (seq, at, actor_kind, actor, action, entry, hash) SELECT 1000000000000, at, actor_kind, actor, action, entry, hash FROM audit WHERE seq = 2500',
      ],
    ];
    for (const [name, sql] of attacks) {
      const copy = tampered(path, sql);
      const rows = rowsOf(copy);
      const w = walked(copy);
      // What was handed over is exactly the rows before, text for text; the odd row never passes changed.
      expect(rows.slice(0, w.pairs.length), name).toEqual(w.pairs);
      // An empty entry or one holding a NUL is handed over as it is (JSON.parse and the hash refuse it).
      const exact = name.startsWith('a NUL character') || name.startsWith('an empty');
      expect(w.stopped, name).toBe(!exact);
      if (exact) expect(w.pairs, name).toEqual(rows);
    }
  });
});
