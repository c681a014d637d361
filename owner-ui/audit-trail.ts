/**
 * "Who did what, when" on a card (contract 14): a disclosure that, opened, asks the daemon for the
 * command's audit entries (`{"type":"audit","req_id","command_id"}`) and lists them — time, who (an owner,
 * `grant:<id>`, `rule:<id>`, `policy:read_only`, `daemon`, `client:<name>`), what, and the entry's own words.
 * Nothing is fetched until the owner asks; a reopened card asks again (the record may have grown).
 */
import type { AuditEntryView } from '../daemon/owner/messages.js';
import { el } from './dom.js';
import { time } from './when.js';

/** The words for an event, in the panel's voice. */
const EVENT_WORDS: Readonly<Record<string, string>> = {
  submit: 'asked',
  approve: 'approved',
  deny: 'denied',
  launch: 'started it',
  outcome: 'recorded the outcome',
  reconcile: 'reconciled',
  prune: 'pruned bulky fields',
  grant_used: 'used a grant',
  grant_created: 'made a grant',
  grant_ended: 'ended a grant',
};

/** The closed disclosure every card carries. */
export function trailBlock(id: string): HTMLElement {
  return el(
    'details',
    { class: 'trail', 'data-trail-for': id },
    el('summary', {}, 'Who did what, when'),
    el('ol', { class: 'trail-list', 'aria-live': 'polite' }, el('li', { class: 'empty' }, 'Loading…')),
  );
}

/** One entry's line: what in its data says most (state, reason, note, outcome). */
function detail(e: AuditEntryView): string {
  const d = e.data;
  const parts: string[] = [];
  if (typeof d.state === 'string' && e.event !== 'submit') parts.push(d.state);
  if (typeof d.reason === 'string') parts.push(d.reason);
  if (typeof d.outcome === 'string') parts.push(d.outcome);
  if (typeof d.grant_id === 'string') parts.push(d.grant_id);
  if (typeof d.note === 'string') parts.push(`“${d.note}”`);
  return parts.join(' · ');
}

/** Fills the card's trail with the entries the daemon answered. */
export function showTrail(card: HTMLElement, entries: readonly AuditEntryView[]): void {
  const list = card.querySelector('.trail-list');
  if (list === null) return;
  const items = entries.map((e) =>
    el(
      'li',
      { 'data-seq': e.seq, 'data-event': e.event },
      el('time', { datetime: e.at }, time(e.at)),
      ' ',
      el('strong', { class: 'actor' }, e.actor),
      ` ${EVENT_WORDS[e.event] ?? e.event}`,
      detail(e) === '' ? null : el('span', { class: 'trail-detail' }, ` — ${detail(e)}`),
      el('span', { class: 'seq' }, ` #${e.seq}`),
    ),
  );
  list.replaceChildren(...(items.length > 0 ? items : [el('li', { class: 'empty' }, 'No entries.')]));
}
