/**
 * The one-pass walk `audit verify` makes first (walk.ts) must be sound: whenever it finds a record whole,
 * verify.ts finds it whole too, so every tampered record reaches verify.ts for the first bad seq and why.
 * Attacks on a real signed export (every single-byte change, a swap, a cut, a forged checkpoint) and on
 * broker.db's rows as the walk reads them.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type AuditEntry,
  type ChainEntry,
  type Checkpoint,
  chainEntry,
  checkpointPayload,
  GENESIS_HASH,
  sealEntry,
} from '../core/index.js';
import { toJsonl } from './export.js';
import { loadOrCreateAuditKey, publicKeyDer, signerOf } from './keys.js';
import { chainFromExport } from './sources.js';
import { verifyChain } from './verify.js';
import { ChainWalk, walkExport } from './walk.js';

const at = '2026-12-02T08:00:00.000Z';
const entries: AuditEntry[] = [
  {
    at,
    actor: { kind: 'client', name: 'agent' },
    action: 'submit',
    command_id: 'c_walk0001',
    detail: { args_sha256: 'a'.repeat(64) },
  },
  { at, actor: { kind: 'owner', name: 'owner' }, action: 'approve', command_id: 'c_walk0001', version: 2 },
  { at, actor: { kind: 'daemon', name: 'daemon' }, action: 'start', command_id: 'c_walk0001', version: 3 },
  { at, actor: { kind: 'daemon', name: 'daemon' }, action: 'finish', command_id: 'c_walk0001', version: 4 },
  {
    at,
    actor: { kind: 'owner', name: 'owner' },
    action: 'owner_login',
    detail: { note: 'a "quoted" ,"hash":"x' },
  },
];

function record() {
  const key = loadOrCreateAuditKey(mkdtempSync(join(tmpdir(), 'ogf-walk-')));
  const rows: Array<{ text: string; hash: string }> = [];
  const chain: ChainEntry[] = [];
  let prev = GENESIS_HASH;
  entries.forEach((e, i) => {
    const unsealed = chainEntry(e, i + 1, prev);
    const { text, hash } = sealEntry(unsealed);
    rows.push({ text, hash });
    chain.push({ ...unsealed, hash });
    prev = hash;
  });
  const last = chain.at(-1)!;
  const payload = { seq: 4, hash: chain[3]!.hash, at: last.at };
  const cp = { ...payload, signature: signerOf(key).sign(checkpointPayload(payload)) };
  return { rows, chain, cp, key, pub: publicKeyDer(key.publicKey) };
}

describe('[S.audit-verify] the one-pass walk of audit verify', () => {
  const { rows, chain, cp, key, pub } = record();
  const text = toJsonl(chain, [cp], pub);

  it('finds a whole record whole, and keeps for the passkey check only the submit naming its arguments', () => {
    const walked = walkExport(text, undefined);
    expect(walked).toMatchObject({ entries: 5, checkpoints: 1 });
    expect(walked!.kept.entries).toHaveLength(1);
    const walk = new ChainWalk();
    for (const r of rows) expect(walk.row(r.text, r.hash)).toBe(true);
    expect(walk.finish([cp], key.publicKey)).toMatchObject({ entries: 5, checkpoints: 1 });
  });

  it('gives every single-byte change of the export to verify.ts, which finds it', () => {
    for (let i = 0; i < text.length; i++) {
      if (text[i] === '\n' && i === text.length - 1) continue;
      for (const c of ['0', 'f', '"', ' ', 'x']) {
        if (text[i] === c) continue;
        const changed = text.slice(0, i) + c + text.slice(i + 1);
        expect(walkExport(changed, undefined), `byte ${i} → ${c}`).toBeUndefined();
        const read = chainFromExport(changed);
        expect(read.bad !== undefined || !verifyChain(read.input).ok, `byte ${i} → ${c}`).toBe(true);
      }
    }
  });

  it('gives up on a swapped pair, a deleted row, an unchained row, a cut tail and a forged checkpoint', () => {
    const walkOf = (rs: Array<{ text: string | null; hash: string | null }>, cps: Checkpoint[]) => {
      const walk = new ChainWalk();
      return rs.every((r) => walk.row(r.text, r.hash)) ? walk.finish(cps, key.publicKey) : undefined;
    };
    expect(walkOf([rows[1]!, rows[0]!, ...rows.slice(2)], [cp])).toBeUndefined();
    expect(walkOf([rows[0]!, ...rows.slice(2)], [cp])).toBeUndefined();
    expect(walkOf([...rows.slice(0, 4), { text: rows[4]!.text, hash: null }], [cp])).toBeUndefined();
    expect(walkOf(rows.slice(0, 3), [cp])).toBeUndefined(); // the checkpoint covers seq 4
    expect(walkOf(rows, [{ ...cp, hash: rows[4]!.hash }])).toBeUndefined();
    // A key given: a checkpoint that names another key is not taken on its own word.
    const other = loadOrCreateAuditKey(mkdtempSync(join(tmpdir(), 'ogf-walk-')));
    expect(walkExport(text, other.publicKey)).toBeUndefined();
  });
});
