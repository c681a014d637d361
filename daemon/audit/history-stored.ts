/**
 * `audit verify`'s check of the history against the chain (contract 14 (v4), history-check.ts): what
 * the walk folded from every entry, against one read of the commands table and the audit rows whose
 * `command_id` column may have moved an entry between cards, both read in the walk's own snapshot (a
 * running daemon's next change is in neither). Prints `mismatch: <command id>: <field>`, one line each.
 */

import { escapeForTerminal } from '../base/index.js';
import type { StoredHistoryRead } from '../store/read.js';
import {
  digestOfJson,
  type HistoryRow,
  historyMismatches,
  type Mismatch,
  movedLinks,
} from './history-check.js';
import { emptyFolded, type FoldedHistory, HistoryFold } from './history-fold.js';
import type { ChainInput } from './verify.js';

/** Stored rows and picked audit rows (`[seq, command_id column, entry]`) as read together (store/read.ts). */
export type { StoredHistoryRead };

/** A command row as broker.db or the shared database hands it (store/rows/history.ts). */
export type StoredRow = StoredHistoryRead['rows'][number];

function* rowsOf(stored: readonly StoredRow[], expected: FoldedHistory['expected']): Generator<HistoryRow> {
  for (const [seq, id, state, bodyId, phaseState, reason, decidedBy, command, args, display] of stored) {
    const e = expected.get(id);
    yield {
      seq,
      id,
      body_id: bodyId,
      state,
      phase_state: phaseState,
      reason,
      decided_by: decidedBy,
      command,
      args_sha256: digestOfJson(args, e?.args),
      display_sha256: digestOfJson(display, e?.display),
    };
  }
}

/** The mismatches between what the walk folded and the stored history. */
export function storedMismatches(folded: FoldedHistory, stored: StoredHistoryRead): Mismatch[] {
  const moved = movedLinks(stored.links.map(([seq, id, entry]) => ({ seq, command_id: id, entry })));
  return historyMismatches(folded.expected, folded.missing, rowsOf(stored.rows, folded.expected), moved);
}

/** The lines `audit verify` prints for them. */
export function mismatchLines(found: readonly Mismatch[]): string[] {
  return found.map((m) => `mismatch: ${escapeForTerminal(m.id)}: ${m.field}`);
}

/** Where the history is, and what the walk read and folded of it (undefined: it stopped; read it here). */
export interface HistorySource {
  /** A read of the history in a snapshot of its own (the store's read port, store/read.ts). */
  reads: { history(): Promise<StoredHistoryRead | undefined> };
  read?: StoredHistoryRead | undefined;
  folded?: FoldedHistory | undefined;
}

/**
 * The mismatch lines of a chain found whole: with the walk's fold and read, or — when the walk stopped and
 * verify.ts found the chain whole anyway — from the entries verify.ts read and a read of the history now.
 */
export async function historyLines(source: HistorySource, kept: ChainInput): Promise<string[]> {
  let folded = source.folded;
  let read = source.read;
  if (folded === undefined || read === undefined) {
    // `kept` is every entry verify.ts read: every command folded (the rows' ids are not known here).
    const fold = new HistoryFold(undefined);
    for (const e of kept.entries) if ('value' in e) fold.entry(e.value);
    folded = fold.folded();
    read = await source.reads.history();
  }
  return read === undefined ? [] : mismatchLines(storedMismatches(folded ?? emptyFolded(), read));
}
