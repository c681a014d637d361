import { describe, expect, it } from 'vitest';
import { type AppliedCue, applyCue, NEUTRAL, nextChangeAt, settle } from './avatar-state.js';

const cue = (over: Partial<AppliedCue> = {}): AppliedCue => ({
  cue_id: 'c1',
  action: 'wave',
  emotion: 'happy',
  intensity: 0.5,
  gaze: 'user',
  ttl_ms: 1000,
  ...over,
});

describe('avatar state (contract 6: TTL, neutral, message semantics)', () => {
  it('applies a cue and returns to neutral, message gone, when its ttl ends', () => {
    const s = applyCue(NEUTRAL, cue({ message: 'hi' }), 10_000);
    expect(s).toMatchObject({
      action: 'wave',
      emotion: 'happy',
      gaze: 'user',
      message: 'hi',
      cue_until: 11_000,
    });
    expect(nextChangeAt(s)).toBe(11_000);
    expect(settle(s, 10_999)).toBe(s);
    expect(settle(s, 11_000)).toEqual(NEUTRAL);
    expect(nextChangeAt(settle(s, 11_000))).toBeNull();
  });

  it('a later cue without message leaves a live message alone, until its own cue time', () => {
    const a = applyCue(NEUTRAL, cue({ message: 'first', ttl_ms: 3000 }), 0);
    const b = applyCue(a, cue({ cue_id: 'c2', action: 'nod', ttl_ms: 500 }), 1000);
    expect(b).toMatchObject({ action: 'nod', message: 'first', message_until: 3000, cue_until: 1500 });
    const c = settle(b, 1500);
    expect(c).toMatchObject({ action: 'none', emotion: 'neutral', gaze: 'neutral', message: 'first' });
    expect(settle(c, 3000).message).toBeNull();
  });

  it('null clears the message at once; a string replaces it with the new cue time', () => {
    const a = applyCue(NEUTRAL, cue({ message: 'first', ttl_ms: 5000 }), 0);
    expect(applyCue(a, cue({ message: null }), 100)).toMatchObject({ message: null, message_until: null });
    expect(applyCue(a, cue({ message: 'second', ttl_ms: 200 }), 100)).toMatchObject({
      message: 'second',
      message_until: 300,
    });
  });

  it('a later cue without message does not revive an expired one', () => {
    const a = applyCue(NEUTRAL, cue({ message: 'old', ttl_ms: 100 }), 0);
    expect(applyCue(a, cue({ cue_id: 'c2' }), 500).message).toBeNull();
  });
});
