/**
 * Every card on the page, queue and history alike, by command id (contracts.md 5 (v2)). A card is rebuilt
 * only when its command's version (or the signed-in owner) changed — or its preview arrived, which keeps the
 * version (contract 12) but changes what the owner decides on, so the rebuilt card is inert for a second
 * like any that changed under the pointer — so what the owner typed survives
 * unrelated updates; a rebuilt card takes the old one's place and its focus, and is inert for its first
 * second like any card that appears (click-safety.ts). The last conflict message shown on a card stays
 * with it across rebuilds.
 */
import type { View } from '../../common/owner-messages.js';
import type { ClickGuard } from '../click-safety.js';
import { setText } from '../dom.js';
import { buildCard } from './card.js';

interface Entry {
  node: HTMLElement;
  version: number;
  /** The preview's state as shown (contract 12: it arrives without a new version). */
  preview: string;
  me: string | undefined;
  /** The question the card asks (state and reconciliation): a typed note survives only while it stands. */
  key: string;
  message: string | undefined;
}

/** What the owner typed into a card, so a rebuild (new version) does not lose it. */
function typedNote(node: HTMLElement | undefined): string {
  const input = node?.querySelector<HTMLInputElement>('input.note, input.reconcile-note');
  return input?.value ?? '';
}

export class CardList {
  readonly #cards = new Map<string, Entry>();
  readonly #guard: ClickGuard;
  readonly #grantWords: (id: string) => string;

  /** `grantWords(id)`: how a card names the grant that approved it (grants.ts). */
  constructor(guard: ClickGuard, grantWords: (id: string) => string) {
    this.#guard = guard;
    this.#grantWords = grantWords;
  }

  /** The card for `v`, reused while its version and the signed-in owner `me` are the same. */
  cardFor(v: View, skewMs: number, me: string | undefined): HTMLElement {
    const existing = this.#cards.get(v.id);
    const preview = `${v.preview?.status ?? ''}|${v.preview?.computed_at ?? ''}`;
    if (
      existing !== undefined &&
      existing.version === v.version &&
      existing.preview === preview &&
      existing.me === me
    )
      return existing.node;
    // A typed note survives a rebuild only while the card asks the same question (same state, same record).
    const key = `${v.state}|${v.reconciliation?.at ?? ''}`;
    const note = existing?.key === key ? typedNote(existing.node) : '';
    const node = buildCard(v, skewMs, note, existing?.message, this.#grantWords, me);
    this.#guard.hold(node);
    if (existing !== undefined) {
      const hadFocus = existing.node.contains(document.activeElement);
      existing.node.replaceWith(node);
      if (hadFocus) node.focus({ preventScroll: true });
    }
    this.#cards.set(v.id, { node, version: v.version, preview, me, key, message: existing?.message });
    return node;
  }

  /** The card of command `id`, if it has one. */
  node(id: string): HTMLElement | undefined {
    return this.#cards.get(id)?.node;
  }

  /** Every card. */
  *nodes(): IterableIterator<HTMLElement> {
    for (const { node } of this.#cards.values()) yield node;
  }

  /** Forgets the cards of commands no longer shown (after a snapshot, or a logout). */
  keepOnly(shown: { has(id: string): boolean }): void {
    for (const id of this.#cards.keys()) if (!shown.has(id)) this.#cards.delete(id);
  }

  /** Shows (or clears, with undefined) the message line of command `id`'s card, kept across rebuilds. */
  setMessage(id: string, text: string | undefined): void {
    const entry = this.#cards.get(id);
    if (entry === undefined) return;
    entry.message = text;
    const p = entry.node.querySelector('.card-msg');
    // A message above the buttons pushes them down: through the guard, like every change to the page.
    if (p !== null) this.#guard.change(() => setText(p, text ?? ''));
  }
}
