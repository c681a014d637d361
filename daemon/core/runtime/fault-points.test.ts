/** The crash points are armed by the environment handed in, never by the process's own at module load. */
import { describe, expect, it } from 'vitest';
import { faultsFromEnv, noFaults } from './fault-points.js';

describe('fault points', () => {
  it('are inert without OGF_BROKER_FAULT, whatever the process environment says', () => {
    let kills = 0;
    const faults = faultsFromEnv({}, () => kills++);
    expect(faults).toBe(noFaults);
    faults('before_mark_running');
    expect(kills).toBe(0);
  });

  it('kill at the n-th time the armed point is reached, and only that point', () => {
    let kills = 0;
    const faults = faultsFromEnv({ OGF_BROKER_FAULT: 'after_mark_running:2' }, () => kills++);
    faults('before_mark_running');
    faults('after_mark_running');
    expect(kills).toBe(0);
    faults('after_mark_running');
    expect(kills).toBe(1);
    faults('after_mark_running');
    expect(kills).toBe(1);
  });

  it('default to the first time', () => {
    let kills = 0;
    faultsFromEnv({ OGF_BROKER_FAULT: 'before_finish_commit' }, () => kills++)('before_finish_commit');
    expect(kills).toBe(1);
  });
});
