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
const KEPT_FIELDS = KEPT_EVENTS.map((e) => `,"event":"${e}"`);
const PASSKEY = '"passkey":';

/**
 * Whether the entry `text[start, eventEnd)` (its event field ending at `eventEnd`) may be one passkeys.ts
 * reads: a submit, a passkey's addition or removal, a config_loaded, or any entry holding a passkey
 * (core/decisions/change-records.ts keeps one with an approval; whatever another event may carry one day is checked too).
 */
export function mayBeKept(text: string, start: number, eventEnd: number): boolean {
  for (const f of KEPT_FIELDS) if (holds(text, eventEnd - f.length, f)) return true;
  return text.slice(start, eventEnd).includes(PASSKEY);
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
