/**
 * Walking the audit chain (contract 14): every entry's hash, every link, every checkpoint's signature, and
 * the first bad `seq` with why — `edited` (an entry's bytes are not the ones hashed, or its successor
 * recorded another hash for it, or a checkpoint signed another), `missing` (a seq absent: deleted, or the tail
 * cut below a checkpoint), `reordered` (a seq found out of its place: a swapped pair), `bad checkpoint
 * signature`. Pure: the caller reads the database or the export file (sources.ts) and prints.
 *
 * ```
 *   seq 1 ──prev──▶ 0000…   seq 2 ──prev──▶ hash(1)   …   seq 1000 ◀── checkpoint {seq, hash, at} + Ed25519
 * ```
 */
import { createPublicKey, type KeyObject, verify as verifySignature } from 'node:crypto';
import {
  type Checkpoint,
  checkpointPayload,
  GENESIS_HASH,
  sealEntry,
  sha256Hex,
  type UnsealedEntry,
} from '../core/model/audit-chain.js';

/** Why an entry failed, in the words `audit verify` prints. */
export type BadReason =
  | 'edited'
  | 'missing'
  | 'reordered'
  | 'bad checkpoint signature'
  | 'bad passkey assertion';

export interface Bad {
  seq: number;
  reason: BadReason;
  /** One sentence for the person reading. */
  detail: string;
}

/**
 * A checkpoint signer known only from the database (contract 16: a node's `audit_public_key`), not from
 * audit.pub, `--pub` or `--key`: its checkpoints are accepted, and `audit verify` names it on a line.
 */
export interface UnpinnedSigner {
  name: string;
  fingerprint: string;
  /** The seqs of the checkpoints it alone verified. */
  seqs: number[];
}

export type VerifyResult =
  | { ok: true; entries: number; checkpoints: number; passkeys: number; unpinned?: UnpinnedSigner[] }
  | { ok: false; bad: Bad };

/** A public key the database names, with who it names it for (a node). */
export interface NamedKey {
  name: string;
  key: KeyObject;
  fingerprint: string;
}

/**
 * One entry as read: its parsed value (with `hash`) and, when the reader has them, the exact bytes that were
 * hashed (`text`: broker.db's `entry` column, an export line without its hash) — then those are hashed as
 * they are, which is what was signed, without writing the entry out again (`audit verify` of 100,000 entries
 * pays a parse and a SHA-256 each). Or why it could not be read as one.
 */
export type ReadEntry = { value: Record<string, unknown>; text?: string } | { unreadable: string };

/** A checkpoint as read, with the key it says signed it (an export carries one per checkpoint line). */
export interface ReadCheckpoint extends Checkpoint {
  publicKey?: string;
}

export interface ChainInput {
  entries: readonly ReadEntry[];
  checkpoints: readonly ReadCheckpoint[];
  /** The key checkpoints must verify under (audit.pub, or `--pub`); else each checkpoint's own. */
  publicKey?: KeyObject;
  /** More keys trusted as `publicKey` is (`--key`, repeatable: other nodes' audit.pub). */
  trustedKeys?: readonly KeyObject[];
  /**
   * Keys known only from the database (contract 16: each node's, from `nodes`): a checkpoint of the
   * database that none of the trusted keys verifies may verify under one of these, and is then reported.
   */
  knownKeys?: readonly NamedKey[];
  /**
   * A partial export (some commands' entries): seq gaps are expected there, so only present neighbours
   * are linked; `commandIds` are the commands it claims to hold.
   */
  partial?: { commandIds: readonly string[] };
  /** A range export (`--since`): its first entry links to one the export does not hold. */
  range?: boolean;
}

const HEX64 = /^[0-9a-f]{64}$/;

function shapeOk(v: Record<string, unknown>): boolean {
  return (
    Number.isSafeInteger(v.seq) &&
    (v.seq as number) >= 1 &&
    typeof v.at === 'string' &&
    typeof v.actor === 'string' &&
    typeof v.event === 'string' &&
    (v.command_id === undefined || typeof v.command_id === 'string') &&
    typeof v.data === 'object' &&
    v.data !== null &&
    !Array.isArray(v.data) &&
    typeof v.prev === 'string' &&
    HEX64.test(v.prev) &&
    typeof v.hash === 'string' &&
    HEX64.test(v.hash)
  );
}

/** Walks the chain and its checkpoints; the first bad seq (lowest), or the counts. */
export function verifyChain(input: ChainInput): VerifyResult {
  const bads: Bad[] = [];
  const entries = input.entries;
  const hashes = new Map<number, string>();
  const firstAt = firstPlaces(entries);
  const partial = input.partial;
  const claimed = partial === undefined ? undefined : new Set(partial.commandIds);
  let expected: number | undefined;
  let prevHash: string | undefined = partial === undefined ? GENESIS_HASH : undefined;
  for (let i = 0; i < entries.length && bads.length === 0; i++) {
    const r = entries[i]!;
    const here = expected ?? 1;
    if (!('value' in r) || !shapeOk(r.value)) {
      const why = 'value' in r ? 'it is not an audit entry' : r.unreadable;
      bads.push({ seq: here, reason: 'edited', detail: `the entry after seq ${here - 1}: ${why}` });
      break;
    }
    const v = r.value as unknown as UnsealedEntry & { hash: string };
    if (expected === undefined && partial === undefined) {
      // The database and a whole export start at 1; a range export where its range starts.
      if (input.range === true) prevHash = v.prev;
      else expected = 1;
    }
    if (expected !== undefined && v.seq !== expected) {
      if (partial !== undefined && v.seq > expected) {
        prevHash = undefined; // a gap the partial export declared: nothing to link across
      } else if (v.seq < expected || (firstAt.get(expected) ?? -1) > i) {
        const seq = Math.min(v.seq, expected);
        bads.push({ seq, reason: 'reordered', detail: `seq ${v.seq} stands where seq ${expected} belongs` });
        break;
      } else {
        bads.push({
          seq: expected,
          reason: 'missing',
          detail: `seq ${expected} is absent (the next is ${v.seq})`,
        });
        break;
      }
    }
    const { hash: _given, ...unsealed } = v;
    const computed = r.text !== undefined ? sha256Hex(r.text) : sealEntry(unsealed).hash;
    if (computed !== v.hash) {
      bads.push({
        seq: v.seq,
        reason: 'edited',
        detail: `seq ${v.seq} is not what its hash was computed over`,
      });
      break;
    }
    if (prevHash !== undefined && v.prev !== prevHash) {
      const seq = v.seq > 1 ? v.seq - 1 : v.seq;
      bads.push({ seq, reason: 'edited', detail: `seq ${v.seq} recorded another hash for seq ${v.seq - 1}` });
      break;
    }
    if (claimed !== undefined && (v.command_id === undefined || !claimed.has(v.command_id))) {
      bads.push({ seq: v.seq, reason: 'edited', detail: `seq ${v.seq} is of no command the export names` });
      break;
    }
    hashes.set(v.seq, v.hash);
    prevHash = v.hash;
    expected = v.seq + 1;
  }
  return verdict(input, hashes, (expected ?? 1) - 1, bads);
}

/** Where each seq first appears, to tell an entry out of place (reordered) from one that is gone (missing). */
function firstPlaces(entries: ChainInput['entries']): Map<number, number> {
  const firstAt = new Map<number, number>();
  entries.forEach((r, i) => {
    if ('value' in r && Number.isSafeInteger(r.value.seq) && !firstAt.has(r.value.seq as number)) {
      firstAt.set(r.value.seq as number, i);
    }
  });
  return firstAt;
}

/** The checkpoints checked against the walked entries (up to `last`), then the first bad seq or the counts. */
function verdict(input: ChainInput, hashes: Map<number, string>, last: number, bads: Bad[]): VerifyResult {
  const unpinned = new Map<string, UnpinnedSigner>();
  checkpointBads(input, (seq) => hashes.get(seq), last, bads, unpinned);
  if (bads.length > 0) {
    bads.sort((a, b) => a.seq - b.seq);
    return { ok: false, bad: bads[0]! };
  }
  const r: VerifyResult = {
    ok: true,
    entries: hashes.size,
    checkpoints: input.checkpoints.length,
    passkeys: 0,
  };
  if (unpinned.size > 0) r.unpinned = [...unpinned.values()];
  return r;
}

/**
 * Each checkpoint against the keys and against the entry it names (`hashOf`: the verified entry's hash, if
 * read); `last` is the last seq read. Pushes onto `bads` what fails, and onto `unpinned` (by name) the
 * checkpoints only a key known from the database verified.
 */
export function checkpointBads(
  input: Pick<ChainInput, 'checkpoints' | 'publicKey' | 'trustedKeys' | 'knownKeys' | 'partial'>,
  hashOf: (seq: number) => string | undefined,
  last: number,
  bads: Bad[],
  unpinned?: Map<string, UnpinnedSigner>,
): void {
  const trusted = [...(input.publicKey === undefined ? [] : [input.publicKey]), ...(input.trustedKeys ?? [])];
  for (const cp of input.checkpoints) {
    const checked = checkCheckpoint(cp, trusted, input.knownKeys ?? []);
    if (typeof checked === 'string') {
      bads.push({ seq: cp.seq, reason: 'bad checkpoint signature', detail: checked });
      continue;
    }
    if (checked !== undefined && unpinned !== undefined) {
      const u = unpinned.get(checked.name) ?? {
        name: checked.name,
        fingerprint: checked.fingerprint,
        seqs: [],
      };
      u.seqs.push(cp.seq);
      unpinned.set(checked.name, u);
    }
    const h = hashOf(cp.seq);
    if (h !== undefined && h !== cp.hash) {
      bads.push({
        seq: cp.seq,
        reason: 'edited',
        detail: `seq ${cp.seq} is not the entry checkpoint ${cp.seq} signed`,
      });
    } else if (h === undefined && input.partial === undefined && cp.seq > last && bads.length === 0) {
      bads.push({
        seq: last + 1,
        reason: 'missing',
        detail: `the record ends at seq ${last} but a signed checkpoint covers seq ${cp.seq}`,
      });
    }
  }
}

/** A key's SPKI DER, made once per key. */
const DER = new WeakMap<KeyObject, Buffer>();
function derOf(key: KeyObject): Buffer {
  let der = DER.get(key);
  if (der === undefined) {
    der = key.export({ type: 'spki', format: 'der' }) as Buffer;
    DER.set(key, der);
  }
  return der;
}

/** Each checkpoint's answer under each key asked, for the checkpoint read (the same object) once. */
const SIGNED = new WeakMap<ReadCheckpoint, Map<KeyObject, boolean>>();

function signedBy(cp: ReadCheckpoint, key: KeyObject, sig: Buffer): boolean {
  let answers = SIGNED.get(cp);
  const known = answers?.get(key);
  if (known !== undefined) return known;
  let ok: boolean;
  try {
    ok = verifySignature(null, Buffer.from(checkpointPayload(cp)), key, sig);
  } catch {
    ok = false; // a malformed signature is as bad as a wrong one
  }
  if (answers === undefined) {
    answers = new Map();
    SIGNED.set(cp, answers);
  }
  answers.set(key, ok);
  return ok;
}

/**
 * The checkpoints' signatures checked under `keys` ahead of checkpointBads, which then reads the answers:
 * the walk does it while its worker finishes (walk-threads.ts), when this thread would only wait.
 */
export function checkSignaturesAhead(
  checkpoints: readonly ReadCheckpoint[],
  keys: readonly KeyObject[],
): void {
  for (const cp of checkpoints) {
    const sig = strictBase64(cp.signature);
    if (sig !== undefined) for (const key of keys) signedBy(cp, key, sig);
  }
}

/**
 * Why a checkpoint's signature does not hold; else undefined when a trusted key (or the export line's own
 * key, when none is trusted) verifies it, or the database-known key that alone does.
 */
function checkCheckpoint(
  cp: ReadCheckpoint,
  trusted: readonly KeyObject[],
  known: readonly NamedKey[],
): string | NamedKey | undefined {
  let keys = trusted;
  if (cp.publicKey !== undefined) {
    // An export line names its key. Strict base64: Node's decoder skips characters it does not know, and a
    // byte changed must show.
    const der = strictBase64(cp.publicKey);
    if (der === undefined) return `checkpoint ${cp.seq} carries no readable public key`;
    if (trusted.length > 0) {
      const k = trusted.find((t) => der.equals(derOf(t)));
      if (k === undefined) return `checkpoint ${cp.seq} names another key than the one given`;
      keys = [k];
    } else {
      let k: KeyObject;
      try {
        k = createPublicKey({ key: der, format: 'der', type: 'spki' });
      } catch {
        return `checkpoint ${cp.seq} carries no readable public key`;
      }
      // OpenSSL reads a key and ignores bytes after it: the '=' of the base64 changed to a letter adds one.
      if (!der.equals(derOf(k))) return `checkpoint ${cp.seq} carries no readable public key`;
      keys = [k];
    }
    known = [];
  }
  if (keys.length === 0 && known.length === 0) {
    return `checkpoint ${cp.seq} names no key and none was given (--pub)`;
  }
  const sig = strictBase64(cp.signature);
  if (sig === undefined) return `checkpoint ${cp.seq}'s signature is not base64`;
  if (keys.some((k) => signedBy(cp, k, sig))) return undefined;
  const node = known.find((n) => signedBy(cp, n.key, sig));
  if (node !== undefined) return node;
  return keys.length + known.length === 1
    ? `checkpoint ${cp.seq}'s signature does not verify under the audit key`
    : `checkpoint ${cp.seq}'s signature verifies under none of the ${keys.length + known.length} keys known (audit.pub, --pub, --key, the database's nodes)`;
}

/** The bytes of a base64 text written the one way Node writes them, else undefined. */
function strictBase64(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}
