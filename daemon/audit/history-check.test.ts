/**
 * Contract 14 (v4): the facts each entry gives about its command are the same whether the walk parsed the
 * entry or read them off its pinned bytes (history-facts.ts) — with text an AI or an owner chose holding
 * quotes, backslashes and key-like text — and the check (history-check.ts) compares only what the entries
 * carry: entries written before a field was recorded never make a false mismatch, and a field they do carry
 * is always compared.
 */
import { describe, expect, it } from 'vitest';
import { type AuditEntry, chainEntry, GENESIS_HASH, sealEntry } from '../core/index.js';
import { digestOf, expectations, type HistoryRow, historyMismatches, movedLinks } from './history-check.js';
import { type EntryFact, factOfEntry, factOfText } from './history-facts.js';
import { emptyFolded, mergeFolded } from './history-fold.js';
import { ChainWalk } from './walk.js';

const at = '2026-12-06T08:00:00.000Z';
const id = 'c_history0001';
const tricky = 'a "state":"succeeded","reason":"X" \\ \\" ünï ,"event":"submit"';
const entries: AuditEntry[] = [
  {
    at,
    actor: { kind: 'client', name: 'a"gent\\' },
    action: 'submit',
    command_id: id,
    version: 1,
    detail: {
      state: 'awaiting_review',
      command: 'dep"loy\\',
      args_sha256: 'a'.repeat(64),
      display_sha256: 'b'.repeat(64),
    },
  },
  {
    at,
    actor: { kind: 'owner', name: 'ow"ner' },
    action: 'deny',
    command_id: id,
    version: 2,
    detail: {
      state: 'denied',
      command: 'dep"loy\\',
      reason: 'OwnerDenied',
      decided_by: 'ow"ner',
      note: tricky,
    },
  },
  {
    at,
    actor: { kind: 'daemon', name: 'daemon' },
    action: 'grant_used',
    detail: { command_id: id, grant_id: 'g_1', command: 'x', state: 'live' },
  },
  {
    at,
    actor: { kind: 'daemon', name: 'daemon' },
    action: 'prune',
    command_id: id,
    version: 3,
    detail: {
      state: 'denied',
      reason: 'OwnerDenied',
      decided_by: 'ow"ner',
      pruned: [{ field: 'args.text', bytes: 5000, sha256: 'c'.repeat(64) }],
      args_sha256: 'd'.repeat(64),
    },
  },
  { at, actor: { kind: 'owner', name: 'owner' }, action: 'owner_login', detail: { note: tricky } },
];

/** The sealed entries' texts and hashes, as broker.db's reader joins them. */
function sealed(): { texts: string[]; hashes: string[] } {
  let prev = GENESIS_HASH;
  const texts: string[] = [];
  const hashes: string[] = [];
  entries.forEach((e, i) => {
    const { text, hash } = sealEntry(chainEntry(e, i + 1, prev));
    texts.push(text);
    hashes.push(hash);
    prev = hash;
  });
  return { texts, hashes };
}

/** What the walk folds, its entries pinned to `pinnedUpTo` (read off their bytes) or parsed. */
function folded(pinnedUpTo: number, rows?: ReadonlySet<string>) {
  const { texts, hashes } = sealed();
  const walk = new ChainWalk({ part: false, pinnedUpTo, history: rows === undefined ? {} : { rows } });
  expect(walk.rows(texts.join('\n'), hashes.join(''), texts.length)).toBe(true);
  const history = emptyFolded();
  mergeFolded(history, walk.part().history);
  return history;
}

/** Every entry's facts, parsed. */
function parsedFacts(): EntryFact[] {
  return sealed().texts.flatMap((t) => {
    const f = factOfEntry(JSON.parse(t) as Record<string, unknown>);
    return f === undefined ? [] : [f];
  });
}

function row(over: Partial<HistoryRow> = {}): HistoryRow {
  return {
    seq: 1,
    id,
    body_id: id,
    state: 'denied',
    phase_state: 'denied',
    reason: 'OwnerDenied',
    decided_by: 'ow"ner',
    command: 'dep"loy\\',
    args_sha256: 'd'.repeat(64),
    display_sha256: 'b'.repeat(64),
    ...over,
  };
}

describe('[c14.history] the facts of an entry, parsed or read off its pinned bytes', () => {
  it('are the same either way, whatever text the entry holds', () => {
    const { texts } = sealed();
    texts.forEach((text, i) => {
      const seq = i + 1;
      const prevAt = text.length - String(seq).length - 73; // `<64 hex>","seq":N}` (walk.ts PREV_BACK)
      const fact = factOfText(text, 0, prevAt, seq);
      expect(fact, text).toEqual(factOfEntry(JSON.parse(text) as Record<string, unknown>));
    });
    const facts = parsedFacts();
    expect(facts.map((f) => f.event)).toEqual(['submit', 'deny', 'grant_used', 'prune']);
    expect(facts[1]).toMatchObject({ state: 'denied', reason: 'OwnerDenied', decided_by: 'ow"ner' });
    expect(facts[3]).toMatchObject({ args_sha256: 'd'.repeat(64), pruned_args: true });
    // The walk folds the same, pinned or parsed; a command the table does not hold is only noted by its submit.
    expect(folded(entries.length)).toEqual(folded(0));
    expect(folded(entries.length).expected).toEqual(expectations(facts));
    expect(folded(entries.length, new Set(['c_other']))).toEqual({ expected: new Map(), missing: [id] });
  });

  it('a row that agrees is no mismatch; each field that differs is named once', () => {
    const e = expectations(parsedFacts());
    const none = new Set<string>();
    expect(historyMismatches(e, [], [row()], none)).toEqual([]);
    expect(historyMismatches(e, [], [row({ args_sha256: digestOf({ env: 'prod' }) })], none)).toEqual([
      { id, field: 'args' },
    ]);
    expect(historyMismatches(e, [], [row({ state: 'succeeded' })], none)).toEqual([{ id, field: 'state' }]);
    expect(historyMismatches(e, [], [row({ body_id: 'c_other' })], none)).toEqual([
      { id, field: 'command_id' },
    ]);
    // The row is gone: the history hides a command the chain holds.
    expect(historyMismatches(e, [], [], none)).toEqual([{ id, field: 'command_id' }]);
    expect(historyMismatches(new Map(), [id], [], none)).toEqual([{ id, field: 'command_id' }]);
  });

  it('entries written before a field was recorded compare nothing for it; those that carry it always do', () => {
    const old: EntryFact[] = [
      { seq: 1, command_id: id, event: 'submit', state: 'awaiting_review', command: 'deploy' },
      { seq: 2, command_id: id, event: 'deny', state: 'denied' },
      { seq: 3, command_id: id, event: 'prune', state: 'denied', pruned_args: true },
    ];
    const any = row({
      command: 'deploy',
      reason: 'Anything',
      decided_by: 'anyone',
      args_sha256: 'e'.repeat(64),
    });
    const none = new Set<string>();
    expect(historyMismatches(expectations(old), [], [any], none)).toEqual([]);
    // A v4 decision entry carries reason and decided_by: compared.
    const decided: EntryFact = { ...old[1]!, reason: 'PolicyDenied', decided_by: 'rule:no-prod' };
    expect(historyMismatches(expectations([old[0]!, decided]), [], [any], none)).toEqual([
      { id, field: 'reason' },
      { id, field: 'decided_by' },
    ]);
  });

  it('an audit row whose command_id column is not its entry’s moves it between cards; an older grant row is not', () => {
    const approve = JSON.stringify({ command_id: 'c_a', event: 'approve' });
    const grant = JSON.stringify({ command_id: 'c_b', event: 'grant_used' });
    const link = (command_id: string | null, entry: string) => ({ seq: 1, command_id, entry });
    expect([...movedLinks([link('c_b', approve)])].sort()).toEqual(['c_a', 'c_b']);
    expect([...movedLinks([link(null, approve)])]).toEqual(['c_a']);
    expect([...movedLinks([link('c_a', approve)])]).toEqual([]);
    expect([...movedLinks([link(null, grant)])]).toEqual([]);
    expect([...movedLinks([link('c_c', JSON.stringify({ event: 'owner_login' }))])]).toEqual(['c_c']);
  });
});
