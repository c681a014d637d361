/**
 * `audit verify`'s first pass over two threads (contract 14; bench row 15 times it against `sha256sum`):
 * the record is cut into parts (audit-walk-parts.ts) — broker.db by seq ranges, an export file at line
 * ends — and this thread and one worker (audit-walk-worker.ts) each take the next part not yet taken until
 * none is left, walking each part whole on its own (audit/walk.ts). The parts are then joined in order, each
 * linked to the one before it (joinParts), so what two threads accept is what one walk from seq 1 accepts.
 * A part found off stops both threads: the caller reads the record whole (verify.ts) for the first bad seq
 * and why.
 *
 * The worker only saves time: a part it took and never handed back (it failed to start, or died) is walked
 * here afterwards. A short record is walked here alone (a worker's start costs more than it would save).
 * Written by hand: parsing and hashing 100,000 entries is CPU work, and Node gives a second core only to a
 * second thread.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { type Joined, joinParts, type WalkPart } from '../audit/index.js';
import type { Checkpoint } from '../core/audit-chain.js';
import { openAuditChain } from '../store/sqlite/readonly.js';
import {
  partCount,
  partWalker,
  type Sharing,
  takeParts,
  type WalkSource,
  type WorkerInput,
  type WorkerMessage,
} from './audit-walk-parts.js';
import { hasEnded, takeWalkThread } from './audit-walk-thread.js';

export interface WalkOptions {
  /**
   * Whether checkpoints must verify under a key the user trusts (audit.pub, `--pub`, `--key`): only then do
   * they pin the entries they cover. Without one an export's checkpoints name their own key, which whoever
   * wrote the export chose: every entry is then checked whole.
   */
  trusted: boolean;
  /** The worker's module (tests name the built one); null: this thread alone. Default: audit-walk-thread.ts. */
  worker?: URL | null;
  /** Parts below which this thread walks alone. */
  minPartsForWorker?: number;
  sharing?: Sharing;
  /** broker.db rows per part. */
  rows?: number;
  /** Export bytes per part (cut at the next line end). */
  bytes?: number;
}

/** Parts walked by each thread (the tests read it). */
export interface WalkThreads {
  here: number;
  worker: number;
}

const DEFAULT_ROWS = 2000;
const DEFAULT_BYTES = 512 * 1024;
const DEFAULT_MIN_PARTS = 8;

/** The parts of `source` walked by this thread and (if worth it) the worker, in order; undefined if any is off. */
async function walkParts(
  source: WalkSource,
  here: { walk(index: number): WalkPart | undefined },
  options: WalkOptions,
): Promise<{ parts: WalkPart[]; threads: WalkThreads } | undefined> {
  const count = partCount(source);
  const input: WorkerInput = { source, state: new SharedArrayBuffer(8), sharing: options.sharing ?? 'claim' };
  // By index, not an array of `count`: a row added at seq 10^12 must make the first short range stop the
  // walk, not an array of 5·10^8 parts.
  const parts = new Map<number, WalkPart | undefined>();
  let off = false;
  const threads: WalkThreads = { here: 0, worker: 0 };
  const take = (by: keyof WalkThreads) => (index: number, part: WalkPart | undefined) => {
    parts.set(index, part);
    threads[by]++;
    if (part === undefined) off = true;
  };
  const worth = options.worker !== null && count >= (options.minPartsForWorker ?? DEFAULT_MIN_PARTS);
  const worker = worth ? takeWalkThread(options.worker ?? undefined) : undefined;
  const finished = worker === undefined ? undefined : handOver(worker, input, take('worker'));
  if (finished === undefined) input.sharing = 'claim'; // alone: every part is this thread's
  takeParts(input, 0, here.walk, take('here'));
  await finished;
  const inOrder: WalkPart[] = [];
  for (let i = 0; i < count && !off; i++) {
    // A part taken by a worker that never handed it back is walked here.
    if (!parts.has(i)) take('here')(i, here.walk(i));
    const part = parts.get(i);
    if (part !== undefined) inOrder.push(part);
  }
  return off ? undefined : { parts: inOrder, threads };
}

/** Gives the worker its work; settles once it has handed back every part it took, or ended. */
function handOver(
  worker: Worker,
  input: WorkerInput,
  onPart: (index: number, part: WalkPart | undefined) => void,
): Promise<void> | undefined {
  if (hasEnded(worker)) return undefined;
  return new Promise((resolve) => {
    worker.on('message', (m: WorkerMessage) => {
      if ('done' in m) resolve();
      else onPart(m.index, m.part);
    });
    // A worker that fails or dies: what it took and did not hand back is walked by this thread.
    worker.on('error', () => resolve());
    worker.on('exit', () => resolve());
    worker.postMessage(input);
  });
}

/** broker.db's chain walked (above), its checkpoints read in the same snapshot as its extent. */
export interface DatabaseWalk {
  /** Undefined: something is off (the caller reads the record whole). */
  joined: Joined | undefined;
  checkpoints: Checkpoint[];
  threads: WalkThreads;
}

/** broker.db's audit chain walked in parts; undefined when the file holds no chain (absent, or too old). */
export async function walkDatabase(path: string, options: WalkOptions): Promise<DatabaseWalk | undefined> {
  const reader = openAuditChain(path);
  if (reader === undefined) return undefined;
  try {
    const last = reader.last();
    if (last === undefined) return { joined: undefined, checkpoints: [], threads: { here: 0, worker: 0 } };
    // The worker reads its own snapshot: rows up to `last` are the same in it (the chain only grows).
    const checkpoints = reader.checkpoints();
    const pinnedUpTo = options.trusted ? Math.max(0, ...checkpoints.map((c) => c.seq)) : 0;
    const source: WalkSource = { kind: 'db', path, last, rows: options.rows ?? DEFAULT_ROWS, pinnedUpTo };
    const walked = await walkParts(source, partWalker(source, reader)!, options);
    return {
      joined: walked === undefined ? undefined : joinParts(walked.parts),
      checkpoints,
      threads: walked?.threads ?? { here: 0, worker: 0 },
    };
  } finally {
    reader.close();
  }
}

/** An export file's bytes, in memory both threads read without a copy. */
export function readShared(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = Buffer.from(new SharedArrayBuffer(size));
    let length = 0;
    while (length < size) {
      const n = readSync(fd, bytes, length, size - length, length);
      if (n === 0) break;
      length += n;
    }
    return bytes.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** An export (read by readShared, else copied) walked in parts cut at line ends. */
export async function walkFile(
  bytes: Buffer,
  options: WalkOptions,
): Promise<{ joined: Joined | undefined; threads: WalkThreads }> {
  const size = options.bytes ?? DEFAULT_BYTES;
  const cuts = [0];
  for (let at = size; at < bytes.length; ) {
    const end = bytes.indexOf(0x0a, at);
    if (end < 0 || end + 1 >= bytes.length) break;
    cuts.push(end + 1);
    at = end + 1 + size;
  }
  cuts.push(bytes.length);
  const shared = bytes.buffer instanceof SharedArrayBuffer && bytes.byteOffset === 0;
  const source: WalkSource = {
    pinnedUpTo: options.trusted ? lastCheckpointSeq(bytes) : 0,
    kind: 'file',
    bytes: shared ? (bytes.buffer as SharedArrayBuffer) : copyShared(bytes),
    length: bytes.length,
    cuts,
  };
  const walked = await walkParts(source, partWalker(source)!, options);
  return {
    joined: walked === undefined ? undefined : joinParts(walked.parts),
    threads: walked?.threads ?? { here: 0, worker: 0 },
  };
}

/**
 * The highest seq named by the checkpoint lines an export ends with (export.ts writes them after the
 * entries), 0 if none: what the walk may pin. Only a guess: finish checks every checkpoint the walk read.
 */
function lastCheckpointSeq(bytes: Buffer): number {
  const tail = '"type":"checkpoint"}';
  let last = 0;
  let end = bytes.length;
  if (bytes[end - 1] === 0x0a) end--;
  while (end > 0) {
    const start = bytes.lastIndexOf(0x0a, end - 1) + 1;
    const line = bytes.toString('utf8', start, end);
    if (!line.endsWith(tail)) break;
    try {
      const seq = (JSON.parse(line) as { seq?: unknown }).seq;
      if (typeof seq === 'number' && seq > last) last = seq;
    } catch {
      break;
    }
    end = start - 1;
  }
  return last;
}

function copyShared(bytes: Buffer): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(bytes.length);
  bytes.copy(Buffer.from(sab));
  return sab;
}
