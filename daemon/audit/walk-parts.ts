/**
 * The parts `audit verify`'s walk cuts a record into (walk-threads.ts) and the walking of one, the same in
 * either thread: broker.db's rows as the main thread read them, an export at line ends, each part walked
 * whole on its own (walk.ts). Loaded by the worker too, so it loads nothing else but the walk: no
 * SQLite (the main thread reads broker.db and hands the rows over).
 */
import { ChainWalk, type WalkPart, walkLines } from './walk.js';

/** An export's bytes, cut into parts at `cuts` (line ends); entries to `pinnedUpTo` are pinned (walk.ts). */
export interface FileSource {
  bytes: SharedArrayBuffer;
  length: number;
  cuts: number[];
  pinnedUpTo: number;
}

/**
 * How the threads share an export's parts: `claim`, each takes the next one not yet taken (a shared
 * counter); `alternate`, the main thread the even ones and the worker the odd ones (tests: both surely walk).
 */
export type Sharing = 'claim' | 'alternate';

/**
 * What the worker is told first: an export to take parts of itself, or that broker.db rows will come
 * (RowsPart messages, then `end`). `state` (shared): [parts taken (file) or walked (rows), 1 once one is off].
 */
export type WorkerInput =
  | { kind: 'file'; source: FileSource; state: SharedArrayBuffer; sharing: Sharing }
  | { kind: 'rows'; pinnedUpTo: number; state: SharedArrayBuffer; rowIds: string[] };

/**
 * broker.db rows the main thread read (store/sqlite/readonly.ts's range), handed to the worker: the entries'
 * bytes are moved, not copied (a Buffer arrives as a plain Uint8Array).
 */
export interface RowsPart {
  index: number;
  entries: Uint8Array;
  hashes: string;
  n: number;
}

export type ToWorker = WorkerInput | RowsPart | { end: true };

/** A message from the worker: a part walked (undefined: found off), or that it has finished. */
export type WorkerMessage = { index: number; part: WalkPart | undefined } | { done: true };

/** `n` rows as the reader joins them (entries' bytes by newlines, hashes end to end) walked as one part. */
export function walkRows(
  entries: Uint8Array,
  hashes: string,
  n: number,
  pinnedUpTo: number,
  rows: ReadonlySet<string>,
): WalkPart | undefined {
  // broker.db's rows only: the commands table beside them, whose ids are `rows` (contract 14 (v4)).
  const walk = new ChainWalk({ part: true, pinnedUpTo, history: { rows } });
  // Decoded here, in whichever thread walks the part: the thread that reads them only reads.
  const text = Buffer.from(entries.buffer, entries.byteOffset, entries.byteLength).toString('utf8');
  return walk.rows(text, hashes, n) ? walk.part() : undefined;
}

/** Part `i` of an export walked. */
export function walkFilePart(source: FileSource, i: number): WalkPart | undefined {
  const text = Buffer.from(source.bytes, 0, source.length).toString(
    'utf8',
    source.cuts[i],
    source.cuts[i + 1],
  );
  return walkLines(text, { part: true, pinnedUpTo: source.pinnedUpTo });
}

/**
 * Takes an export's parts as `sharing` says (`thread` 0: the main one, 1: the worker) and walks each,
 * handing it to `done`, until none is left or one was found off (then `state` tells the other to stop too).
 */
export function takeFileParts(
  input: Extract<WorkerInput, { kind: 'file' }>,
  thread: 0 | 1,
  done: (index: number, part: WalkPart | undefined) => void,
): void {
  const state = new Int32Array(input.state);
  const count = input.source.cuts.length - 1;
  let mine = thread;
  for (;;) {
    if (Atomics.load(state, 1) !== 0) return;
    let index: number;
    if (input.sharing === 'claim') index = Atomics.add(state, 0, 1);
    else {
      index = mine;
      mine += 2;
    }
    if (index >= count) return;
    const part = walkFilePart(input.source, index);
    if (part === undefined) Atomics.store(state, 1, 1);
    done(index, part);
  }
}
