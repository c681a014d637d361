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
import { ChainWalk, finishWalk, joinParts, type WalkPart, walkExport, walkLines } from './walk.js';

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

function record(list: AuditEntry[] = entries, cpSeq = 4) {
  const key = loadOrCreateAuditKey(mkdtempSync(join(tmpdir(), 'ogf-walk-')));
  const rows: Array<{ text: string; hash: string }> = [];
  const chain: ChainEntry[] = [];
  let prev = GENESIS_HASH;
  list.forEach((e, i) => {
    const unsealed = chainEntry(e, i + 1, prev);
    const { text, hash } = sealEntry(unsealed);
    rows.push({ text, hash });
    chain.push({ ...unsealed, hash });
    prev = hash;
  });
  const last = chain.at(-1)!;
  const payload = { seq: cpSeq, hash: chain[cpSeq - 1]!.hash, at: last.at };
  const cp = { ...payload, signature: signerOf(key).sign(checkpointPayload(payload)) };
  return { rows, chain, cp, key, pub: publicKeyDer(key.publicKey) };
}

describe('[c14.verify] the one-pass walk of audit verify', () => {
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

/**
 * Pinned entries (walk.ts): under a trusted key, an entry at or below the last checkpoint is checked by its
 * bytes' hash and its link alone. Sound only with finish: a record rewritten and re-chained below the
 * checkpoint walks, and its checkpoint then names another hash.
 */
describe('[c14.verify] the walk of entries a checkpoint pins', () => {
  const passkey = { credential_id: 'x', signed: { args: { word: 'w' } } };
  const by = {
    agent: { kind: 'client', name: 'agent' },
    owner: { kind: 'owner', name: 'owner' },
    daemon: { kind: 'daemon', name: 'daemon' },
  } as const;
  /**
   * Seq i + 1: a submit every fourth, its approval (seq 10's holds a passkey), start (seq 23's holds one:
   * no event the daemon writes today, and still read) and finish.
   */
  const many: AuditEntry[] = Array.from({ length: 40 }, (_, i) => {
    const command_id = `c_pin${String(Math.floor(i / 4)).padStart(4, '0')}`;
    const step = (
      [
        { actor: by.agent, action: 'submit', detail: { args_sha256: 'b'.repeat(64) } },
        { actor: by.owner, action: 'approve', version: 2, ...(i === 9 ? { detail: { passkey } } : {}) },
        { actor: by.daemon, action: 'start', version: 3, ...(i === 22 ? { detail: { passkey } } : {}) },
        { actor: by.daemon, action: 'finish', version: 4, detail: { note: 'a "passkey": in a note' } },
      ] as const
    )[i % 4]!;
    return { at, command_id, ...step } as AuditEntry;
  });
  const { rows, chain, cp, key, pub } = record(many, 30);
  const text = toJsonl(chain, [cp], pub);
  /** The export walked as audit verify walks it under the trusted key, or undefined. */
  const pinnedExport = (t: string, part: WalkPart | undefined = walkLines(t, { pinnedUpTo: 30 })) => {
    const joined = part === undefined ? undefined : joinParts([part]);
    return joined === undefined ? undefined : finishWalk(joined, undefined, key.publicKey);
  };
  /** broker.db's rows (one range) walked under the trusted key, or undefined. */
  const pinnedRows = (rs: Array<{ text: string; hash: string }>, cps: Checkpoint[] = [cp]) => {
    const walk = new ChainWalk({ pinnedUpTo: Math.max(0, ...cps.map((c) => c.seq)) });
    const ok = walk.rows(rs.map((r) => r.text).join('\n'), rs.map((r) => r.hash).join(''), rs.length);
    return ok ? walk.finish(cps, key.publicKey) : undefined;
  };

  it('finds the record whole, and still keeps every submit and every entry holding a passkey', () => {
    const fromExport = pinnedExport(text);
    const fromRows = pinnedRows(rows);
    for (const walked of [fromExport, fromRows]) {
      expect(walked).toMatchObject({ entries: 40, checkpoints: 1 });
      const kept = walked!.kept.entries.map((e) => ('value' in e ? e.value.seq : 0));
      expect(kept).toEqual([1, 5, 9, 10, 13, 17, 21, 23, 25, 29, 33, 37]);
    }
  });

  it('[c13.3.recorded] keeps every entry that adds or removes a passkey, and each config_loaded, though pinned', () => {
    const keyed: AuditEntry[] = [
      ...many.slice(0, 5),
      {
        at,
        actor: by.owner,
        action: 'passkey_added',
        detail: { owner: 'owner', credential_id: 'k1', public_key: 'p' },
      },
      { at, actor: by.daemon, action: 'config_loaded', detail: { config_sha256: 'c'.repeat(64) } },
      { at, actor: by.owner, action: 'passkey_removed', detail: { owner: 'owner', credential_id: 'k1' } },
      { at, actor: by.daemon, action: 'passkeys_removed', detail: { owner: 'owner', removed: 1 } },
      { at, actor: by.owner, action: 'owner_login', detail: { note: ',"event":"passkey_added"' } },
      ...many.slice(5, 8),
    ];
    const r = record(keyed, 12);
    const walks = [
      (() => {
        const part = walkLines(toJsonl(r.chain, [r.cp], r.pub), { pinnedUpTo: 12 });
        const joined = part === undefined ? undefined : joinParts([part]);
        return joined === undefined ? undefined : finishWalk(joined, undefined, r.key.publicKey);
      })(),
      (() => {
        const walk = new ChainWalk({ pinnedUpTo: 12 });
        const rs = r.rows;
        const ok = walk.rows(rs.map((x) => x.text).join('\n'), rs.map((x) => x.hash).join(''), rs.length);
        return ok ? walk.finish([r.cp], r.key.publicKey) : undefined;
      })(),
    ];
    for (const walked of walks) {
      expect(walked).toMatchObject({ entries: 13, checkpoints: 1 });
      const kept = walked!.kept.entries.map((e) => ('value' in e ? e.value.seq : 0));
      // The submits (1, 5) and the key history (6–9); not the login whose note only reads like one (10).
      expect(kept).toEqual([1, 5, 6, 7, 8, 9]);
    }
  });

  it('gives every single-byte change of the export to verify.ts, which finds it', () => {
    const lines = text.split('\n');
    // Every byte of three lines the checkpoint pins (a plain one, the approval holding a passkey, the
    // checkpoint's own entry), one after it, and the checkpoint line.
    for (const n of [2, 9, 29, 33, 40]) {
      const from = lines.slice(0, n).join('\n').length + (n > 0 ? 1 : 0);
      for (let i = from; i < from + lines[n]!.length; i++) {
        for (const c of ['0', 'f', '"', 'x']) {
          if (text[i] === c) continue;
          const changed = text.slice(0, i) + c + text.slice(i + 1);
          expect(pinnedExport(changed), `line ${n + 1} byte ${i - from} → ${c}`).toBeUndefined();
          const read = chainFromExport(changed);
          expect(read.bad !== undefined || !verifyChain({ ...read.input, publicKey: key.publicKey }).ok).toBe(
            true,
          );
        }
      }
    }
  });

  it('walks a record re-chained below its checkpoint, whose checkpoint then fails: verify.ts reads it', () => {
    // The attacker edits seq 12 and writes every hash after it again (no key needed for that).
    const forged: AuditEntry[] = many.map((e, i) => (i === 11 ? { ...e, detail: { note: 'forged' } } : e));
    const rechained = record(forged, 30).rows;
    const walk = new ChainWalk({ pinnedUpTo: 30 });
    const joinedText = rechained.map((r) => r.text).join('\n');
    expect(walk.rows(joinedText, rechained.map((r) => r.hash).join(''), 40)).toBe(true);
    expect(walk.finish([cp], key.publicKey)).toBeUndefined();
    // Edited without writing the hashes again, it does not even walk.
    const edited = rows.map((r, i) => (i === 11 ? { ...r, text: r.text.replace('c_pin', 'c_pIn') } : r));
    expect(pinnedRows(edited)).toBeUndefined();
    // Rows that pass their own hash check, in the wrong place: two plain pinned rows swapped, one deleted, one
    // repeated, and one pinned entry's hash column changed.
    expect(pinnedRows([...rows.slice(0, 2), rows[3]!, rows[2]!, ...rows.slice(4)])).toBeUndefined();
    expect(pinnedRows([...rows.slice(0, 22), ...rows.slice(23)])).toBeUndefined();
    expect(pinnedRows([...rows.slice(0, 23), rows[22]!, ...rows.slice(23)])).toBeUndefined();
    expect(pinnedRows(rows.map((r, i) => (i === 7 ? { ...r, hash: 'f'.repeat(64) } : r)))).toBeUndefined();
    // The same among entries that are never parsed (no submit, no approval): only the links show it.
    const plainList: AuditEntry[] = Array.from({ length: 20 }, (_, i) => ({
      at,
      actor: { kind: 'daemon', name: 'daemon' },
      action: i % 2 === 0 ? 'start' : 'finish',
      command_id: `c_plain${i}`,
      version: 3,
    }));
    const plain = record(plainList, 20);
    const plainRows = (rs: Array<{ text: string; hash: string }>) => {
      const walk = new ChainWalk({ pinnedUpTo: 20 });
      const ok = walk.rows(rs.map((r) => r.text).join('\n'), rs.map((r) => r.hash).join(''), rs.length);
      return ok ? walk.finish([plain.cp], plain.key.publicKey) : undefined;
    };
    const p = plain.rows;
    expect(plainRows(p)).toMatchObject({ entries: 20 });
    expect(plainRows([...p.slice(0, 5), p[6]!, p[5]!, ...p.slice(7)])).toBeUndefined();
    expect(plainRows([...p.slice(0, 5), p[5]!, ...p.slice(5, 19)])).toBeUndefined();
    const lines = toJsonl(plain.chain, [plain.cp], plain.pub).split('\n');
    const plainExport = (ls: string[]) => {
      const part = walkLines(ls.join('\n'), { pinnedUpTo: 20 });
      const joined = part === undefined ? undefined : joinParts([part]);
      return joined === undefined ? undefined : finishWalk(joined, undefined, plain.key.publicKey);
    };
    expect(plainExport(lines)).toMatchObject({ entries: 20, checkpoints: 1 });
    expect(plainExport([...lines.slice(0, 5), lines[6]!, lines[5]!, ...lines.slice(7)])).toBeUndefined();
  });

  it('links parts only in order, each from the seq and hash before it', () => {
    const parts = [0, 13, 27].map((from, k, all) => {
      const slice = rows.slice(from, all[k + 1] ?? rows.length);
      const walk = new ChainWalk({ part: true, pinnedUpTo: 30 });
      expect(
        walk.rows(slice.map((r) => r.text).join('\n'), slice.map((r) => r.hash).join(''), slice.length),
      ).toBe(true);
      return walk.part();
    });
    expect(joinParts(parts)?.entries).toBe(40);
    expect(finishWalk(joinParts(parts)!, [cp], key.publicKey)).toMatchObject({ entries: 40 });
    expect(joinParts([parts[1]!, parts[0]!, parts[2]!])).toBeUndefined();
    expect(joinParts([parts[0]!, parts[2]!])).toBeUndefined();
    expect(joinParts(parts.slice(1))).toBeUndefined();
  });
});
