/**
 * Which committed change is which event, and what each message says (contract 13.1): `waiting` once (its
 * first version), `decided` on approve or deny, `failed` on ERROR/UNKNOWN before any reconciliation; the
 * summary leaves argument values out unless `include_args`, and AI text cannot carry control characters.
 */
import { describe, expect, it } from 'vitest';
import type { Command } from '../core/index.js';
import { KINDS } from '../kinds/index.js';
import { commandMessage, eventOf } from './message.js';

const T = '2026-12-02T10:00:00.000Z';
const base: Command = {
  id: 'c_abc',
  version: 1,
  tool: 'run_command_wait',
  command: 'say',
  args: { text: 'hello\u001b[2J' },
  display: ['espeak-ng', 'hello'],
  client: 'local',
  created_at: T,
  review_expires_at: '2026-12-02T10:05:00.000Z',
  phase: { state: 'awaiting_review' },
};

describe('[c13.1.formats] events and messages', () => {
  it('tells waiting once, decided on approve/deny, failed before any reconciliation', () => {
    expect(eventOf(base)).toBe('waiting');
    expect(eventOf({ ...base, version: 2 })).toBeUndefined();
    expect(
      eventOf({ ...base, version: 2, phase: { state: 'approved', decided_at: T, decided_by: 'owner' } }),
    ).toBe('decided');
    expect(
      eventOf({
        ...base,
        version: 3,
        phase: { state: 'running', decided_at: T, decided_by: 'owner', started_at: T },
      }),
    ).toBeUndefined();
    const failed: Command = {
      ...base,
      version: 4,
      phase: {
        state: 'unknown',
        reason: 'KilledAtDeadline',
        detail: 'x',
        decided_at: T,
        decided_by: 'owner',
        finished_at: T,
        outcome: {},
        reconciliations: [],
      },
    };
    expect(eventOf(failed)).toBe('failed');
    const m = commandMessage('failed', failed, false, KINDS, 'https://gate.example.com/');
    expect(m).toMatchObject({
      title: 'local: say ended UNKNOWN',
      summary: 'Run say — KilledAtDeadline',
      url: 'https://gate.example.com/#c_abc',
    });
    expect(m.json).toMatchObject({ event: 'failed', state: 'unknown', reason: 'KilledAtDeadline' });
    expect(
      eventOf({
        ...failed,
        phase: {
          ...(failed.phase as Extract<Command['phase'], { state: 'unknown' }>),
          reconciliations: [{ outcome: 'delivered', at: T, by: 'owner' }],
        },
      }),
    ).toBeUndefined();
  });

  it('[c13.1.secrets] leaves argument values out unless include_args, and escapes control characters', () => {
    expect(commandMessage('waiting', base, false, KINDS, 'http://127.0.0.1:1').summary).toBe('Run say');
    const shown = commandMessage('waiting', base, true, KINDS, 'http://127.0.0.1:1').summary;
    expect(shown).toBe('Run say with text="hello\\u001b[2J"');
    expect(shown).not.toContain('\u001b');
  });
});
