/**
 * The history check's share of the walk's one pass (contract 14 (v4), walk.ts): each entry's facts about its
 * command (history-facts.ts) folded at once into that command's expectation (history-check.ts), so no
 * entry's facts are kept — only one expectation per command the commands table holds. A submit of a
 * command the table does not hold is noted (the history hides it). Plain data out, so a worker thread can
 * hand it over; parts are joined in order (mergeFolded).
 */
import { type Expected, foldFact, mergeExpected } from './history-check.js';
import { factOfEntry, factOfText } from './history-facts.js';

/** What a part of the record (or the whole) says the history must show. */
export interface FoldedHistory {
  expected: Map<string, Expected>;
  /** Commands a submit entry names that the table does not hold, in seq order. */
  missing: string[];
}

export const emptyFolded = (): FoldedHistory => ({ expected: new Map(), missing: [] });

export class HistoryFold {
  readonly #rows: ReadonlySet<string> | undefined;
  readonly #folded = emptyFolded();

  /** `rows`: the ids the commands table holds (undefined: every command is folded). */
  constructor(rows: ReadonlySet<string> | undefined) {
    this.#rows = rows;
  }

  /** A pinned entry's bytes (walk.ts found `prev` at `prevAt`); false when they are not canonical. */
  text(text: string, start: number, prevAt: number, seq: number): boolean {
    if (this.#rows?.size === 0) return true; // no command to compare: nothing to take
    const fact = factOfText(text, start, prevAt, seq, this.#rows);
    if (fact === null) return false;
    if (fact !== undefined) foldFact(this.#folded.expected, fact);
    return true;
  }

  /** An entry the walk parsed and found whole. */
  entry(v: Record<string, unknown>): void {
    const fact = factOfEntry(v);
    if (fact === undefined) return;
    if (this.#rows === undefined || this.#rows.has(fact.command_id)) foldFact(this.#folded.expected, fact);
    else if (fact.event === 'submit') this.#folded.missing.push(fact.command_id);
  }

  result(): FoldedHistory {
    return this.#folded;
  }
}

/** A later part's folded history over an earlier one's. */
export function mergeFolded(into: FoldedHistory, later: FoldedHistory | undefined): void {
  if (later === undefined) return;
  mergeExpected(into.expected, later.expected);
  for (const id of later.missing) into.missing.push(id);
}
