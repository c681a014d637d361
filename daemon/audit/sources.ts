/**
 * What `audit verify` walks (contract 14), read from broker.db's rows or from an export file, turned into
 * verify.ts's input. An export line must be the canonical JSON of what it holds: any byte changed in it
 * either changes what it says (the hash or the signature no longer holds) or makes it non-canonical.
 */
import { type Checkpoint, canonicalJson } from '../core/model/audit-chain.js';
import type { Bad, ChainInput, ReadCheckpoint, ReadEntry } from './verify.js';

/** The fields of a checkpoint line, and no others. */
const CHECKPOINT_KEYS = new Set(['type', 'seq', 'hash', 'at', 'signature', 'public_key']);

/** broker.db's rows and checkpoints as verify.ts reads them. */
export function chainFromRows(
  rows: ReadonlyArray<{ seq: number; entry: string | null; hash: string | null }>,
  checkpoints: readonly Checkpoint[],
): ChainInput {
  const entries: ReadEntry[] = rows.map((r) => {
    if (r.entry === null || r.hash === null) return { unreadable: `row ${r.seq} is not chained` };
    try {
      const v = JSON.parse(r.entry) as unknown;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return { unreadable: 'not a JSON object' };
      return { value: { ...(v as Record<string, unknown>), hash: r.hash }, text: r.entry };
    } catch {
      return { unreadable: 'not JSON' };
    }
  });
  return { entries, checkpoints };
}

/** An export file as verify.ts reads it, and the first line that is not in canonical form, if any. */
export function chainFromExport(text: string): { input: ChainInput; bad?: Bad } {
  const entries: ReadEntry[] = [];
  const checkpoints: ReadCheckpoint[] = [];
  let marker: Record<string, unknown> | undefined;
  let bad: Bad | undefined;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const lastSeq = () => {
    const e = entries.at(-1);
    return e !== undefined && 'value' in e && typeof e.value.seq === 'number' ? e.value.seq : 0;
  };
  lines.forEach((line, i) => {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      entries.push({ unreadable: `line ${i + 1} is not JSON` });
      return;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      entries.push({ unreadable: `line ${i + 1} is not a JSON object` });
      return;
    }
    const o = v as Record<string, unknown>;
    if (o.type !== 'checkpoint' && o.type !== 'export') {
      entries.push(entryOf(line, o, i));
      return;
    }
    if (o.type === 'checkpoint') {
      const read = checkpointOf(o, line);
      if (read === undefined) {
        bad ??= {
          seq: typeof o.seq === 'number' ? o.seq : lastSeq(),
          reason: 'bad checkpoint signature',
          detail: `line ${i + 1} is not a checkpoint as signed`,
        };
        return;
      }
      checkpoints.push(read);
      return;
    }
    if (canonicalJson(o) === line) marker = o;
    else entries.push({ unreadable: `line ${i + 1} is not an export line as written` });
  });
  const input: ChainInput = { entries, checkpoints };
  if (marker !== undefined && Array.isArray(marker.command_ids)) {
    input.partial = { commandIds: marker.command_ids.filter((x): x is string => typeof x === 'string') };
  } else if (marker !== undefined && typeof marker.since === 'string') {
    input.range = true;
  }
  return bad === undefined ? { input } : { input, bad };
}

/** A checkpoint line (`type` "checkpoint") as read, or undefined when it is not one as signed and written. */
export function checkpointOf(o: Record<string, unknown>, line: string): ReadCheckpoint | undefined {
  const cp = o as unknown as ReadCheckpoint & { public_key?: string };
  const known = Object.keys(o).every((k) => CHECKPOINT_KEYS.has(k));
  if (canonicalJson(o) !== line || !known || typeof cp.seq !== 'number' || typeof cp.signature !== 'string') {
    return undefined;
  }
  const read: ReadCheckpoint = {
    seq: cp.seq,
    hash: String(cp.hash),
    at: String(cp.at),
    signature: String(cp.signature),
  };
  if (typeof cp.public_key === 'string') read.publicKey = cp.public_key;
  return read;
}

/** `,"hash":"<64 hex>"` — in canonical key order only `prev` and `seq` follow it, so its last match is the entry's. */
const HASH_FIELD = /,"hash":"[0-9a-f]{64}"/g;

/**
 * An entry line and the bytes its hash covers: the line without its `hash` field. In canonical JSON that is
 * exactly the entry as hashed, so when those bytes hash to the `hash` the line is the canonical entry; a line
 * changed anywhere fails that (no need to write each entry out again to compare).
 */
function entryOf(line: string, value: Record<string, unknown>, i: number): ReadEntry {
  let last: RegExpExecArray | undefined;
  for (const m of line.matchAll(HASH_FIELD)) last = m;
  if (last === undefined || typeof value.hash !== 'string' || last[0] !== `,"hash":"${value.hash}"`) {
    return { unreadable: `line ${i + 1} is not an entry as exported` };
  }
  return { value, text: line.slice(0, last.index) + line.slice(last.index + last[0].length) };
}
