/**
 * Contract 20 on a card: a command that came back because its file changed after the owners approved says
 * so (nothing was written; its preview is the new one), a revert names the command it takes back, and a
 * succeeded file write the daemon can take back offers `Revert …` — opening it shows the diff back (the
 * write's own diff reversed: the lines it added are removed, the ones it removed come back) and the button
 * that confirms. The daemon reads the file again when asked, and refuses (`NotRevertible`) when it changed.
 */
import type { View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { previewBlock } from './preview.js';
import { dateTime, time } from './when.js';

/**
 * A unified diff the other way round: `+` and `-` lines swapped, each hunk's ranges swapped, and in each run
 * of changed lines the removed ones first again (as a diff is written).
 */
export function reverseDiff(diff: string): string {
  const out: string[] = [];
  let dels: string[] = [];
  let adds: string[] = [];
  const flush = () => {
    out.push(...dels, ...adds);
    dels = [];
    adds = [];
  };
  for (const line of diff.split('\n')) {
    const hunk = /^@@ -(\S+) \+(\S+) @@(.*)$/.exec(line);
    if (line.startsWith('--- ') || line.startsWith('+++ ')) out.push(line);
    else if (hunk !== null) {
      flush();
      out.push(`@@ -${hunk[2]} +${hunk[1]} @@${hunk[3]}`);
    } else if (line.startsWith('+')) dels.push(`-${line.slice(1)}`);
    else if (line.startsWith('-')) adds.push(`+${line.slice(1)}`);
    else {
      flush();
      out.push(line);
    }
  }
  flush();
  return out.join('\n');
}

/** "The file changed since you approved", on a card back from a launch that sent nothing. */
export function reboundLine(v: View): HTMLElement | null {
  if (v.rebound_at === undefined || v.state !== 'awaiting_review') return null;
  return el(
    'p',
    { class: 'rebound', role: 'note' },
    el('strong', {}, 'The file changed since you approved'),
    ` (found at ${time(v.rebound_at)} just before it would have run): nothing was written. `,
    'Below is the change as it would be made now; your approval was not used — decide again.',
  );
}

/** "Revert of c_…" on a revert's card. */
export function revertOfLine(v: View): HTMLElement | null {
  if (v.revert_of === undefined) return null;
  return el(
    'p',
    { class: 'revert-of' },
    'Your revert of ',
    el('a', { href: `#${encodeURIComponent(v.revert_of)}` }, v.revert_of),
    ': it writes back what the file held before that command.',
  );
}

/** `Revert …` on a succeeded write the daemon can still take back, with the diff back and the confirm button. */
export function revertControls(v: View, now: number): HTMLElement | null {
  const until = v.revertible_until;
  if (v.status !== 'SUCCEEDED' || until === undefined || Date.parse(until) <= now) return null;
  const diff = v.preview?.diff;
  const back: View = {
    ...v,
    preview:
      diff === undefined
        ? { kind: 'file_diff', status: 'failed', error: 'the diff of this write is not kept' }
        : { kind: 'file_diff', status: 'ready', diff: reverseDiff(diff) },
  };
  const shown = previewBlock(back);
  shown?.querySelector('.preview-note')?.remove();
  shown?.querySelector('.preview-title')?.replaceChildren('What reverting would change');
  return el(
    'details',
    { class: 'revert' },
    el('summary', { class: 'revert-open' }, 'Revert …'),
    shown,
    el(
      'p',
      { class: 'revert-note' },
      `The daemon first checks that the file still holds exactly what this command wrote; it keeps the previous content until ${dateTime(until)}.`,
    ),
    el(
      'button',
      { type: 'button', class: 'revert-btn', 'data-action': 'revert', disabled: true },
      'Revert: write the previous content back',
    ),
  );
}
