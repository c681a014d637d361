import { describe, expect, it } from 'vitest';
import { configGrantId } from '../runtime/grant-book.js';
import { end, type Grant, isLive, jsonEqual, matches, pick, sortedKeysJson, use } from './grant-rules.js';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function grant(over: Partial<Grant> = {}): Grant {
  return {
    id: 'g_test0001',
    command: 'say',
    client: 'local',
    state: 'live',
    source: 'owner',
    created_by: 'owner',
    created_at: '2026-12-01T10:00:00.000Z',
    expires_at: '2026-12-01T11:00:00.000Z',
    ...over,
  };
}

describe('jsonEqual (contract 8: same keys and values, key order ignored)', () => {
  it('ignores key order at every level', () => {
    expect(
      jsonEqual({ a: 1, b: { c: [1, { d: 'x', e: null }] } }, { b: { c: [1, { e: null, d: 'x' }] }, a: 1 }),
    ).toBe(true);
  });
  it('tells different values, keys, types and array orders apart', () => {
    expect(jsonEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1, c: 2 })).toBe(false);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ 0: 'a' }, ['a'])).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual({ a: null }, {})).toBe(false);
  });
  it('sortedKeysJson gives JSON-equal values the same text', () => {
    expect(sortedKeysJson({ b: 1, a: [{ y: 2, x: 1 }] })).toBe(sortedKeysJson({ a: [{ x: 1, y: 2 }], b: 1 }));
    expect(sortedKeysJson({ a: 1 })).not.toBe(sortedKeysJson({ a: 2 }));
  });
});

describe('matching', () => {
  const req = { command: 'say', client: 'local', args: { text: 'hi' } };

  it('matches its command, its client, and any args when it has none', () => {
    expect(matches(grant(), req, T0)).toBe(true);
    expect(matches(grant(), { ...req, command: 'other' }, T0)).toBe(false);
    expect(matches(grant(), { ...req, client: 'chatgpt' }, T0)).toBe(false);
    expect(matches(grant({ client: '*' }), { ...req, client: 'chatgpt' }, T0)).toBe(true);
  });

  it('[c16.grant-node] on a shared database, matches its node’s commands only, every node’s with `*`, and none when it names no node', () => {
    const onBeta = { ...req, node: 'beta' };
    expect(matches(grant({ node: 'alpha' }), onBeta, T0)).toBe(false);
    expect(matches(grant({ node: 'beta' }), onBeta, T0)).toBe(true);
    expect(matches(grant({ node: '*' }), onBeta, T0)).toBe(true);
    // Stored before grants named a node and not adopted: fail closed.
    expect(matches(grant(), onBeta, T0)).toBe(false);
    // A store of its own asks with no node: every command is this daemon's, as before v4.
    expect(matches(grant({ node: 'alpha' }), req, T0)).toBe(true);
  });

  it('with args, matches only JSON-equal arguments', () => {
    const g = grant({ args: { text: 'hi' } });
    expect(matches(g, req, T0)).toBe(true);
    expect(matches(g, { ...req, args: { text: 'hi!' } }, T0)).toBe(false);
    expect(matches(g, { ...req, args: { text: 'hi', extra: 1 } }, T0)).toBe(false);
  });

  it('stops at expires_at exactly, and never matches an ended grant', () => {
    const g = grant();
    expect(isLive(g, Date.parse(g.expires_at!) - 1)).toBe(true);
    expect(isLive(g, Date.parse(g.expires_at!))).toBe(false);
    expect(matches(g, req, Date.parse(g.expires_at!))).toBe(false);
    for (const state of ['revoked', 'expired', 'spent'] as const)
      expect(matches(grant({ state }), req, T0)).toBe(false);
    expect(isLive(grant({ expires_at: undefined }), T0 + 1e12)).toBe(true);
  });

  it('pick takes the oldest live match', () => {
    const older = grant({ id: 'g_older001', state: 'spent' });
    const a = grant({ id: 'g_aaaaaaaa', args: { text: 'other' } });
    const b = grant({ id: 'g_bbbbbbbb' });
    const c = grant({ id: 'g_cccccccc' });
    expect(pick([older, a, b, c], req, T0)?.id).toBe('g_bbbbbbbb');
    expect(pick([a], req, T0)).toBeUndefined();
  });
});

describe('uses and ending', () => {
  it('each use takes one; the last makes it spent with ended_at', () => {
    let g = grant({ uses_left: 2 });
    g = use(g, 'A');
    expect(g).toMatchObject({ state: 'live', uses_left: 1 });
    expect(g.ended_at).toBeUndefined();
    g = use(g, 'B');
    expect(g).toMatchObject({ state: 'spent', uses_left: 0, ended_at: 'B' });
  });
  it('a grant without a count is unchanged by a use', () => {
    const g = grant();
    expect(use(g, 'A')).toBe(g);
  });
  it('end records the state and time, and changes nothing else', () => {
    expect(end(grant(), 'revoked', 'X')).toEqual({ ...grant(), state: 'revoked', ended_at: 'X' });
  });
  it('config grant ids are stable for an unchanged entry and change with it', () => {
    const e = { command: 'say', client: '*', args: { text: 'hi', b: 1 } };
    const id = configGrantId(e);
    expect(id).toMatch(/^g_cfg_[A-Za-z0-9_-]{22}$/);
    expect(configGrantId({ client: '*', args: { b: 1, text: 'hi' }, command: 'say' })).toBe(id);
    expect(configGrantId({ ...e, client: 'local' })).not.toBe(id);
  });
  it('[c16.grant-node] on a shared database a config grant id names its node: one entry in two nodes’ configs is two grants', () => {
    const e = { command: 'say', client: '*' };
    expect(configGrantId(e, 'alpha')).not.toBe(configGrantId(e, 'beta'));
    expect(configGrantId(e, 'alpha')).toBe(configGrantId({ client: '*', command: 'say' }, 'alpha'));
    expect(configGrantId(e, 'alpha')).not.toBe(configGrantId(e));
  });
});
