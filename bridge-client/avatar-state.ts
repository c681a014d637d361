/**
 * What an avatar shows, as a pure function of the cues applied and the clock (contracts.md 6): a cue
 * lasts `ttl_ms`, then the avatar returns to neutral; its message lasts until the end of its own cue's
 * time. A later cue without `message` leaves a still-live message alone; `null` clears it at once; a
 * string replaces it (with the new cue's time).
 */
import type { Action, Emotion, Gaze } from '../common/ogf-bridge.js';

export interface AppliedCue {
  cue_id: string;
  action: Action;
  emotion: Emotion;
  intensity: number;
  gaze: Gaze;
  ttl_ms: number;
  message?: string | null;
}

/** The avatar's visible state; `until` fields are epoch milliseconds. */
export interface AvatarState {
  action: Action;
  emotion: Emotion;
  gaze: Gaze;
  intensity: number;
  /** The cue now playing (null at rest). */
  cue_id: string | null;
  cue_until: number | null;
  message: string | null;
  message_until: number | null;
}

export const NEUTRAL: AvatarState = Object.freeze({
  action: 'none',
  emotion: 'neutral',
  gaze: 'neutral',
  intensity: 0,
  cue_id: null,
  cue_until: null,
  message: null,
  message_until: null,
});

/** The state right after applying `cue` at `now`. */
export function applyCue(state: AvatarState, cue: AppliedCue, now: number): AvatarState {
  const until = now + cue.ttl_ms;
  const next: AvatarState = {
    ...state,
    action: cue.action,
    emotion: cue.emotion,
    gaze: cue.gaze,
    intensity: cue.intensity,
    cue_id: cue.cue_id,
    cue_until: until,
  };
  if (cue.message === null) {
    next.message = null;
    next.message_until = null;
  } else if (typeof cue.message === 'string') {
    next.message = cue.message;
    next.message_until = until;
  }
  return settle(next, now);
}

/** The state at `now`: an ended cue returns to neutral, an ended message disappears. */
export function settle(state: AvatarState, now: number): AvatarState {
  let next = state;
  if (next.cue_until !== null && now >= next.cue_until) {
    next = {
      ...next,
      action: 'none',
      emotion: 'neutral',
      gaze: 'neutral',
      intensity: 0,
      cue_id: null,
      cue_until: null,
    };
  }
  if (next.message_until !== null && now >= next.message_until) {
    next = { ...next, message: null, message_until: null };
  }
  return next;
}

/** When `settle` will next change something, or null when at rest. */
export function nextChangeAt(state: AvatarState): number | null {
  const times = [state.cue_until, state.message_until].filter((t): t is number => t !== null);
  return times.length ? Math.min(...times) : null;
}
