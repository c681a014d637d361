/**
 * The parts `audit verify`'s walk cuts a record into (audit-walk.ts) and the walking of one, the same in
 * either thread: broker.db by seq ranges, an export at line ends, each part walked whole on its own
 * (audit/walk.ts). Loaded by the worker too, so it loads nothing else: the walk and broker.db's reader.
 */
import { ChainWalk, type WalkPart, walkLines } from '../audit/walk.js';
import { type AuditChainReader, openAuditChain } from '../store/sqlite/readonly.js';

/**
 * A record cut into parts: broker.db's seqs 1..last by `rows`, or an export's bytes at `cuts`; entries to
 * `pinnedUpTo` are pinned by a checkpoint (audit/walk.ts).
 */
export type WalkSource = { pinnedUpTo: number } & (
  | { kind: 'db'; path: string; last: number; rows: number }
  | { kind: 'file'; bytes: SharedArrayBuffer; length: number; cuts: number[] }
);

/**
 * How the threads share the parts: `claim`, each takes the next one not yet taken (a shared counter);
 * `alternate`, this thread the even ones and the worker the odd ones (tests: both threads surely walk).
 */
export type Sharing = 'claim' | 'alternate';

/** What the worker is sent (structured-cloned; the buffers are shared, not copied). */
export interface WorkerInput {
  source: WalkSource;
  /** [next part to take, 1 once a part was found off]. */
  state: SharedArrayBuffer;
  sharing: Sharing;
}

/** A message from the worker: a part walked (undefined: found off), or that it has finished. */
export type WorkerMessage = { index: number; part: WalkPart | undefined } | { done: true };

/** How many parts `source` has. */
export function partCount(source: WalkSource): number {
  return source.kind === 'db' ? Math.ceil(source.last / source.rows) : source.cuts.length - 1;
}

/** Walks parts of `source` by index, in the calling thread; `reader`: broker.db already open in this one. */
export function partWalker(
  source: WalkSource,
  reader?: AuditChainReader,
): { walk(index: number): WalkPart | undefined; close(): void } | undefined {
  const options = { part: true, pinnedUpTo: source.pinnedUpTo };
  if (source.kind === 'file') {
    const bytes = Buffer.from(source.bytes, 0, source.length);
    return {
      walk: (i) => walkLines(bytes.toString('utf8', source.cuts[i], source.cuts[i + 1]), options),
      close: () => {},
    };
  }
  const db = reader ?? openAuditChain(source.path);
  if (db === undefined) return undefined;
  return {
    walk(i) {
      const walk = new ChainWalk(options);
      const after = i * source.rows;
      const upTo = Math.min(after + source.rows, source.last);
      const read = db.rows(after, upTo);
      return read !== undefined && walk.rows(read.entries, read.hashes, upTo - after)
        ? walk.part()
        : undefined;
    },
    close: () => db.close(),
  };
}

/**
 * Takes parts as `sharing` says (`thread` 0: the main one, 1: the worker) and walks each, handing it to
 * `done`, until none is left or one was found off (then `state` tells the other thread to stop too).
 */
export function takeParts(
  input: WorkerInput,
  thread: 0 | 1,
  walk: (index: number) => WalkPart | undefined,
  done: (index: number, part: WalkPart | undefined) => void,
): void {
  const state = new Int32Array(input.state);
  const count = partCount(input.source);
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
    const part = walk(index);
    if (part === undefined) Atomics.store(state, 1, 1);
    done(index, part);
  }
}
