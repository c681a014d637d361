/**
 * "Who did what, when" on a card (contract 14): a disclosure that, opened, asks the daemon for the
 * command's audit entries (`{"type":"audit","req_id","command_id"}`) and lists them — time, who (an owner,
 * `grant:<id>`, `rule:<id>`, `policy:read_only`, `daemon`, `client:<name>`), what, and the entry's own words.
 * Nothing is fetched until the owner asks; a reopened card asks again (the record may have grown).
 */
import type { AuditEntryView } from '../../common/owner-messages.js';
import { el } from '../dom.js';
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

/** The words for a field that disagrees (contract 14 (v4) `record_disagrees`). */
const FIELD_WORDS: Readonly<Record<string, string>> = {
  command_id: 'which command the entries belong to',
  state: 'the state',
  reason: 'the reason',
  decided_by: 'who decided',
  command: 'the command',
  args: 'the arguments',
  display: 'the command line',
};

/**
 * Contract 14 (v4): the card's command disagrees with its audit entries (the history was edited outside
 * the daemon). Said in words with a sign, at the top of the card, not by colour alone; gone when a later
 * answer finds them agreeing.
 */
function markDisagreement(card: HTMLElement, fields: readonly string[] | undefined): void {
  card.querySelector(':scope > .record-disagrees')?.remove();
  card.classList.toggle('disagrees', fields !== undefined && fields.length > 0);
  if (fields === undefined || fields.length === 0) return;
  const what = fields.map((f) => FIELD_WORDS[f] ?? f).join(', ');
  card.prepend(
    el(
      'p',
      { class: 'record-disagrees', role: 'alert', 'data-fields': fields.join(' ') },
      el('strong', {}, '⚠ The record disagrees'),
      ` — ${what}: what this card shows is not what the audit record says. Run “ogf-broker audit verify”.`,
    ),
  );
}

/** Fills the card's trail with the entries the daemon answered (and marks a disagreement). */
export function showTrail(
  card: HTMLElement,
  entries: readonly AuditEntryView[],
  disagrees?: readonly string[],
): void {
  markDisagreement(card, disagrees);
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
