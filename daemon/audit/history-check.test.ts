/**
 * Contract 14 (v4): the facts each entry gives about its command are the same whether the walk parsed the
 * entry or read them off its pinned bytes (history-facts.ts) — with text an AI or an owner chose holding
 * quotes, backslashes and key-like text — and the check (history-check.ts) compares only what the entries
 * carry: entries written before a field was recorded never make a false mismatch, and a field they do carry
 * is always compared.
 */
import { describe, expect, it } from 'vitest';
import { type AuditEntry, chainEntry, GENESIS_HASH, sealEntry } from '../core/index.js';
import { digestOf, type HistoryRow, historyMismatches, movedLinks } from './history-check.js';
import { type EntryFact, factOfEntry } from './history-facts.js';
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

/** The rows as broker.db's reader joins them, walked with facts, pinned to `pinnedUpTo`. */
function walked(pinnedUpTo: number): { facts: EntryFact[]; parsed: EntryFact[] } {
  let prev = GENESIS_HASH;
  const texts: string[] = [];
  const hashes: string[] = [];
  entries.forEach((e, i) => {
    const { text, hash } = sealEntry(chainEntry(e, i + 1, prev));
    texts.push(text);
    hashes.push(hash);
    prev = hash;
  });
  const walk = new ChainWalk({ facts: true, pinnedUpTo });
  expect(walk.rows(texts.join('\n'), hashes.join(''), texts.length)).toBe(true);
  const parsed = texts.flatMap((t) => {
    const f = factOfEntry(JSON.parse(t) as Record<string, unknown>);
    return f === undefined ? [] : [f];
  });
  return { facts: walk.part().facts ?? [], parsed };
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

describe('[S.audit-history] the facts of an entry, parsed or read off its pinned bytes', () => {
  it('are the same either way, whatever text the entry holds', () => {
    const pinned = walked(entries.length);
    const whole = walked(0);
    expect(pinned.facts).toEqual(pinned.parsed);
    expect(whole.facts).toEqual(pinned.parsed);
    expect(pinned.parsed.map((f) => f.event)).toEqual(['submit', 'deny', 'grant_used', 'prune']);
    expect(pinned.parsed[1]).toMatchObject({ state: 'denied', reason: 'OwnerDenied', decided_by: 'ow"ner' });
    expect(pinned.parsed[3]).toMatchObject({ args_sha256: 'd'.repeat(64), pruned_args: true });
  });

  it('a row that agrees is no mismatch; each field that differs is named once', () => {
    const { facts } = walked(entries.length);
    const links = facts.map((f) => ({ seq: f.seq, command_id: f.command_id }));
    expect(historyMismatches(facts, [row()], links)).toEqual([]);
    expect(historyMismatches(facts, [row({ args_sha256: digestOf({ env: 'prod' }) })], links)).toEqual([
      { id, field: 'args' },
    ]);
    expect(historyMismatches(facts, [row({ state: 'succeeded' })], links)).toEqual([{ id, field: 'state' }]);
    // The row is gone: the history hides a command the chain holds.
    expect(historyMismatches(facts, [], links)).toEqual([{ id, field: 'command_id' }]);
  });

  it('entries written before a field was recorded compare nothing for it; those that carry it always do', () => {
    const old: EntryFact[] = [
      { seq: 1, command_id: id, event: 'submit', state: 'awaiting_review', command: 'deploy' },
      { seq: 2, command_id: id, event: 'deny', state: 'denied' },
      { seq: 3, command_id: id, event: 'prune', state: 'denied', pruned_args: true },
    ];
    const links = old.map((f) => ({ seq: f.seq, command_id: f.command_id }));
    const any = row({
      command: 'deploy',
      reason: 'Anything',
      decided_by: 'anyone',
      args_sha256: 'e'.repeat(64),
    });
    expect(historyMismatches(old, [any], links)).toEqual([]);
    // A v4 decision entry carries reason and decided_by: compared.
    const decided: EntryFact = { ...old[1]!, reason: 'PolicyDenied', decided_by: 'rule:no-prod' };
    expect(historyMismatches([old[0]!, decided], [any], links.slice(0, 2))).toEqual([
      { id, field: 'reason' },
      { id, field: 'decided_by' },
    ]);
  });

  it('an audit row whose command_id column is not its entry’s moves it between cards; an older grant row is not', () => {
    const facts: EntryFact[] = [
      { seq: 1, command_id: 'c_a', event: 'approve' },
      { seq: 2, command_id: 'c_b', event: 'grant_used' },
    ];
    expect([...movedLinks(facts, [{ seq: 1, command_id: 'c_b' }])].sort()).toEqual(['c_a', 'c_b']);
    expect([...movedLinks(facts, [{ seq: 1, command_id: null }])]).toEqual(['c_a']);
    expect([...movedLinks(facts, [{ seq: 1, command_id: 'c_a' }])]).toEqual([]);
    expect([
      ...movedLinks(facts, [
        { seq: 1, command_id: 'c_a' },
        { seq: 3, command_id: 'c_c' },
      ]),
    ]).toEqual(['c_c']);
  });
});
