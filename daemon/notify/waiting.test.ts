/**
 * One `waiting` message per command each time it starts awaiting review (contract 13.1 (v4); issue 36 item 1),
 * on a fake clock: the change at version 1, a preview's two amends at the same version and a quorum approval
 * make one message; a previewed command is told when its preview is settled or 2 s after it started waiting.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import type { Command } from '../core/index.js';
import { PREVIEW_WAIT_MS, WaitingNotices } from './waiting.js';

const T = '2026-12-06T10:00:00.000Z';
const cmd = (id: string, over: Partial<Command> = {}): Command => ({
  id,
  version: 1,
  tool: 'upstream',
  command: 'notes__write_file',
  args: { path: '/n/a', content: 'x' },
  display: ['notes', 'write_file'],
  client: 'local',
  created_at: T,
  review_expires_at: T,
  phase: { state: 'awaiting_review' },
  ...over,
});

function notices(previewed: (c: Command) => boolean) {
  const clock = new FakeClock();
  const told: Command[] = [];
  const w = new WaitingNotices(clock, previewed, (c) => told.push(c));
  return { clock, told, w };
}

describe('[c13.1.once] exactly one waiting message per start of waiting', () => {
  it('a command with no preview is told at once, and once', () => {
    const { told, w } = notices(() => false);
    w.waiting(cmd('a'));
    w.waiting(cmd('a'));
    w.waiting(cmd('a', { version: 2 }));
    expect(told.map((c) => c.id)).toEqual(['a']);
  });

  it('a previewed command waits for its preview: pending amends tell nothing, ready tells once', () => {
    const { told, w, clock } = notices(() => true);
    w.waiting(cmd('a'));
    w.waiting(cmd('a', { preview: { kind: 'file_diff', status: 'pending' } }));
    expect(told).toEqual([]);
    w.waiting(cmd('a', { preview: { kind: 'file_diff', status: 'ready', diff: '' } }));
    expect(told.map((c) => c.preview?.status)).toEqual(['ready']);
    clock.advance(PREVIEW_WAIT_MS * 2);
    w.waiting(cmd('a', { preview: { kind: 'file_diff', status: 'ready', diff: '' } }));
    expect(told).toHaveLength(1);
  });

  it('a failed preview tells too; a slow one is told 2 s after the command started waiting, with what it has', () => {
    const { told, w, clock } = notices(() => true);
    w.waiting(cmd('f'));
    w.waiting(cmd('f', { preview: { kind: 'file_diff', status: 'failed', error: 'larger than 1 MiB' } }));
    w.waiting(cmd('s'));
    w.waiting(cmd('s', { preview: { kind: 'file_diff', status: 'pending' } }));
    clock.advance(PREVIEW_WAIT_MS - 1);
    expect(told.map((c) => c.id)).toEqual(['f']);
    clock.advance(1);
    expect(told.map((c) => [c.id, c.preview?.status])).toEqual([
      ['f', 'failed'],
      ['s', 'pending'],
    ]);
    // Its preview arriving later tells nothing more.
    w.waiting(cmd('s', { preview: { kind: 'file_diff', status: 'ready', diff: '' } }));
    expect(told).toHaveLength(2);
  });

  it('a command decided before its preview or the 2 s is never told; leaving and starting again tells again', () => {
    const { told, w, clock } = notices(() => true);
    w.waiting(cmd('d'));
    w.left('d');
    clock.advance(PREVIEW_WAIT_MS * 2);
    expect(told).toEqual([]);
    w.waiting(cmd('d'));
    clock.advance(PREVIEW_WAIT_MS);
    expect(told.map((c) => c.id)).toEqual(['d']);
  });

  it('a quorum approval (a later version) of a command it never saw start is no new start', () => {
    const { told, w } = notices(() => false);
    w.waiting(cmd('q', { version: 2 }));
    expect(told).toEqual([]);
  });
});
