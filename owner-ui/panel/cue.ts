/**
 * The owner's card for an avatar cue (contracts 3.3, 5): the session's fingerprint (never the session UUID:
 * the View cannot hold it), then the cue as a face and in words.
 */
import type { View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { actionWords, cueArgs, cueFace, gazeWords } from './face.js';

/** The session line under the argv. */
export function sessionLine(v: View): HTMLElement | null {
  return v.session_fingerprint === undefined
    ? null
    : el('p', { class: 'session' }, 'Avatar session ', el('code', {}, v.session_fingerprint));
}

/** The card's cue part: the face it asks for, and every field in words. */
export function cueBlock(v: View): HTMLElement {
  const c = cueArgs(v.args);
  const message =
    c.message === undefined
      ? '(keeps what is shown)'
      : c.message === null
        ? '(clears the message)'
        : `“${c.message}”`;
  const row = (k: string, value: string) => [el('dt', {}, k), el('dd', {}, value)];
  return el(
    'div',
    { class: 'cue' },
    cueFace(c),
    el(
      'dl',
      { class: 'cue-words' },
      ...row('Emotion', c.emotion),
      ...row('Action', actionWords(c.action)),
      ...row('Gaze', gazeWords(c.gaze)),
      ...row('Intensity', String(c.intensity)),
      ...row('Message', message),
      ...row('Lasts', `${(c.ttl_ms / 1000).toFixed(1)} s`),
    ),
  );
}
