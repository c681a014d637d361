/**
 * The queue: the requests waiting for a decision, oldest first (contracts.md 5 (v2)), with its count, the
 * page title's badge, the empty line and, while nothing waits, the first-run help (first-run.ts).
 *
 * Nothing may slide under the owner's pointer or focus: arrivals that would move the card the owner is on
 * wait behind a fixed "N new requests" button, which moves nothing, until the owner leaves that card or
 * asks for them (placement.ts decides which). While arrivals are held the queue's layout stays exactly as
 * it was; the count says the truth.
 *
 * Quorum (contract 9): a card the signed-in owner already approved waits for the other owners, not for
 * them, so the count and the title's badge count it apart.
 */
import type { View } from '../../common/owner-messages.js';
import type { ClickGuard } from '../click-safety.js';
import { byId } from '../dom.js';
import type { CardList } from './card-list.js';
import type { FirstRun } from './first-run.js';
import { arrivalsToHold, focusInQueue, keepFocus, place } from './placement.js';
import { waitsForOthers } from './quorum.js';

/** The queue card holding focus before a layout, to keep focus on (or next to) after it. */
export type QueueFocus = ReturnType<typeof focusInQueue>;

export class QueueView {
  readonly #el = byId('queue');
  readonly #arrivals = byId<HTMLButtonElement>('arrivals');
  readonly #cards: CardList;
  readonly #guard: ClickGuard;
  readonly #firstRun: FirstRun;
  /** New requests not yet placed, because placing them would move the card the owner is on. */
  readonly #held = new Set<string>();
  #recheckQueued = false;

  /** `render(force)`: lay the page out again; forced, every held arrival is placed. */
  constructor(cards: CardList, guard: ClickGuard, firstRun: FirstRun, render: (force: boolean) => void) {
    this.#cards = cards;
    this.#guard = guard;
    this.#firstRun = firstRun;
    // Held arrivals are placed as soon as the owner leaves the card they would have moved.
    const recheck = () => {
      if (this.#held.size === 0 || this.#recheckQueued) return;
      this.#recheckQueued = true;
      window.setTimeout(() => {
        this.#recheckQueued = false;
        render(false);
      }, 0);
    };
    for (const type of ['pointerover', 'pointerout', 'focusin', 'focusout'])
      document.addEventListener(type, recheck);
    this.#arrivals.addEventListener('click', () => {
      const first = [...this.#held][0];
      render(true);
      if (first !== undefined) cards.node(first)?.scrollIntoView({ block: 'nearest' });
    });
  }

  /**
   * The waiting views (oldest first) to place now: all of them when `force`d, else all but the arrivals
   * that would move the card the owner is on, which are held.
   */
  admit(waiting: View[], force: boolean): View[] {
    const arrivals = new Set(
      waiting.filter((v) => !this.#el.contains(this.#cards.node(v.id) ?? null)).map((v) => v.id),
    );
    this.#held.clear();
    if (!force)
      for (const id of arrivalsToHold(this.#el, waiting, arrivals, this.#guard.engaged())) this.#held.add(id);
    return waiting.filter((v) => !this.#held.has(v.id));
  }

  /** The card holding focus now; read before anything is placed. */
  focus(): QueueFocus {
    return focusInQueue(this.#el);
  }

  /** Puts `nodes` in the queue, in this order. */
  place(nodes: HTMLElement[]): void {
    place(this.#el, nodes);
  }

  /** Focus back on the card it was on, or on the one that took its place (placement.ts). */
  keepFocus(focused: QueueFocus): void {
    if (focused !== undefined) keepFocus(this.#el, this.#cards.node(focused.id), focused.at);
  }

  /** The arrivals button, the count and title badge for `all` views, and the empty line (`placed` shown). */
  showCounts(all: View[], placed: number, me: string | undefined): void {
    const held = this.#held;
    this.#arrivals.hidden = held.size === 0;
    this.#arrivals.textContent =
      held.size === 1 ? '1 new request — show it' : `${held.size} new requests — show them`;
    // A quorum card this owner approved waits for the others, not for them (contract 9).
    const others = all.filter((v) => waitsForOthers(v, me)).length;
    const awaiting = all.filter((v) => v.state === 'awaiting_review').length - others;
    document.title = awaiting > 0 ? `(${awaiting}) ogf-broker owner` : 'ogf-broker owner';
    byId('queue-count').textContent =
      (awaiting === 0 ? 'nothing waits for you' : `${awaiting} waiting for you`) +
      (others === 0 ? '' : ` · ${others} for other owners`);
    // While arrivals are held the queue's layout stays exactly as it was (the count above says the truth).
    const empty = byId('queue-empty');
    if (held.size === 0) empty.hidden = placed > 0;
    this.#firstRun.show(!empty.hidden);
    // Same one line, other words: the empty queue must not say "nothing waits" while arrivals are held.
    empty.textContent =
      held.size === 0
        ? 'Nothing waits for you. New requests appear here as they arrive.'
        : 'New requests are held while you read: show them below.';
  }
}
