/**
 * The one pass `audit verify` makes first (contract 14, docs/performance.md row 15): each entry read, parsed,
 * checked and hashed as it streams from broker.db or the export text, nothing kept but the hashes — where
 * verify.ts holds every entry to tell a swap from a gap. It is sound, not exact: when it finds the chain
 * whole, verifyChain over the same entries finds it whole too (each check of verify.ts is made: an object of
 * the entry's shape, `seq` the next one, `prev` the hash before, the bytes hashing to `hash`, every
 * checkpoint's signature and entry). At the first thing off it gives up, and the caller runs verify.ts over
 * the whole input for the first bad seq and why — the path a tampered record takes.
 *
 * A record may be walked in parts (two threads, walk-threads.ts), each from whatever seq and `prev` its
 * first entry names; joinParts links them (each part's first entry follows the part before), proving the same.
 *
 * Pinned entries. When the checkpoints must verify under a key the user trusts (audit.pub, `--pub`, `--key`),
 * an entry at or below the last checkpoint's seq is checked by its bytes alone: they hash to its `hash`, and
 * they hold the hash before it at `prev`'s place (64 hex digits, then `","seq":`, its seq and `}` at the end).
 * That pins it: the signed checkpoint's hash pins its entry's bytes, which hold the hash before it, which
 * pins that entry's bytes, and so back to seq 1 — so they are exactly the bytes the daemon wrote and signed,
 * and parsing them again proves nothing more. finish then checks every checkpoint: one that does not verify,
 * or names another hash, sends the record to verify.ts as anything else off does. Submits, passkey adds and
 * removals, config_loaded, entries holding a passkey (what passkeys.ts reads), entries after the last checkpoint
 * and a part's first are parsed whole. Half of the walk's time was `JSON.parse` (bench row 15).
 */
import type { KeyObject } from 'node:crypto';
import { type Checkpoint, GENESIS_HASH, sha256Hex } from '../core/model/audit-chain.js';
import {
  emptyFolded,
  type FoldedHistory,
  HistoryFold,
  mergeFolded,
  type PartHistory,
} from './history-fold.js';
import { checkpointOf } from './sources.js';
import {
  type Bad,
  type ChainInput,
  checkpointBads,
  type ReadCheckpoint,
  type ReadEntry,
  type UnpinnedSigner,
} from './verify.js';
import {
  digitsOf,
  FIELD_END_BACK,
  HASH_FIELD_LENGTH,
  HASH_KEY,
  holds,
  KEPT_EVENTS,
  KeptScan,
  PREV_BACK,
} from './walk-bytes.js';

/** A chain found whole: its counts, and the entries the passkey check reads (passkeys.ts). */
export interface Walked {
  entries: number;
  checkpoints: number;
  kept: ChainInput;
  /** Signers of checkpoints known only from the database (verify.ts). */
  unpinned: UnpinnedSigner[];
}

/** A part of a record walked whole on its own: plain data, so a worker thread can hand it over. */
export interface WalkPart {
  /** The first entry's seq and prev; absent when the part holds no entry (checkpoint lines only). */
  first?: { seq: number; prev: string };
  /** The entries' hashes end to end, 64 hex digits each, in seq order. */
  hashes: string;
  /** Submits naming their arguments' digest and entries carrying a passkey approval: what passkeys.ts reads. */
  kept: ReadEntry[];
  /** An export's checkpoint lines in this part. */
  checkpoints: ReadCheckpoint[];
  history?: PartHistory;
}

/**
 * Parts joined into one chain from seq 1: its hashes end to end, in the parts' pieces (hashAt), and what its
 * parts kept. Never joined into one string: 100,000 hashes are 6.4 MB, which V8 copies into a new large
 * object (19 ms of bench row 15's verify, for the hundred or so a checkpoint check reads).
 */
export interface Joined {
  entries: number;
  /** Each part's hashes, end to end; `starts[i]` the seq of the first one in `hashes[i]`. */
  hashes: string[];
  starts: number[];
  kept: ReadEntry[];
  checkpoints: ReadCheckpoint[];
  history: FoldedHistory;
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface WalkOptions {
  /** A part of a record (joinParts links it), from whatever its first entry names; else from seq 1. */
  part?: boolean;
  /** The highest seq a checkpoint that must verify under a trusted key covers: entries to it are pinned. */
  pinnedUpTo?: number;
  /** Fold what the entries say the history must show (contract 14 (v4), history-fold.ts): parts' `history`. */
  history?: { rows?: ReadonlySet<string> };
}

export class ChainWalk {
  /** The first entry's seq and prev: seq 1 after the genesis hash, or (a part) what the first entry names. */
  #first: { seq: number; prev: string } | undefined;
  /** Entries walked, and the last one's hash (the next one's `prev`). */
  #count = 0;
  #prev: string | undefined;
  /** The hashes walked, end to end, in pieces (a chunk of rows hands over its hashes as one). */
  readonly #hashes: string[] = [];
  readonly #kept: ReadEntry[] = [];
  readonly #checkpoints: ReadCheckpoint[] = [];
  readonly #pinnedUpTo: number;
  readonly #history: HistoryFold | undefined;

  constructor(options: WalkOptions = {}) {
    if (options.part !== true) {
      this.#first = { seq: 1, prev: GENESIS_HASH };
      this.#prev = GENESIS_HASH;
    }
    this.#pinnedUpTo = options.pinnedUpTo ?? 0;
    if (options.history !== undefined) this.#history = new HistoryFold(options.history.rows);
  }

  /** A broker.db row: its `entry` text (the bytes hashed) and `hash`. False when anything is off. */
  row(text: string | null, hash: string | null): boolean {
    if (text === null || hash === null || !this.#whole(text, hash)) return false;
    this.#hashes.push(hash);
    return true;
  }

  /**
   * broker.db rows as the reader joins them (store/sqlite/readonly.ts): `n` entries joined by newlines, their
   * hashes end to end. False when anything is off, an entry holding a newline included (one piece too many).
   */
  rows(entries: string, hashes: string, n: number): boolean {
    const kept = new KeptScan(entries);
    let start = 0;
    for (let i = 0; i < n; i++) {
      let end = entries.indexOf('\n', start);
      if (end < 0) end = entries.length;
      if (!this.#pinnedRow(entries, start, end, hashes, 64 * i, kept)) {
        if (!this.#whole(entries.slice(start, end), hashes.slice(64 * i, 64 * i + 64))) return false;
      }
      start = end + 1;
    }
    if (start !== entries.length + 1) return false;
    this.#hashes.push(hashes);
    return true;
  }

  /**
   * An export line: an entry (its bytes hashed are the line without its hash field: sources.ts) or a
   * checkpoint. False when anything is off, a filtered export's marker included (verify.ts reads those).
   */
  line(line: string): boolean {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return false;
    }
    if (!isObject(v) || v.type === 'export') return false;
    if (v.type === 'checkpoint') {
      const cp = checkpointOf(v, line);
      if (cp !== undefined) this.#checkpoints.push(cp);
      return cp !== undefined;
    }
    // The last `,"hash":"` of a canonical line is the entry's own (only `prev` and `seq` follow it).
    const at = line.lastIndexOf(HASH_KEY);
    if (at < 0 || line.charCodeAt(at + HASH_FIELD_LENGTH - 1) !== 0x22) return false;
    const hash = line.slice(at + HASH_KEY.length, at + HASH_FIELD_LENGTH - 1);
    if (v.hash !== hash || !this.#entry(line.slice(0, at) + line.slice(at + HASH_FIELD_LENGTH), v, hash)) {
      return false;
    }
    this.#hashes.push(hash);
    return true;
  }

  /** Lines of an export (as sources.ts splits them); false when any is off. */
  lines(text: string): boolean {
    const kept = new KeptScan(text);
    for (let start = 0; start < text.length; ) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      if (!this.#pinnedLine(text, start, end, kept)) {
        if (!this.line(text.slice(start, end))) return false;
      }
      start = end + 1;
    }
    return true;
  }

  /** The seq the next entry must have when it is pinned (above), else undefined. */
  #pinnedSeq(): number | undefined {
    if (this.#first === undefined) return undefined;
    const seq = this.#first.seq + this.#count;
    return seq <= this.#pinnedUpTo ? seq : undefined;
  }

  /**
   * A pinned row (`text[start, end)`) whose hash is `hashes` at `at`: its bytes hash to it and hold the hash
   * before it as `prev`; `kept` scans `text` for the entries passkeys.ts reads.
   */
  #pinnedRow(text: string, start: number, end: number, hashes: string, at: number, kept: KeptScan): boolean {
    const seq = this.#pinnedSeq();
    if (seq === undefined) return false;
    const prevAt = end - digitsOf(seq) - PREV_BACK;
    if (prevAt <= start || !holds(text, prevAt, this.#prev!)) return false;
    // `,"prev":"` (9) ends the event field.
    if (kept.mayBeKept(start, prevAt - 9)) return false;
    if (this.#history?.text(text, start, prevAt, seq) === false) return false; // not canonical: parsed whole
    const hash = sha256Hex(text.slice(start, end));
    if (!holds(hashes, at, hash)) return false;
    this.#count++;
    this.#prev = hash;
    return true;
  }

  /** A pinned export line: as a row, its bytes being the line without the hash field before `prev`. */
  #pinnedLine(text: string, start: number, end: number, kept: KeptScan): boolean {
    const seq = this.#pinnedSeq();
    if (seq === undefined) return false;
    const digits = digitsOf(seq);
    const fieldEnd = end - digits - FIELD_END_BACK;
    const field = fieldEnd - HASH_FIELD_LENGTH;
    if (
      field <= start ||
      !holds(text, field, HASH_KEY) ||
      text.charCodeAt(fieldEnd - 1) !== 0x22 ||
      !holds(text, end - digits - PREV_BACK, this.#prev!) ||
      kept.mayBeKept(start, field)
    ) {
      return false;
    }
    const hash = sha256Hex(text.slice(start, field) + text.slice(fieldEnd, end));
    if (!holds(text, field + HASH_KEY.length, hash)) return false;
    this.#count++;
    this.#prev = hash;
    this.#hashes.push(hash);
    return true;
  }

  /** A row's entry parsed and checked whole (#entry); its hash not yet kept. */
  #whole(text: string, hash: string): boolean {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return false;
    }
    return isObject(v) && this.#entry(text, v, hash);
  }

  /**
   * `prev` equal to the last hash and the bytes' SHA-256 equal to `hash` also prove both are 64 hex digits
   * (the last hash was computed, or is the genesis, or — a part's first — joinParts compares it with one),
   * and `seq` equal to the next one that it is a whole number from 1: verify.ts's shape check, made by
   * comparisons. The caller keeps the hash.
   */
  #entry(text: string, v: Obj, hash: string): boolean {
    if (this.#first === undefined) {
      if (typeof v.seq !== 'number' || typeof v.prev !== 'string') return false;
      this.#first = { seq: v.seq, prev: v.prev };
      this.#prev = v.prev;
    }
    const data = v.data;
    if (
      v.seq !== this.#first.seq + this.#count ||
      v.prev !== this.#prev ||
      typeof v.at !== 'string' ||
      typeof v.actor !== 'string' ||
      typeof v.event !== 'string' ||
      (v.command_id !== undefined && typeof v.command_id !== 'string') ||
      !isObject(data) ||
      sha256Hex(text) !== hash
    ) {
      return false;
    }
    this.#count++;
    this.#prev = hash;
    if (
      data.passkey !== undefined ||
      (v.event === 'submit' && typeof data.args_sha256 === 'string') ||
      (v.event !== 'submit' && KEPT_EVENTS.includes(v.event as string))
    ) {
      this.#kept.push({ value: v });
    }
    this.#history?.entry(v);
    return true;
  }

  /** What this walk found, to be joined with the parts around it. */
  part(): WalkPart {
    const hashes = this.#hashes.length === 1 ? this.#hashes[0]! : this.#hashes.join('');
    const part: WalkPart = { hashes, kept: this.#kept, checkpoints: this.#checkpoints };
    if (this.#history !== undefined) part.history = this.#history.packed();
    if (this.#first !== undefined && this.#count > 0) part.first = this.#first;
    return part;
  }

  /** A walk from seq 1 finished (the checkpoints: the database's, else the export's own): finishWalk. */
  finish(
    checkpoints: readonly Checkpoint[] | undefined,
    publicKey: KeyObject | undefined,
    keys: Pick<ChainInput, 'trustedKeys' | 'knownKeys'> = {},
  ): Walked | undefined {
    const joined = joinParts([this.part()]);
    return joined === undefined ? undefined : finishWalk(joined, checkpoints, publicKey, keys);
  }
}

/**
 * Parts in order linked into one chain from seq 1 (each part's first entry the seq after the last one before
 * it, its `prev` that entry's hash), or undefined when they do not link.
 */
export function joinParts(parts: readonly WalkPart[]): Joined | undefined {
  let next = 1;
  let prev = GENESIS_HASH;
  const kept: ReadEntry[] = [];
  const checkpoints: ReadCheckpoint[] = [];
  const history = emptyFolded();
  const hashes: string[] = [];
  const starts: number[] = [];
  for (const p of parts) {
    if (p.first !== undefined) {
      if (p.first.seq !== next || p.first.prev !== prev) return undefined;
      hashes.push(p.hashes);
      starts.push(next);
      next += p.hashes.length / 64;
      prev = p.hashes.slice(-64);
    } else if (p.hashes.length > 0) {
      return undefined;
    }
    for (const k of p.kept) kept.push(k);
    for (const c of p.checkpoints) checkpoints.push(c);
    mergeFolded(history, p.history);
  }
  return { entries: next - 1, hashes, starts, kept, checkpoints, history };
}

/** The hash of entry `seq` of a joined chain, or undefined when it holds none. */
export function hashAt(joined: Joined, seq: number): string | undefined {
  if (!Number.isInteger(seq) || seq < 1 || seq > joined.entries) return undefined;
  // The last piece starting at or before seq (binary search: pieces are in seq order).
  let lo = 0;
  let hi = joined.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (joined.starts[mid]! <= seq) lo = mid;
    else hi = mid - 1;
  }
  const at = 64 * (seq - joined.starts[lo]!);
  return joined.hashes[lo]!.slice(at, at + 64);
}

/**
 * A joined chain's checkpoints (the database's, else the export's own) checked under `publicKey` and
 * `keys`' (verify.ts): the chain found whole, or undefined if any checkpoint fails.
 */
export function finishWalk(
  joined: Joined,
  checkpoints: readonly Checkpoint[] | undefined,
  publicKey: KeyObject | undefined,
  keys: Pick<ChainInput, 'trustedKeys' | 'knownKeys'> = {},
): Walked | undefined {
  const input: ChainInput = { ...keys, entries: [], checkpoints: checkpoints ?? joined.checkpoints };
  if (publicKey !== undefined) input.publicKey = publicKey;
  const bads: Bad[] = [];
  const unpinned = new Map<string, UnpinnedSigner>();
  checkpointBads(input, (seq) => hashAt(joined, seq), joined.entries, bads, unpinned);
  if (bads.length > 0) return undefined;
  return {
    entries: joined.entries,
    checkpoints: input.checkpoints.length,
    kept: { entries: joined.kept, checkpoints: [] },
    unpinned: [...unpinned.values()],
  };
}

/** The lines of `text` (as sources.ts splits them) walked as one part; undefined when any is off. */
export function walkLines(text: string, options: WalkOptions = { part: true }): WalkPart | undefined {
  const walk = new ChainWalk(options);
  return walk.lines(text) ? walk.part() : undefined;
}

/** An export's text walked line by line, or undefined when anything is off. */
export function walkExport(
  text: string,
  publicKey: KeyObject | undefined,
  keys: Pick<ChainInput, 'trustedKeys'> = {},
): Walked | undefined {
  const part = walkLines(text, {});
  const joined = part === undefined ? undefined : joinParts([part]);
  return joined === undefined ? undefined : finishWalk(joined, undefined, publicKey, keys);
}
