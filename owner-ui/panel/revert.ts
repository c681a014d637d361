/**
 * Contract 20 on a card: a command that came back because its file changed after the owners approved says
 * so (nothing was written; its preview is the new one), a revert names the command it takes back, and a
 * succeeded file write the daemon can take back offers `Revert …`. The offer is checked by reading the file:
 * opening it asks the daemon (`revert_check`), which reads the file and answers with the diff back — then the
 * button that confirms appears — or with why not (`NotRevertible`: the file changed since). Confirming reads
 * the file once more before anything is queued.
 */
import type { View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { previewBlock } from './preview.js';
import { dateTime, time } from './when.js';

type Preview = NonNullable<View['preview']>;

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

/**
 * What the daemon said when asked whether `id` can be reverted now (contract 20, "checked by reading it"),
 * while its `Revert …` is open: still asking, the diff back it read, or why not. Closing forgets it, so each
 * opening reads the file again.
 */
type Check = { state: 'checking' } | { state: 'ready'; preview: Preview } | { state: 'refused'; why: string };
const checks = new Map<string, Check>();

/** The owner opened `Revert …` on `id`: true when the daemon must be asked (not already asking or answered). */
export function revertOpened(id: string): boolean {
  if (checks.has(id)) return false;
  checks.set(id, { state: 'checking' });
  // The last answer shown (a refusal, an old diff back) gives way to "reading" until the new one comes.
  redraw(id);
  return true;
}

/** Every open `Revert …` of `id` shows what is now known of it. */
function redraw(id: string): void {
  for (const details of document.querySelectorAll<HTMLElement>('details.revert'))
    if (details.dataset.revertFor === id) details.querySelector('.revert-body')?.replaceWith(revertBody(id));
}

/** The owner closed it, or the question could not be sent: the next opening asks again. */
export function revertForgotten(id: string): void {
  checks.delete(id);
}

/** The daemon's answer: the diff back (the confirm is offered), or why not. */
export function revertChecked(id: string, answer: { preview: Preview } | { why: string }): void {
  if (!checks.has(id)) return;
  checks.set(id, 'preview' in answer ? { state: 'ready', ...answer } : { state: 'refused', why: answer.why });
  redraw(id);
}

/** A new connection: questions sent on the old one get no answer. */
export function revertReconnected(): void {
  for (const [id, c] of checks) if (c.state === 'checking') checks.delete(id);
  for (const details of document.querySelectorAll<HTMLDetailsElement>('details.revert'))
    if (!checks.has(details.dataset.revertFor ?? '')) details.open = false;
}

/** Inside `Revert …`: asking, the diff back with the confirm button, or the daemon's refusal. */
function revertBody(id: string): HTMLElement {
  const c = checks.get(id);
  if (c === undefined || c.state === 'checking')
    return el(
      'div',
      { class: 'revert-body' },
      el(
        'p',
        { class: 'revert-note' },
        'Reading the file to check it still holds exactly what this command wrote…',
      ),
    );
  if (c.state === 'refused')
    return el('div', { class: 'revert-body' }, el('p', { class: 'revert-refused', role: 'note' }, c.why));
  const shown = previewBlock({ id, preview: c.preview } as View);
  shown?.querySelector('.preview-note')?.remove();
  shown?.querySelector('.preview-title')?.replaceChildren('What reverting would change');
  return el(
    'div',
    { class: 'revert-body' },
    shown,
    el(
      'p',
      { class: 'revert-note' },
      `The daemon read the file at ${time(c.preview.computed_at ?? new Date().toISOString())}: it still holds what this command wrote. Confirming reads it once more, then queues your own command writing the previous content back.`,
    ),
    el(
      'button',
      { type: 'button', class: 'revert-btn', 'data-action': 'revert', disabled: true },
      'Revert: write the previous content back',
    ),
  );
}

/**
 * `Revert …` on a succeeded write whose previous content the daemon keeps. Opening it asks the daemon to read
 * the file (`revert_check`, app.ts); the diff back and the confirm button come only with its answer.
 */
export function revertControls(v: View, now: number): HTMLElement | null {
  const until = v.revertible_until;
  if (v.status !== 'SUCCEEDED' || until === undefined || Date.parse(until) <= now) return null;
  const details = el(
    'details',
    { class: 'revert', 'data-revert-for': v.id },
    el('summary', { class: 'revert-open' }, 'Revert …'),
    el('p', { class: 'revert-note' }, `The previous content is kept until ${dateTime(until)}.`),
    revertBody(v.id),
  ) as HTMLDetailsElement;
  details.open = checks.has(v.id);
  return details;
}
