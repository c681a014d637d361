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

/**
 * A part's folded history as a worker hands it over: each expectation flat in `packed` (FIELDS, in order),
 * a tenth of the structured-clone cost of a Map of objects (bench row 15).
 */
export interface PartHistory {
  packed: unknown[];
  missing: string[];
}

const FIELDS = [
  'submitted',
  'seq',
  'hasState',
  'hasArgs',
  'state',
  'reason',
  'decided_by',
  'command',
  'args',
  'display',
] as const;

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

  /** What was folded (a walk of the whole record in this thread). */
  folded(): FoldedHistory {
    return this.#folded;
  }

  /** What this part folded, packed to be handed over. */
  packed(): PartHistory {
    const packed: unknown[] = [];
    for (const [id, e] of this.#folded.expected) {
      packed.push(id);
      for (const f of FIELDS) packed.push(e[f]);
    }
    return { packed, missing: this.#folded.missing };
  }
}

/** The expectations a part packed. */
export function unpack(part: PartHistory): Map<string, Expected> {
  const out = new Map<string, Expected>();
  const p = part.packed;
  for (let i = 0; i < p.length; i += FIELDS.length + 1) {
    const e = {} as Record<string, unknown>;
    for (let k = 0; k < FIELDS.length; k++) if (p[i + 1 + k] !== undefined) e[FIELDS[k]!] = p[i + 1 + k];
    out.set(p[i] as string, e as unknown as Expected);
  }
  return out;
}

/** A later part's folded history over an earlier one's. */
export function mergeFolded(into: FoldedHistory, later: PartHistory | undefined): void {
  if (later === undefined) return;
  mergeExpected(into.expected, unpack(later));
  for (const id of later.missing) into.missing.push(id);
}
