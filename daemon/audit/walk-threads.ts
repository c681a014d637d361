/**
 * `audit verify`'s first pass over two threads (contract 14; bench row 15 times it against `sha256sum`):
 * the record is cut into parts, each walked whole on its own (audit/walk.ts) by this thread or by one worker
 * (walk-worker.ts), then joined in order, each linked to the one before it (joinParts) — so what two
 * threads accept is what one walk from seq 1 accepts. A part found off stops both threads: the caller reads
 * the record whole (verify.ts) for the first bad seq and why.
 *
 * This thread reads every part and walks it, or hands it to the worker (moved, not copied) while the worker
 * has fewer than AHEAD waiting: broker.db in seq ranges (one snapshot; the worker holds no SQLite connection
 * and loads no SQLite, so it starts sooner), an export in parts cut at line ends (walk-export.ts).
 *
 * The worker only saves time: a part it took and never handed back (it failed to start, or died) is walked
 * here afterwards. A short record is walked here alone (a worker's start costs more than it would save).
 * Written by hand: parsing and hashing 100,000 entries is CPU work, and Node gives a second core only to a
 * second thread.
 */
import type { KeyObject } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import type { Checkpoint } from '../core/model/audit-chain.js';
import { type AuditChainReader, openAuditChain, type StoredHistory } from '../store/sqlite/readonly.js';
import { checkSignaturesAhead } from './verify.js';
import { type Joined, joinParts, type WalkPart } from './walk.js';
import { type ExportBytes, ExportParts, exportInMemory } from './walk-export.js';
import {
  type LinesPart,
  type RowsPart,
  type Sharing,
  type WorkerInput,
  type WorkerMessage,
  walkLinesPart,
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
/** Parts handed to the worker and not yet walked by it, at most: more, and this thread walks one. */
const AHEAD = 2;

/** The parts walked so far, by index, by either thread. */
class Parts {
  // By index, not an array of `count`: a row added at seq 10^12 must make the first short range stop the
  // walk, not an array of 5·10^8 parts.
  readonly #parts = new Map<number, WalkPart | undefined>();
  off = false;
  readonly threads: WalkThreads = { here: 0, worker: 0 };

  /** How many parts there are (an export's is known once it has been read to its end). */
  constructor(public count: number) {}

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
 * What `share` needs of a record's parts: part `i` read, walked here, or made a message for the worker
 * (with the buffers it moves).
 */
interface PartSource<P> {
  read(i: number): P | undefined;
  walk(p: P): WalkPart | undefined;
  message(i: number, p: P): { message: RowsPart | LinesPart; moved: ArrayBuffer[] };
}

/** A view's bytes moved when they own their memory (SQLite's answer and ExportParts' do), else copied. */
function owned(bytes: Uint8Array): ArrayBuffer[] {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? [bytes.buffer as ArrayBuffer]
    : [];
}

/**
 * Reads parts from 0 until `read` says the end (or `parts.count`) and walks each here or hands it to the
 * worker (module comment); then `meanwhile` (what this thread does while the worker finishes), and the parts
 * joined, each one the worker took and never handed back read and walked here.
 */
async function share<P>(
  parts: Parts,
  source: PartSource<P>,
  worker: Worker | undefined,
  input: Omit<WorkerInput, 'state'>,
  options: WalkOptions,
  meanwhile: () => void = () => {},
): Promise<Joined | undefined> {
  const state = new SharedArrayBuffer(8);
  const walkedThere = new Int32Array(state);
  const here = parts.take('here');
  const finished =
    worker === undefined ? undefined : handOver(worker, { ...input, state }, parts.take('worker'));
  let handed = 0;
  for (let i = 0; i < parts.count && !parts.off && Atomics.load(walkedThere, 1) === 0; i++) {
    const read = source.read(i);
    if (read === undefined) break;
    const there =
      finished !== undefined &&
      (options.sharing === 'alternate' ? i % 2 === 1 : handed - Atomics.load(walkedThere, 0) < AHEAD);
    if (there) {
      const { message, moved } = source.message(i, read);
      worker!.postMessage(message, moved);
      handed++;
    } else {
      here(i, source.walk(read));
    }
  }
  worker?.postMessage({ end: true });
  if (!parts.off) meanwhile();
  await finished;
  return parts.joined((k) => {
    const read = source.read(k);
    return read === undefined ? undefined : source.walk(read);
  });
}

/**
 * broker.db's audit chain walked in parts of `rows` seqs; undefined when the file holds no chain (absent, or
 * too old: no reader). This thread reads every part (one SQLite connection, one snapshot) and walks it, or
 * hands it to the worker (share). Closes the reader.
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
    type Read = { entries: Buffer; hashes: string; n: number };
    const source: PartSource<Read> = {
      read(i) {
        const n = Math.min((i + 1) * rows, last) - i * rows;
        const read = reader.rows(i * rows, i * rows + n);
        if (read === undefined) {
          parts.take('here')(i, undefined); // a missing seq, a NULL, a non-text value: off
          return undefined;
        }
        return { ...read, n };
      },
      walk: (r) => walkRows(r.entries, r.hashes, r.n, pinnedUpTo, ids),
      message: (index, r) => ({
        message: { index, entries: r.entries, hashes: r.hashes, n: r.n },
        moved: owned(r.entries),
      }),
    };
    let history: StoredHistory | undefined;
    const worker = workerFor(parts.count, options);
    const input = { kind: 'parts' as const, pinnedUpTo, rowIds: [...ids] };
    const joined = await share(parts, source, worker, input, options, () => {
      // Read while the worker walks its last parts (this thread would only wait), in the walk's snapshot.
      history = { rows: commands, links: reader.links(last) };
      if (options.checkpointKeys !== undefined) checkSignaturesAhead(checkpoints, options.checkpointKeys);
    });
    return { joined, checkpoints, threads: parts.threads, ...(history === undefined ? {} : { history }) };
  } finally {
    reader.close();
  }
}

/**
 * An export walked: read in parts cut at line ends (walk-export.ts: an open file, exportFile, or bytes
 * already in memory), each walked here or by the worker (share). The caller closes a file it opened.
 */
export async function walkFile(
  file: ExportBytes | Buffer,
  options: WalkOptions,
): Promise<{ joined: Joined | undefined; threads: WalkThreads }> {
  const bytes = Buffer.isBuffer(file) ? exportInMemory(file) : file;
  const cut = new ExportParts(bytes, options.bytes ?? DEFAULT_BYTES);
  const pinnedUpTo = options.trusted ? cut.lastCheckpointSeq() : 0;
  const parts = new Parts(Number.MAX_SAFE_INTEGER);
  let read = 0;
  const source: PartSource<Buffer> = {
    read(i) {
      if (i < read) return cut.again(i);
      const next = cut.next();
      if (next === undefined) parts.count = read;
      else read++;
      return next;
    },
    walk: (lines) => walkLinesPart(lines, pinnedUpTo),
    message: (index, lines) => ({ message: { index, lines }, moved: owned(lines) }),
  };
  const worker = workerFor(cut.estimate, options);
  const joined = await share(parts, source, worker, { kind: 'parts', pinnedUpTo, rowIds: [] }, options);
  return { joined, threads: parts.threads };
}
