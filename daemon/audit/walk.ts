/**
 * The one pass `audit verify` makes first (contract 14, docs/performance.md row 15): each entry read, parsed,
 * checked and hashed as it streams from broker.db or the export text, nothing kept but the hashes — where
 * verify.ts holds every entry to tell a swap from a gap. It is sound, not exact: when it finds the chain
 * whole, verifyChain over the same entries finds it whole too (each check of verify.ts is made: an object of
 * the entry's shape, `seq` the next one, `prev` the hash before, the bytes hashing to `hash`, every
 * checkpoint's signature and entry). At the first thing off it gives up, and the caller runs verify.ts over
 * the whole input for the first bad seq and why — the path a tampered record takes.
 */
import type { KeyObject } from 'node:crypto';
import { type Checkpoint, GENESIS_HASH, sha256Hex } from '../core/audit-chain.js';
import { checkpointOf } from './sources.js';
import {
  type Bad,
  type ChainInput,
  checkpointBads,
  type ReadCheckpoint,
  type ReadEntry,
  type UnpinnedSigner,
} from './verify.js';

/** A chain found whole: its counts, and the entries the passkey check reads (passkeys.ts). */
export interface Walked {
  entries: number;
  checkpoints: number;
  kept: ChainInput;
  /** Signers of checkpoints known only from the database (verify.ts). */
  unpinned: UnpinnedSigner[];
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The hash field of an export line: `,"hash":"` and 64 hex digits, then `"`. */
const HASH_KEY = ',"hash":"';
const HASH_FIELD_LENGTH = HASH_KEY.length + 64 + 1;

export class ChainWalk {
  #prev = GENESIS_HASH;
  /** `#hashes[i]`: the hash of seq i + 1 (a checkpoint names one). */
  readonly #hashes: string[] = [];
  /** Submits naming their arguments' digest and entries carrying a passkey approval: what passkeys.ts reads. */
  readonly #kept: ReadEntry[] = [];
  readonly #checkpoints: ReadCheckpoint[] = [];

  /** A broker.db row: its `entry` text (the bytes hashed) and `hash`. False when anything is off. */
  row(text: string | null, hash: string | null): boolean {
    if (text === null || hash === null) return false;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return false;
    }
    return isObject(v) && this.#entry(text, v, hash);
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
    if (v.hash !== hash) return false;
    return this.#entry(line.slice(0, at) + line.slice(at + HASH_FIELD_LENGTH), v, hash);
  }

  /**
   * `prev` equal to the last hash and the bytes' SHA-256 equal to `hash` also prove both are 64 hex digits
   * (the last hash was computed, or is the genesis), and `seq` equal to the next one that it is a whole
   * number from 1: verify.ts's shape check, made by comparisons.
   */
  #entry(text: string, v: Obj, hash: string): boolean {
    const data = v.data;
    if (
      v.seq !== this.#hashes.length + 1 ||
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
    this.#hashes.push(hash);
    this.#prev = hash;
    if (data.passkey !== undefined || (v.event === 'submit' && typeof data.args_sha256 === 'string')) {
      this.#kept.push({ value: v });
    }
    return true;
  }

  /**
   * After the last entry: the checkpoints (the database's, else the export's own) checked under
   * `publicKey` and `keys`' (verify.ts); undefined if any fails.
   */
  finish(
    checkpoints: readonly Checkpoint[] | undefined,
    publicKey: KeyObject | undefined,
    keys: Pick<ChainInput, 'trustedKeys' | 'knownKeys'> = {},
  ): Walked | undefined {
    const input: ChainInput = { ...keys, entries: [], checkpoints: checkpoints ?? this.#checkpoints };
    if (publicKey !== undefined) input.publicKey = publicKey;
    const bads: Bad[] = [];
    const unpinned = new Map<string, UnpinnedSigner>();
    checkpointBads(input, (seq) => this.#hashes[seq - 1], this.#hashes.length, bads, unpinned);
    if (bads.length > 0) return undefined;
    return {
      entries: this.#hashes.length,
      checkpoints: input.checkpoints.length,
      kept: { entries: this.#kept, checkpoints: [] },
      unpinned: [...unpinned.values()],
    };
  }
}

/** An export's text walked line by line (split as sources.ts splits it), or undefined when anything is off. */
export function walkExport(
  text: string,
  publicKey: KeyObject | undefined,
  keys: Pick<ChainInput, 'trustedKeys'> = {},
): Walked | undefined {
  const walk = new ChainWalk();
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (!walk.line(text.slice(start, end))) return undefined;
    start = end + 1;
  }
  return walk.finish(undefined, publicKey, keys);
}
