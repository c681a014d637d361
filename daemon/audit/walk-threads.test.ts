/**
 * `audit verify`'s walk over two threads (walk-threads.ts) on a real broker.db the store wrote (signed
 * checkpoints every 1,000 entries) and on its export: the worker thread is the built one
 * (dist/…/audit/walk-worker.js: `npm test` builds first), sharing the parts alternately so that both
 * threads surely walk. What two threads accept is what one accepts; a part either thread finds off — a row
 * edited, a row added far past the end, a byte of the export changed — stops the walk (the caller then
 * reads the record whole: verify.ts); a worker that cannot start leaves every part to the main thread.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ChainEntry } from '../core/index.js';
import { readAuditChain, Store } from '../store/sqlite/index.js';
import { finishWalk, loadOrCreateAuditKey, publicKeyDer, signerOf, toJsonl } from './index.js';
import { hashAt } from './walk.js';
import { exportFile } from './walk-export.js';
import { type WalkOptions, walkDatabase, walkFile } from './walk-threads.js';

const BUILT_WORKER = new URL('../../dist/daemon/audit/walk-worker.js', import.meta.url);
const N = 3000;

/** A data dir whose broker.db holds N entries of every kind the walk tells apart, and its export. */
async function record() {
  const dir = mkdtempSync(join(tmpdir(), 'ogf-walk2-'));
  const key = loadOrCreateAuditKey(dir);
  const db = join(dir, 'broker.db');
  const store = new Store(db, { signer: signerOf(key) });
  for (let i = 0; i < N; i += 500) {
    await store.transaction(() =>
      Promise.all(
        Array.from({ length: 500 }, (_, k) => {
          const n = i + k;
          const id = `c_walk${Math.floor(n / 3)}`;
          if (n % 3 === 0) {
            return store.audits.append({
              at: '2026-12-02T10:00:00.000Z',
              actor: { kind: 'client', name: 'agent' },
              action: 'submit',
              command_id: id,
              detail: { args_sha256: 'c'.repeat(64), note: 'é ünïcode' },
            });
          }
          return store.audits.append({
            at: '2026-12-02T10:00:00.000Z',
            actor: { kind: 'owner', name: 'owner' },
            action: n % 3 === 1 ? 'approve' : 'deny',
            command_id: id,
            version: 2,
          });
        }),
      ).then(() => undefined),
    );
  }
  store.close();
  const chain = readAuditChain(db)!;
  const entries = chain.rows.map(
    (r) => ({ ...(JSON.parse(r.entry!) as object), hash: r.hash! }) as ChainEntry,
  );
  const exported = join(dir, 'audit.jsonl');
  writeFileSync(exported, toJsonl(entries, chain.checkpoints, publicKeyDer(key.publicKey)));
  return { db, exported, key };
}

const both: WalkOptions = {
  trusted: true,
  worker: BUILT_WORKER,
  sharing: 'alternate',
  minPartsForWorker: 2,
  rows: 100,
  bytes: 4096,
};

describe('[c14.verify] the walk over two threads', async () => {
  const { db, exported, key } = await record();
  /** A copy of the record's broker.db with `sql` run on it, as someone who can write the file would. */
  const tampered = async (sql: string[]): Promise<string> => {
    const copy = join(mkdtempSync(join(tmpdir(), 'ogf-walk2-')), 'broker.db');
    const src = new Database(db, { readonly: true });
    await src.backup(copy);
    src.close();
    const w = new Database(copy);
    for (const statement of sql) w.exec(statement);
    w.close();
    return copy;
  };

  it('joins what both threads walked into the chain one thread walks', async () => {
    const alone = await walkDatabase(db, { trusted: true, worker: null });
    expect(alone?.joined?.entries).toBe(N);
    expect(alone?.threads).toEqual({ here: 6, worker: 0 }); // 500 rows a part
    expect(alone!.checkpoints.map((c) => c.seq)).toEqual([1000, 2000, 3000]);
    const two = await walkDatabase(db, both);
    expect(two?.threads).toEqual({ here: 15, worker: 15 });
    expect(two?.joined?.entries).toBe(N);
    // Each entry's hash, looked up in the pieces the parts handed over, is the one broker.db holds.
    const stored = readAuditChain(db)!.rows.map((r) => r.hash);
    for (const joined of [alone!.joined!, two!.joined!]) {
      expect(Array.from({ length: N }, (_, i) => hashAt(joined, i + 1))).toEqual(stored);
      expect([0, N + 1, 1.5].map((seq) => hashAt(joined, seq))).toEqual([undefined, undefined, undefined]);
    }
    expect(two?.joined?.kept).toEqual(alone?.joined?.kept);
    // The submits (kept for the passkey check) are every third entry, whichever thread read them.
    expect(two!.joined!.kept).toHaveLength(N / 3);
    const opened = exportFile(exported);
    const file = await walkFile(opened, both).finally(() => opened.close());
    expect(file.threads.worker).toBeGreaterThan(0);
    expect(file.joined?.entries).toBe(N);
    expect(Array.from({ length: N }, (_, i) => hashAt(file.joined!, i + 1))).toEqual(stored);
    expect(file.joined?.checkpoints).toHaveLength(3);
    expect(finishWalk(file.joined!, undefined, key.publicKey)).toMatchObject({ entries: N, checkpoints: 3 });
    expect(finishWalk(two!.joined!, two!.checkpoints, key.publicKey)).toMatchObject({
      entries: N,
      checkpoints: 3,
    });
  });

  it('stops at a part the worker walks when a row in it is off', async () => {
    const attacks = [
      "UPDATE audit SET entry = replace(entry, 'owner', 'owneR') WHERE seq = 150", // part 1: the worker's
      "UPDATE audit SET hash = replace(hash, substr(hash, 1, 1), 'x') WHERE seq = 2950",
      'DELETE FROM audit WHERE seq = 1234',
      // Bytes that are not UTF-8 in a pinned row (the reader hands over bytes; the walk decodes them).
      "UPDATE audit SET entry = CAST(replace(CAST(entry AS BLOB), CAST('owner' AS BLOB), X'6F77FF6572') AS TEXT) WHERE seq = 1700",
      'INSERT INTO audit (seq, at, actor_kind, actor, action, entry, hash) SELECT 1000000000000, at, actor_kind, actor, action, entry, hash FROM audit WHERE seq = 5',
    ];
    for (const sql of attacks) {
      const copy = await tampered(['DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;', sql]);
      const walked = await walkDatabase(copy, both);
      expect(walked?.joined, sql).toBeUndefined();
    }
  });

  it('checks the checkpoints ahead, while the worker finishes, with the answers finishWalk then gives', async () => {
    const whole = await walkDatabase(db, { ...both, checkpointKeys: [key.publicKey] });
    expect(finishWalk(whole!.joined!, whole!.checkpoints, key.publicKey)).toMatchObject({ checkpoints: 3 });
    // A checkpoint signed by no one (another one's signature) fails the same, checked ahead or not.
    const copy = await tampered([
      'DROP TRIGGER audit_checkpoints_no_update',
      'UPDATE audit_checkpoints SET signature = (SELECT signature FROM audit_checkpoints WHERE seq = 1000) WHERE seq = 2000',
    ]);
    const other = loadOrCreateAuditKey(mkdtempSync(join(tmpdir(), 'ogf-walk2-')));
    for (const checkpointKeys of [[key.publicKey], [other.publicKey, key.publicKey], undefined]) {
      const forged = await walkDatabase(copy, { ...both, ...(checkpointKeys ? { checkpointKeys } : {}) });
      expect(forged?.joined?.entries).toBe(N);
      expect(finishWalk(forged!.joined!, forged!.checkpoints, key.publicKey)).toBeUndefined();
      // Under a key that signed none of them, none holds, whatever was checked ahead.
      expect(finishWalk(whole!.joined!, whole!.checkpoints, other.publicKey)).toBeUndefined();
    }
  });

  it('finds a byte of the export changed in a part either thread walks, or in a checkpoint', async () => {
    const bytes = readFileSync(exported);
    for (const at of [100, 5000, Math.floor(bytes.length / 2), bytes.length - 2000, bytes.length - 100]) {
      const changed = Buffer.from(bytes);
      changed[at] = changed[at] === 0x30 ? 0x31 : 0x30;
      const walked = await walkFile(changed, both);
      // The walk stops, or its checkpoints (finish) fail: either way verify.ts reads it whole.
      const whole = walked.joined && finishWalk(walked.joined, undefined, key.publicKey);
      expect(whole, `byte ${at}`).toBeUndefined();
    }
  });

  it('walks every part in the main thread when the worker cannot start', async () => {
    const missing = new URL('./no-such-worker.js', BUILT_WORKER);
    const walked = await walkDatabase(db, { ...both, worker: missing });
    expect(walked?.threads).toEqual({ here: 30, worker: 0 });
    expect(walked?.joined?.entries).toBe(N);
  });
});
