/**
 * Where the walk (walk.ts) finds what it needs in an entry's bytes without parsing it: the hash field of an
 * export line, `prev`'s place counted back from an entry's end, and whether an entry may be one passkeys.ts
 * reads. Fixed by the canonical JSON (RFC 8785) the daemon writes: fields sorted, no spaces.
 */
import { CONFIG_LOADED, PASSKEY_KEY_EVENTS } from '../core/model/passkey-ledger.js';

/** The hash field of an export line: `,"hash":"` and 64 hex digits, then `"`. */
export const HASH_KEY = ',"hash":"';
export const HASH_FIELD_LENGTH = HASH_KEY.length + 64 + 1;

/**
 * Where an entry's `prev` starts, counted back from its end: `<64 hex>","seq":<seq>}` — 64 + 8 + the seq's
 * digits + 1. An export line's hash field ends where `,"prev":"` (9) starts: 9 + 64 + 8 + digits + 1 back.
 */
export const PREV_BACK = 73;
export const FIELD_END_BACK = 82;

/**
 * What passkeys.ts reads: a submit's `data.args_sha256`, the entries that add or remove a passkey and
 * `config_loaded` (the key history: core/model/passkey-ledger.ts) — each found by its event field, as it ends
 * the fields before `hash`/`prev` in canonical order — and any entry's `data.passkey` (a key is written
 * `"passkey":` wherever it stands; inside a string its quotes would be escaped).
 */
export const KEPT_EVENTS: readonly string[] = ['submit', ...PASSKEY_KEY_EVENTS, CONFIG_LOADED];
const PASSKEY = '"passkey":';

const KEPT = new Set(KEPT_EVENTS);

/**
 * Whether entries of one chunk of text, asked in order, may be ones passkeys.ts reads: a submit, a
 * passkey's addition or removal, a config_loaded (by the event field ending the entry's fields before
 * `hash`/`prev`: `text[start, eventEnd)` ends with it), or any entry holding a passkey (core/decisions/
 * change-records.ts keeps one with an approval; whatever another event may carry one day is checked too).
 * A superset is sound (what it names is parsed whole): an event field not as the daemon writes it, and a
 * `"passkey":` starting inside the entry, count.
 */
export class KeptScan {
  readonly #text: string;
  /** The first `"passkey":` at or after the last entry asked; -1: none in the rest; -2: not looked for. */
  #passkey = -2;

  constructor(text: string) {
    this.#text = text;
  }

  /** Each `start` at or after the one asked before (the chunk is read once for `"passkey":`, in C). */
  mayBeKept(start: number, eventEnd: number): boolean {
    const text = this.#text;
    // The event's name is the last string before eventEnd (names hold no quote): one slice, not one per
    // kept event (a sixth of the walk's own cost, bench row 15).
    if (text.charCodeAt(eventEnd - 1) !== 0x22) return true;
    if (KEPT.has(text.slice(text.lastIndexOf('"', eventEnd - 2) + 1, eventEnd - 1))) return true;
    if (this.#passkey !== -1 && this.#passkey < start) this.#passkey = text.indexOf(PASSKEY, start);
    return this.#passkey !== -1 && this.#passkey < eventEnd;
  }
}

/**
 * Whether `text` holds `s` at `at`: what `startsWith(s, at)` says, but a slice compared is 2–3× faster
 * on a chunk of 2,000 entries (Node 20's V8, bench row 15).
 */
export function holds(text: string, at: number, s: string): boolean {
  return at >= 0 && text.slice(at, at + s.length) === s;
}

/** Decimal digits of a whole number from 1. */
export function digitsOf(n: number): number {
  let d = 1;
  for (let p = 10; p <= n; p *= 10) d++;
  return d;
}
