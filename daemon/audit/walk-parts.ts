/**
 * The parts `audit verify`'s walk cuts a record into (walk-threads.ts) and the walking of one, the same in
 * either thread: broker.db's rows as the main thread read them, an export at line ends, each part walked
 * whole on its own (walk.ts). Loaded by the worker too, so it loads nothing else but the walk: no
 * SQLite (the main thread reads broker.db and hands the rows over).
 */
import { ChainWalk, type WalkPart, walkLines } from './walk.js';

/**
 * How the threads share the parts the main thread reads: `ahead`, the worker takes each while it has fewer
 * than a few waiting (else the main thread walks it); `alternate`, the worker the odd ones and the main
 * thread the even ones (tests: both surely walk).
 */
export type Sharing = 'ahead' | 'alternate';

/**
 * What the worker is told first: that parts will come (RowsPart or LinesPart messages, then `end`), and
 * entries to `pinnedUpTo` are pinned (walk.ts). `state` (shared): [parts walked, 1 once one is off].
 */
export interface WorkerInput {
  kind: 'parts';
  pinnedUpTo: number;
  state: SharedArrayBuffer;
  /** broker.db's commands table's ids (contract 14 (v4)); none for an export. */
  rowIds: string[];
}

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

/** Lines of an export the main thread read (cut at a line end), handed to the worker: moved, as rows are. */
export interface LinesPart {
  index: number;
  lines: Uint8Array;
}

export type ToWorker = WorkerInput | RowsPart | LinesPart | { end: true };

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

/** Lines of an export (its bytes, cut at line ends) walked as one part; entries to `pinnedUpTo` pinned. */
export function walkLinesPart(lines: Uint8Array, pinnedUpTo: number): WalkPart | undefined {
  const text = Buffer.from(lines.buffer, lines.byteOffset, lines.byteLength).toString('utf8');
  return walkLines(text, { part: true, pinnedUpTo });
}
