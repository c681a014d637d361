/** Contract 4 step 4: the bridge client's exit and line map to exactly one outcome. */
import { describe, expect, it } from 'vitest';
import type { ProcessResult } from '../../launch/launcher.js';
import { mapDelivery } from './executor.js';

const base: ProcessResult = {
  exitCode: 0,
  signal: null,
  stdout: '',
  stderr: '',
  outputTruncated: false,
  killedAtDeadline: false,
};
const ack = { type: 'cue_ack', cue_id: 'c1', applied_at: '2026-11-30T10:00:00.000Z', duplicate: false };
const line = (o: object) => `${JSON.stringify(o)}\n`;
const run = (over: Partial<ProcessResult>) => mapDelivery({ ...base, ...over }, 'c1', 5000);

describe('mapDelivery', () => {
  it('exit 0 with a delivered line and the ack of this cue → succeeded with delivery', () => {
    expect(run({ stdout: line({ outcome: 'delivered', code: 'Delivered', detail: 'd', ack }) })).toEqual({
      kind: 'succeeded',
      outcome: { exit_code: 0, delivery: { cue_id: 'c1', applied_at: ack.applied_at } },
    });
  });

  it('exit 2 with a not_delivered line → failed with its code as reason', () => {
    for (const code of [
      'BridgeUnreachable',
      'BridgeRejected',
      'AvatarNotReady',
      'CueExpired',
      'SessionFileRejected',
    ]) {
      const r = run({
        exitCode: 2,
        stdout: line({ outcome: 'not_delivered', code, detail: 'the app said no' }),
      });
      expect(r).toMatchObject({ kind: 'failed', reason: code, outcome: { exit_code: 2 } });
      expect(r.kind !== 'aborted' && 'detail' in r && r.detail).toMatch(/the app said no\.$/);
    }
  });

  it('anything else is unknown/DeliveryUnconfirmed', () => {
    const cases: Array<Partial<ProcessResult>> = [
      { exitCode: 3, stdout: line({ outcome: 'unknown', code: 'DeliveryUnconfirmed', detail: 'x' }) },
      { exitCode: 0, stdout: line({ outcome: 'delivered', code: 'Delivered', detail: 'x' }) }, // no ack
      {
        exitCode: 0,
        stdout: line({
          outcome: 'delivered',
          code: 'Delivered',
          detail: 'x',
          ack: { ...ack, cue_id: 'other' },
        }),
      },
      { exitCode: 2, stdout: line({ outcome: 'not_delivered', code: 'NonZeroExit', detail: 'x' }) }, // not a bridge code
      { exitCode: 2, stdout: line({ outcome: 'delivered', code: 'Delivered', detail: 'x', ack }) }, // exit and line disagree
      { exitCode: 0, stdout: line({ outcome: 'delivered', code: 'Delivered', detail: 'x', ack }).repeat(2) }, // two lines
      { exitCode: 1, stdout: 'garbage' },
      { exitCode: null, signal: 'SIGKILL', stdout: '' },
    ];
    for (const c of cases) expect(run(c)).toMatchObject({ kind: 'unknown', reason: 'DeliveryUnconfirmed' });
  });

  it('killed at the deadline → unknown/KilledAtDeadline; a spawn error → failed/LaunchFailed', () => {
    expect(run({ exitCode: null, signal: 'SIGTERM', killedAtDeadline: true })).toMatchObject({
      kind: 'unknown',
      reason: 'KilledAtDeadline',
    });
    expect(run({ exitCode: null, spawnError: 'ENOENT: no node' })).toMatchObject({
      kind: 'failed',
      reason: 'LaunchFailed',
    });
  });
});
