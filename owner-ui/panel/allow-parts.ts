/**
 * The parts of the Allow… dialog's form (allow.ts) that hold no state: a radio choice with its hint, the
 * scope, node and time choices (contract 16 v4, 18), the uses and note fields, and "any arguments" in words
 * for a command. Apart so the dialog's file keeps to its job: what the owner chose, tested and sent.
 */
import type { View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { pathScopes } from './allow-paths.js';
import { argNames, argsSection } from './args-loader.js';
import { kindCard } from './kinds.js';

const TIMES: Array<[number, string]> = [
  [900, '15 min'],
  [3600, '1 h'],
  [28_800, '8 h'],
  [86_400, '1 day'],
];
export const USES_MAX = 10_000;
export const NOTE_MAX = 500;

/** What the dialog says it does, naming the command and the client. */
export function allowWhat(v: View): HTMLElement {
  return el(
    'p',
    { class: 'allow-what' },
    'Approves this request now, and lets the same requests of ',
    el('code', {}, v.command),
    ' from ',
    el('strong', {}, v.client),
    ' through without asking you, for the time you choose. Revoke it any time under “Allowed for a while”.',
  );
}

/** "Which requests": these exact arguments, any, or (contract 11) the paths under a folder of an argument. */
export function scopeChoice(v: View): HTMLElement {
  // "These exact arguments" are the whole ones, also when the View holds a preview: the grant matches
  // them all (the daemon takes them from the command), and the dialog offers to load them to read.
  const exactArgs =
    Object.keys(v.args).length === 0 && v.args_truncated !== true
      ? el('span', { class: 'allow-hint' }, 'no arguments, exactly as now')
      : el('div', { class: 'allow-args' }, argsSection(v, 'The arguments of this request', true));
  return el(
    'fieldset',
    {},
    el('legend', {}, 'Which requests'),
    radio('scope', 'exact', true, 'These exact arguments', exactArgs),
    radio('scope', 'any', false, 'Any arguments', el('span', { class: 'allow-hint' }, anyWords(v))),
    // Contract 11: each folder of each argument holding an absolute path, and its parents up to `/`.
    ...pathScopes(v).map((s, i) =>
      radio('scope', `under-${i}`, false, el('span', {}, `${s.arg}: paths under `, el('code', {}, s.dir))),
    ),
  );
}

/** Where the chosen scope's grant (or rule) and its test against the past are shown. */
export function grantLine(): HTMLElement {
  return el(
    'div',
    { class: 'allow-grant', 'aria-live': 'polite' },
    el('span', { class: 'allow-label' }, 'The grant: '),
    el('code', { id: 'allow-expression' }),
    el('p', { id: 'allow-test', class: 'allow-hint' }),
  );
}

/** "For how long": the grant's times, or (contract 18) "Always", an owner's rule shared by every node. */
export function timeChoice(): HTMLElement {
  const always = el(
    'span',
    { class: 'allow-hint' },
    'a rule, on every node, until you disable or remove it under Rules',
  );
  return el(
    'fieldset',
    { class: 'allow-times' },
    el('legend', {}, 'For how long'),
    ...TIMES.map(([s, words], i) => radio('ttl', String(s), i === 0, words)),
    radio('ttl', 'always', false, 'Always', always),
  );
}

/** The optional use count and note, with their labels. */
export function usesAndNote(): { fields: HTMLElement[]; uses: HTMLInputElement; note: HTMLInputElement } {
  const uses = el('input', {
    type: 'number',
    id: 'allow-uses',
    name: 'uses',
    min: 1,
    max: USES_MAX,
    step: 1,
    inputmode: 'numeric',
    placeholder: 'unlimited',
    'aria-describedby': 'allow-uses-hint',
  });
  const note = el('input', {
    type: 'text',
    id: 'allow-note',
    name: 'note',
    maxlength: NOTE_MAX,
    autocomplete: 'off',
    placeholder: 'Why you allow it (shown in the list)',
  });
  const usesHint = `1 to ${USES_MAX}; empty: as often as asked within the time. This approval does not count.`;
  const fields = [
    el(
      'div',
      { class: 'allow-field' },
      el('label', { for: 'allow-uses' }, 'How many times (optional)'),
      uses,
      el('span', { id: 'allow-uses-hint', class: 'allow-hint' }, usesHint),
    ),
    el('div', { class: 'allow-field' }, el('label', { for: 'allow-note' }, 'Note (optional)'), note),
  ];
  return { fields, uses, note };
}

/**
 * Contract 16 (v4): a grant approves its node's commands only (the card's, by default); with several nodes
 * in view the dialog says so and offers every node on purpose — where the same name may be another program.
 */
export function nodeChoice(v: View): HTMLElement | null {
  if (v.node === undefined || !document.body.classList.contains('many-nodes')) return null;
  return el(
    'fieldset',
    { class: 'allow-nodes' },
    el('legend', {}, 'On which node'),
    radio('node', 'this', true, el('span', {}, `Only node ${v.node}’s `, el('code', {}, v.command))),
    radio(
      'node',
      'all',
      false,
      el('span', {}, 'Every node’s ', el('code', {}, v.command)),
      el('span', { class: 'allow-hint' }, 'on another machine it may be another program'),
    ),
  );
}

function listWords(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** What "any arguments" means for this command, in words: `any word for mark, whatever the AI chooses`. */
export function anyWords(v: View): string {
  // Names as the card shows them (escaped by el), cut: an AI may send many, and long ones (issue 19).
  // A View with shortened arguments names them all too, or counts those past its budget (args-loader.ts).
  const { names, unnamed } = argNames(v);
  const keys = names.slice(0, 12).map((k) => `any ${k.length > 40 ? `${k.slice(0, 40)}…` : k}`);
  if (names.length + unnamed > 12) keys.push(`${names.length + unnamed - 12} more`);
  return kindCard(v.tool)?.anyWords?.(v, keys.length === 0 ? undefined : listWords(keys)) ?? '';
}

export function radio(
  name: string,
  value: string,
  checked: boolean,
  label: HTMLElement | string,
  hint?: HTMLElement,
) {
  const id = `allow-${name}-${value}`;
  const hintId = hint === undefined ? undefined : `${id}-hint`;
  if (hint !== undefined && hintId !== undefined) hint.id = hintId;
  return el(
    'div',
    { class: 'allow-choice' },
    el('input', {
      type: 'radio',
      name,
      value,
      id,
      checked,
      'aria-describedby': hintId,
    }),
    el('label', { for: id }, label),
    hint ?? null,
  );
}
