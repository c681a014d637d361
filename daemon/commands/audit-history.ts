/**
 * `audit verify`'s check of the history against the chain (contract 14 (v4), audit/history-check.ts): the
 * facts the walk took from every entry, against one read of the commands table and the audit rows'
 * `command_id` column made in the walk's own snapshot (a running daemon's next change is in neither).
 * Prints `mismatch: <command id>: <field>`, one line each.
 */
import { join } from 'node:path';
import {
  type AuditLink,
  type ChainInput,
  digestOf,
  type EntryFact,
  factOfEntry,
  type HistoryRow,
  historyMismatches,
  type Mismatch,
} from '../audit/index.js';
import { escapeForTerminal } from '../base/index.js';

/** A command row as broker.db or the shared database hands it (store/*\/readonly.ts's StoredHistoryRow). */
export type StoredRow = readonly [
  number,
  string,
  unknown,
  unknown,
  unknown,
  unknown,
  unknown,
  unknown,
  string | null,
  string | null,
];

/** Stored rows and links as read together. */
export interface StoredHistoryRead {
  rows: readonly StoredRow[];
  links: ReadonlyArray<readonly [number, string | null]>;
}

function parsed(json: string | null): unknown {
  if (json === null) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

function* rowsOf(stored: readonly StoredRow[]): Generator<HistoryRow> {
  for (const [seq, id, state, bodyId, phaseState, reason, decidedBy, command, args, display] of stored) {
    yield {
      seq,
      id,
      body_id: bodyId,
      state,
      phase_state: phaseState,
      reason,
      decided_by: decidedBy,
      command,
      args_sha256: digestOf(parsed(args)),
      display_sha256: digestOf(parsed(display)),
    };
  }
}

/** The mismatches between the walk's facts and the stored history. */
export function storedMismatches(facts: readonly EntryFact[], stored: StoredHistoryRead): Mismatch[] {
  const links: AuditLink[] = stored.links.map(([seq, id]) => ({ seq: Number(seq), command_id: id }));
  return historyMismatches(facts, rowsOf(stored.rows), links);
}

/** The lines `audit verify` prints for them. */
export function mismatchLines(found: readonly Mismatch[]): string[] {
  return found.map((m) => `mismatch: ${escapeForTerminal(m.id)}: ${m.field}`);
}

/** Where the history is, and what the walk read of it (undefined: read it here). */
export interface HistorySource {
  /** The shared database's URL, or null: broker.db in `dataDir`. */
  url: string | null;
  dataDir: string;
  read?: StoredHistoryRead | undefined;
  /** What the walk took from every entry (undefined: it stopped; verify.ts's entries are read instead). */
  facts?: readonly EntryFact[] | undefined;
}

/**
 * The mismatch lines of a chain found whole: with the walk's facts and read, or — when the walk stopped and
 * verify.ts found the chain whole anyway — from the entries verify.ts read and a read of the history now.
 */
export async function historyLines(source: HistorySource, kept: ChainInput): Promise<string[]> {
  let read = source.read;
  // No facts: the walk stopped, and `kept` is every entry verify.ts read.
  const facts =
    source.facts ??
    kept.entries.flatMap((e) => {
      const f = 'value' in e ? factOfEntry(e.value) : undefined;
      return f === undefined ? [] : [f];
    });
  if (read === undefined) {
    if (source.url === null) {
      const { readHistory } = await import('../store/sqlite/readonly.js');
      read = readHistory(join(source.dataDir, 'broker.db'));
    } else {
      const { readPgHistory } = await import('../store/postgres/index.js');
      read = await readPgHistory(source.url);
    }
  }
  return read === undefined ? [] : mismatchLines(storedMismatches(facts, read));
}
