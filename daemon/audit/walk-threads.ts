/**
 * `audit verify`'s first pass over two threads (contract 14; bench row 15 times it against `sha256sum`):
 * the record is cut into parts, each walked whole on its own (audit/walk.ts) by this thread or by one worker
 * (walk-worker.ts), then joined in order, each linked to the one before it (joinParts) — so what two
 * threads accept is what one walk from seq 1 accepts. A part found off stops both threads: the caller reads
 * the record whole (verify.ts) for the first bad seq and why.
 *
 * - broker.db: this thread reads every part (seq ranges, one snapshot) and walks it, or hands it to the
 *   worker, which holds no SQLite connection and loads no SQLite (it starts sooner).
 * - An export: its bytes are shared; each thread takes the next part (cut at a line end) not yet taken.
 *
 * The worker only saves time: a part it took and never handed back (it failed to start, or died) is walked
 * here afterwards. A short record is walked here alone (a worker's start costs more than it would save).
 * Written by hand: parsing and hashing 100,000 entries is CPU work, and Node gives a second core only to a
 * second thread.
 */
import type { KeyObject } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import type { Checkpoint } from '../core/model/audit-chain.js';
import { type AuditChainReader, openAuditChain, type StoredHistory } from '../store/sqlite/readonly.js';
import { checkSignaturesAhead } from './verify.js';
import { type Joined, joinParts, type WalkPart } from './walk.js';
import {
  type FileSource,
  type RowsPart,
  type Sharing,
  takeFileParts,
  type WorkerInput,
  type WorkerMessage,
  walkFilePart,
  walkRows,
} from './walk-parts.js';
import { hasEnded, takeWalkThread } from './walk-thread.js';

export interface WalkOptions {
  /**
   * Whether checkpoints must verify under a key the user trusts (audit.pub, `--pub`, `--key`): only then do
   * they pin the entries they cover. Without one an export's checkpoints name their own key, which whoever
   * wrote the export chose: every entry is then checked whole.
   */
  trusted: boolean;
  /** The worker's module (tests name the built one); null: this thread alone. Default: walk-thread.ts. */
  worker?: URL | null;
  /** Parts below which this thread walks alone. */
  minPartsForWorker?: number;
  sharing?: Sharing;
  /** broker.db rows per part. */
  rows?: number;
  /** Export bytes per part (cut at the next line end). */
  bytes?: number;
  /**
   * The keys the checkpoints will be checked under (verify.ts): broker.db's are checked while the worker
   * walks its last parts, when this thread would only wait.
   */
  checkpointKeys?: readonly KeyObject[];
}

/** Parts walked by each thread (the tests read it). */
export interface WalkThreads {
  here: number;
  worker: number;
}

/**
 * Parts small enough that each one's text is under V8's large-object size (~128 KiB, ~230 bytes an entry):
 * larger strings get fresh pages of their own each time, and decoding 100,000 entries took 72–87 ms in
 * 2,000-row parts against 3–4 ms in 500-row ones on the bench's VM (row 15, docs/performance.md).
 */
const DEFAULT_ROWS = 500;
const DEFAULT_BYTES = 96 * 1024;
/** 16,000 rows or 3 MiB of export: less, and the worker's start costs more than it saves. */
const DEFAULT_MIN_PARTS = 32;
/** broker.db parts handed to the worker and not yet walked by it, at most: more, and this thread walks one. */
const AHEAD = 2;

/** The parts walked so far, by index, by either thread. */
class Parts {
  // By index, not an array of `count`: a row added at seq 10^12 must make the first short range stop the
  // walk, not an array of 5·10^8 parts.
  readonly #parts = new Map<number, WalkPart | undefined>();
  off = false;
  readonly threads: WalkThreads = { here: 0, worker: 0 };

  constructor(readonly count: number) {}

  take(by: keyof WalkThreads): (index: number, part: WalkPart | undefined) => void {
    return (index, part) => {
      this.#parts.set(index, part);
      this.threads[by]++;
      if (part === undefined) this.off = true;
    };
  }

  /** In order, each part a worker took and never handed back walked by `walk` here; undefined if any is off. */
  joined(walk: (index: number) => WalkPart | undefined): Joined | undefined {
    const inOrder: WalkPart[] = [];
    for (let i = 0; i < this.count && !this.off; i++) {
      if (!this.#parts.has(i)) this.take('here')(i, walk(i));
      const part = this.#parts.get(i);
      if (part !== undefined) inOrder.push(part);
    }
    return this.off ? undefined : joinParts(inOrder);
  }
}

/** The worker for `count` parts, when one is worth starting (else this thread walks alone). */
function workerFor(count: number, options: WalkOptions): Worker | undefined {
  if (options.worker === null || count < (options.minPartsForWorker ?? DEFAULT_MIN_PARTS)) return undefined;
  const worker = takeWalkThread(options.worker ?? undefined);
  return worker === undefined || hasEnded(worker) ? undefined : worker;
}

/** Tells the worker what to walk; settles once it has handed back every part it walked, or ended. */
function handOver(
  worker: Worker,
  input: WorkerInput,
  onPart: (index: number, part: WalkPart | undefined) => void,
): Promise<void> {
  // Started unreferenced (walk-thread.ts); from now on the process waits for it: a verify whose main
  // thread finished first must not end before the worker's parts are in.
  worker.ref();
  return new Promise<void>((resolve) => {
    worker.on('message', (m: WorkerMessage) => {
      if ('done' in m) resolve();
      else onPart(m.index, m.part);
    });
    // A worker that fails or dies: what it took and did not hand back is walked by this thread.
    worker.on('error', () => resolve());
    worker.on('exit', () => resolve());
    worker.postMessage(input);
  }).finally(() => worker.unref());
}

/** broker.db's chain walked (above), its checkpoints read in the same snapshot as its extent. */
export interface DatabaseWalk {
  /** Undefined: something is off (the caller reads the record whole). */
  joined: Joined | undefined;
  checkpoints: Checkpoint[];
  threads: WalkThreads;
  /** The commands table and the audit rows' command_id column, in the walk's snapshot (contract 14 (v4)). */
  history?: StoredHistory;
}

/** broker.db at `path` walked (walkRanges). */
export function walkDatabase(path: string, options: WalkOptions): Promise<DatabaseWalk | undefined> {
  return walkRanges(openAuditChain(path), options);
}

/**
 * broker.db's audit chain walked in parts of `rows` seqs; undefined when the file holds no chain (absent, or
 * too old: no reader). This thread reads every part (one SQLite connection, one snapshot) and walks it, or
 * hands it to the worker while the worker has fewer than AHEAD waiting. Closes the reader.
 */
export async function walkRanges(
  reader: AuditChainReader | undefined,
  options: WalkOptions,
): Promise<DatabaseWalk | undefined> {
  if (reader === undefined) return undefined;
  try {
    const last = reader.last();
    if (last === undefined) return { joined: undefined, checkpoints: [], threads: { here: 0, worker: 0 } };
    const checkpoints = reader.checkpoints();
    // Contract 14 (v4): the commands table in the walk's snapshot; only its commands' entries are folded.
    const commands = reader.commands();
    const ids = new Set(commands.map((r) => r[1]));
    const pinnedUpTo = options.trusted ? Math.max(0, ...checkpoints.map((c) => c.seq)) : 0;
    const rows = options.rows ?? DEFAULT_ROWS;
    const parts = new Parts(Math.ceil(last / rows));
    const here = parts.take('here');
    /** Part i's rows as the reader joins them, and how many. */
    const readPart = (i: number) => {
      const n = Math.min((i + 1) * rows, last) - i * rows;
      const read = reader.rows(i * rows, i * rows + n);
      return read === undefined ? undefined : { ...read, n };
    };
    const walkHere = (i: number) => {
      const read = readPart(i);
      return read === undefined ? undefined : walkRows(read.entries, read.hashes, read.n, pinnedUpTo, ids);
    };
    const worker = workerFor(parts.count, options);
    const state = new SharedArrayBuffer(8);
    const walkedThere = new Int32Array(state);
    const finished =
      worker === undefined
        ? undefined
        : handOver(worker, { kind: 'rows', pinnedUpTo, state, rowIds: [...ids] }, parts.take('worker'));
    let handed = 0;
    for (let i = 0; i < parts.count && !parts.off && Atomics.load(walkedThere, 1) === 0; i++) {
      const read = readPart(i);
      if (read === undefined) {
        here(i, undefined);
        break;
      }
      const there =
        finished !== undefined &&
        (options.sharing === 'alternate' ? i % 2 === 1 : handed - Atomics.load(walkedThere, 0) < AHEAD);
      if (there) {
        const { entries } = read;
        // The bytes are moved when they own their memory (SQLite's answer does), else copied.
        const own = entries.byteOffset === 0 && entries.byteLength === entries.buffer.byteLength;
        const message: RowsPart = { index: i, entries, hashes: read.hashes, n: read.n };
        worker!.postMessage(message, own ? [entries.buffer as ArrayBuffer] : []);
        handed++;
      } else {
        here(i, walkRows(read.entries, read.hashes, read.n, pinnedUpTo, ids));
      }
    }
    worker?.postMessage({ end: true });
    // Read while the worker walks its last parts (this thread would only wait), in the walk's snapshot.
    const history = parts.off ? undefined : { rows: commands, links: reader.links(last) };
    if (!parts.off && options.checkpointKeys !== undefined)
      checkSignaturesAhead(checkpoints, options.checkpointKeys);
    await finished;
    const joined = parts.joined(walkHere);
    return { joined, checkpoints, threads: parts.threads, ...(history === undefined ? {} : { history }) };
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

/** An export (read by readShared, else copied) walked in parts cut at line ends, taken by either thread. */
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
  const source: FileSource = {
    bytes: shared ? (bytes.buffer as SharedArrayBuffer) : copyShared(bytes),
    length: bytes.length,
    cuts,
    pinnedUpTo: options.trusted ? lastCheckpointSeq(bytes) : 0,
  };
  const parts = new Parts(cuts.length - 1);
  const input: WorkerInput = {
    kind: 'file',
    source,
    state: new SharedArrayBuffer(8),
    sharing: options.sharing ?? 'claim',
  };
  const worker = workerFor(parts.count, options);
  const finished = worker === undefined ? undefined : handOver(worker, input, parts.take('worker'));
  if (finished === undefined) input.sharing = 'claim'; // alone: every part is this thread's
  takeFileParts(input, 0, parts.take('here'));
  await finished;
  return { joined: parts.joined((i) => walkFilePart(source, i)), threads: parts.threads };
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
