/**
 * Contract 16: what a node makes of another node's committed change (command-views.ts `heard`): newer news is
 * taken, older news (a late read-back, a catch-up read before a change) never is — so a command heard
 * final can never come back as approved and launch again.
 */
import { describe, expect, it } from 'vitest';
import type { Command } from '../model/lifecycle.js';
import { Views } from './command-views.js';

function cmd(version: number, state: Command['phase']['state'], extra: Partial<Command> = {}): Command {
  const phase =
    state === 'denied'
      ? { state, reason: 'OwnerDenied', detail: 'no', decided_at: 't', decided_by: 'bob' }
      : state === 'approved'
        ? { state, decided_at: 't', decided_by: 'bob' }
        : { state };
  return {
    id: 'c_1',
    version,
    tool: 'run_command',
    command: 'mark',
    args: {},
    display: ['mark'],
    client: 'local',
    node: 'beta',
    created_at: 't',
    review_expires_at: 't',
    phase,
    ...extra,
  } as Command;
}

describe('Views.heard (contract 16)', () => {
  it('takes a newer version into both views, and ignores the same or an older one', () => {
    const v = new Views();
    expect(v.heard(cmd(1, 'awaiting_review'))).toBe(true);
    expect(v.active('c_1')?.version).toBe(1);
    expect(v.shown('c_1')?.version).toBe(1);
    expect(v.pending).toBe(1);
    expect(v.heard(cmd(1, 'awaiting_review'))).toBe(false);
    expect(v.heard(cmd(2, 'approved'))).toBe(true);
    expect(v.active('c_1')?.phase.state).toBe('approved');
    expect(v.heard(cmd(1, 'awaiting_review'))).toBe(false);
    expect(v.active('c_1')?.version).toBe(2);
  });

  it('an amend (same version, a new preview) is news; the same preview again is not', () => {
    const v = new Views();
    v.heard(cmd(1, 'awaiting_review'));
    const preview = { status: 'ready', kind: 'diff', diff: '+x' } as unknown as Command['preview'];
    expect(v.heard(cmd(1, 'awaiting_review', { preview }))).toBe(true);
    expect(v.shown('c_1')?.preview).toEqual(preview);
    expect(v.heard(cmd(1, 'awaiting_review', { preview: structuredClone(preview) }))).toBe(false);
  });

  it('a command heard (or made) final never comes back from an older read', () => {
    const v = new Views();
    v.heard(cmd(2, 'approved'));
    expect(v.heard(cmd(3, 'denied'))).toBe(true);
    expect(v.active('c_1')).toBeUndefined();
    expect(v.pending).toBe(0);
    expect(v.heard(cmd(2, 'approved'))).toBe(false);
    expect(v.active('c_1')).toBeUndefined();
    // One this node finished itself (show), then a stale catch-up read of it approved.
    const own = new Views();
    own.load(cmd(2, 'approved', { id: 'c_2' }));
    own.changed(cmd(4, 'denied', { id: 'c_2' }));
    own.saved();
    own.show(cmd(4, 'denied', { id: 'c_2' }));
    expect(own.heard(cmd(2, 'approved', { id: 'c_2' }))).toBe(false);
    expect(own.active('c_2')).toBeUndefined();
  });

  it('a command the pending batch changed keeps its working version; the committed view follows the news', () => {
    const v = new Views();
    v.load(cmd(1, 'awaiting_review'));
    v.changed(cmd(2, 'approved'));
    expect(v.heard(cmd(2, 'denied'))).toBe(true);
    // This node's batch is still in flight: its working view is its own until the batch ends.
    expect(v.active('c_1')?.phase.state).toBe('approved');
    // The batch is refused (stale): the rollback takes the working view from the committed one.
    v.rollback();
    expect(v.active('c_1')).toBeUndefined();
    expect(v.working('c_1')).toBeUndefined();
  });
});
