/**
 * The PostgreSQL store's memory (mirror.ts): what the broker reads synchronously, within its documented
 * window — every active command, the newest `window` finals and their request_ids, live grants, token
 * hashes — and a late read never replacing a newer row.
 */
import { describe, expect, it } from 'vitest';
import type { Command, Grant } from '../../core/index.js';
import { Mirror } from './mirror.js';

function command(n: number, state: 'awaiting_review' | 'denied', version = 1): Command {
  const base = {
    id: `c_${n}`,
    version,
    tool: 'run_command_wait' as const,
    command: 'echo',
    args: {},
    display: ['echo'],
    client: 'local',
    request_id: `r${n}`,
    created_at: '2026-11-30T10:00:00.000Z',
    review_expires_at: '2026-11-30T11:00:00.000Z',
  };
  return state === 'awaiting_review'
    ? { ...base, phase: { state } }
    : {
        ...base,
        phase: {
          state,
          reason: 'OwnerDenied',
          detail: 'no',
          decided_at: base.created_at,
          decided_by: 'owner',
        },
      };
}

describe('the PostgreSQL store memory', () => {
  it('keeps every active command and the newest `window` finals, with their request_ids', () => {
    const m = new Mirror(3);
    for (let i = 1; i <= 6; i++) m.applyCommand(command(i, 'denied', 2), i);
    m.applyCommand(command(7, 'awaiting_review'), 7);
    m.applyCommand(command(0, 'awaiting_review'), 0);
    expect(m.recentFinal(10).map((c) => c.id)).toEqual(['c_6', 'c_5', 'c_4']);
    expect(m.command('c_1')).toBeUndefined();
    expect(m.byRequest('local', 'r1')).toBeUndefined();
    expect(m.byRequest('local', 'r5')?.id).toBe('c_5');
    expect(m.active().map((c) => c.id)).toEqual(['c_0', 'c_7']);
    // An old active command becoming final is older than every final held: outside the window.
    m.applyCommand(command(0, 'denied', 2), 0);
    expect(m.command('c_0')).toBeUndefined();
    expect(m.active().map((c) => c.id)).toEqual(['c_7']);
    // A late read of an older version changes nothing.
    m.applyCommand(command(7, 'denied', 2), 7);
    m.applyCommand(command(7, 'awaiting_review', 1), 7);
    expect(m.command('c_7')?.version).toBe(2);
    expect(m.recentFinal(1).map((c) => c.id)).toEqual(['c_7']);
  });

  it('grants by rev, live ones in creation order; token hashes both ways, the old hash forgotten', () => {
    const m = new Mirror(2);
    const g = (id: string, state: Grant['state']): Grant => ({
      id,
      command: 'echo',
      client: '*',
      state,
      source: 'owner',
      created_by: 'owner',
      created_at: '2026-11-30T10:00:00.000Z',
    });
    m.applyGrant(g('g2', 'live'), 2, 1);
    m.applyGrant(g('g1', 'live'), 1, 1);
    expect(m.liveGrants().map((x) => x.id)).toEqual(['g1', 'g2']);
    m.applyGrant(g('g1', 'revoked'), 1, 2);
    m.applyGrant(g('g1', 'live'), 1, 1); // late
    expect(m.liveGrants().map((x) => x.id)).toEqual(['g2']);
    expect(m.grant('g1')?.state).toBe('revoked');
    m.applyToken('owners', 'alice', 'h1', 1);
    m.applyToken('owners', 'alice', 'h2', 2);
    m.applyToken('owners', 'alice', 'h1', 1); // late
    expect(m.tokens.owners.byHash.get('h1')).toBeUndefined();
    expect(m.tokens.owners.byHash.get('h2')).toBe('alice');
    expect(m.tokens.owners.all()).toEqual(new Map([['alice', 'h2']]));
  });
});
