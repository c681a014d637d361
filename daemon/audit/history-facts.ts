/**
 * What each chained entry says about its command (contract 14 (v4)): the facts `audit verify` compares with
 * the commands table (history-check.ts). Taken in the walk's one pass (walk.ts), from the entry parsed when
 * the walk parses it, else from its bytes: an entry a trusted checkpoint pins is not parsed (bench row 15),
 * and its bytes are the canonical JSON the daemon wrote, so its fields stand where RFC 8785 puts them:
 *
 * ```
 * {"actor":"…","at":"…","command_id":"…","data":{…},"event":"…","prev":"<64 hex>","seq":N}
 * ```
 *
 * Inside a JSON string every `"` is escaped, so `"state":"` found between `"data":{` and `"event":"` is a
 * key, never text; only the data's own keys are looked for (a grant's or preview's data holds no nested
 * key of these names; an entry holding a passkey is parsed whole by the walk anyway).
 */

/** One entry's facts about its command: plain data (a worker thread hands them over). */
export interface EntryFact {
  seq: number;
  command_id: string;
  event: string;
  state?: string;
  reason?: string;
  decided_by?: string;
  command?: string;
  args_sha256?: string;
  display_sha256?: string;
  /** A prune entry that named an argument (`"field":"args.…"`): the submit's digest no longer applies. */
  pruned_args?: true;
}

/**
 * The data keys taken: of every entry, then of a submit (a prune: its arguments' digest) — the check reads
 * nothing else of them (history-check.ts foldFact), and each key looked for costs a search of the data.
 */
type Key = 'state' | 'reason' | 'decided_by' | 'command' | 'args_sha256' | 'display_sha256';
const EVERY: readonly Key[] = ['state', 'reason', 'decided_by'];
const OF_EVENT: Readonly<Record<string, readonly Key[]>> = {
  submit: [...EVERY, 'command', 'args_sha256', 'display_sha256'],
  prune: [...EVERY, 'args_sha256'],
};
const keysOf = (event: string): readonly Key[] => OF_EVENT[event] ?? EVERY;
const PRUNED_ARG = '"field":"args.';

type Obj = Record<string, unknown>;

/** The facts of a parsed entry (`v` checked by the walk: an object of the entry's shape); undefined without a command. */
export function factOfEntry(v: Obj): EntryFact | undefined {
  if (typeof v.command_id !== 'string') return undefined;
  const data = v.data as Obj;
  const fact: EntryFact = { seq: v.seq as number, command_id: v.command_id, event: v.event as string };
  for (const k of keysOf(fact.event)) {
    const value = data[k];
    if (typeof value === 'string') fact[k] = value;
  }
  if (Array.isArray(data.pruned) && data.pruned.some((f) => String((f as Obj)?.field).startsWith('args.'))) {
    fact.pruned_args = true;
  }
  return fact;
}

/** The JSON string whose text starts at `from` (after its opening quote), decoded; and where it ends. */
function stringAt(text: string, from: number): [string, number] | undefined {
  let end = text.indexOf('"', from);
  while (end > 0 && text.charCodeAt(end - 1) === 0x5c) {
    // An escaped quote, unless the backslash before it is itself escaped.
    let n = 0;
    for (let i = end - 1; text.charCodeAt(i) === 0x5c; i--) n++;
    if (n % 2 === 0) break;
    end = text.indexOf('"', end + 1);
  }
  if (end < 0) return undefined;
  const raw = text.slice(from, end);
  if (!raw.includes('\\')) return [raw, end];
  try {
    return [JSON.parse(`"${raw}"`) as string, end];
  } catch {
    return undefined;
  }
}

const AT_KEY = '","at":"';
const ID_KEY = ',"command_id":"';
const DATA_KEY = ',"data":{';
const EVENT_KEY = ',"event":"';

/**
 * The facts of the canonical entry `text[start, end)` whose `prev` starts at `prevAt` (walk.ts found it), at
 * `seq`; undefined for an entry without a command (or one not `wanted`); null when its bytes are not where canonical JSON puts
 * them (the caller parses the entry instead).
 */
export function factOfText(
  text: string,
  start: number,
  prevAt: number,
  seq: number,
  wanted?: ReadonlySet<string>,
): EntryFact | undefined | null {
  const at = text.indexOf(AT_KEY, start);
  if (at < 0 || at >= prevAt) return null;
  const atEnd = text.indexOf('"', at + AT_KEY.length);
  if (atEnd < 0 || atEnd >= prevAt) return null;
  if (text.slice(atEnd + 1, atEnd + 1 + ID_KEY.length) !== ID_KEY) return undefined;
  const id = stringAt(text, atEnd + 1 + ID_KEY.length);
  if (id === undefined) return null;
  // Only commands the table holds are compared (their submits, parsed whole, find rows that are gone).
  if (wanted !== undefined && !wanted.has(id[0])) return undefined;
  const dataAt = id[1] + 1;
  if (text.slice(dataAt, dataAt + DATA_KEY.length) !== DATA_KEY) return null;
  // `,"prev":"` (9) ends the event field; the event's key is the last one before it.
  const eventKey = text.lastIndexOf(EVENT_KEY, prevAt - 9);
  if (eventKey < dataAt) return null;
  const fact: EntryFact = {
    seq,
    command_id: id[0],
    event: text.slice(eventKey + EVENT_KEY.length, prevAt - 10),
  };
  const data = text.slice(dataAt + DATA_KEY.length - 1, eventKey);
  for (const key of keysOf(fact.event)) {
    const k = data.indexOf(`"${key}":"`);
    if (k < 0) continue;
    const value = stringAt(data, k + key.length + 4);
    if (value === undefined) return null;
    fact[key] = value[0];
  }
  if (fact.event === 'prune' && data.includes(PRUNED_ARG)) fact.pruned_args = true;
  return fact;
}
