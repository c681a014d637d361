/**
 * The parts of the Allow… dialog's form (allow.ts) that hold no state: a radio choice with its hint, the
 * node choice (contract 16 v4), and "any arguments" in words for a command. Apart so the dialog's file keeps
 * to its job: what the owner chose, tested and sent.
 */
import type { View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { argNames } from './args-loader.js';
import { kindCard } from './kinds.js';

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
