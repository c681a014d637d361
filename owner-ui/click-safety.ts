/**
 * Click safety (contracts.md 5 (v2)): "a card's decision buttons are inert (shown disabled) for its first
 * second on screen and for a second after it moves, and arriving cards never move the focused or hovered
 * one". The AI chooses when its requests arrive; without this, a card arriving 50 ms before the owner's
 * click could slide its own Approve under the pointer.
 *
 * Every change the panel makes to the page goes through `change()`, which measures each decision button
 * before and after (in the same task, so nothing is painted in between): a button that is new, or whose
 * box moved, makes its card inert for INERT_MS. Measuring the buttons rather than the cards also catches a
 * button pushed down inside its own card (a message appearing above it). An inert card's decision buttons
 * are `disabled` — the browser then delivers no click to them — and its keyboard shortcuts, which are
 * those buttons' own (`aria-keyshortcuts`), are refused as well. Where cards go is queue-view.ts's business;
 * it asks `engaged()` which cards an arrival must not move.
 */

export const INERT_MS = 1000;

/** The controls that decide something: Approve, Deny, Reconcile (and any later Allow). */
const DECISION = 'button[data-action]';

/**
 * Whether a card shows a decision button the owner could click: one that is rendered (a Reconcile folded
 * into a closed "Record a different outcome" has no box), disabled-while-inert or not.
 */
function decides(card: HTMLElement): boolean {
  for (const b of card.querySelectorAll<HTMLElement>(DECISION))
    if (b.getClientRects().length > 0) return true;
  return false;
}

export class ClickGuard {
  readonly #until = new WeakMap<HTMLElement, number>();
  readonly #timers = new WeakMap<HTMLElement, number>();
  readonly #busy: (card: HTMLElement) => boolean;

  /** `busy(card)`: a request for this card is in flight (its buttons stay disabled until the reply). */
  constructor(busy: (card: HTMLElement) => boolean) {
    this.#busy = busy;
  }

  /** Runs a change to the page; every card whose decision buttons it added or moved becomes inert. */
  change(mutate: () => void): void {
    const before = new Map<Element, DOMRect>();
    for (const b of document.querySelectorAll(DECISION)) before.set(b, b.getBoundingClientRect());
    mutate();
    const touched = new Set<HTMLElement>();
    for (const b of document.querySelectorAll(DECISION)) {
      const was = before.get(b);
      const now = b.getBoundingClientRect();
      if (was === undefined || was.x !== now.x || was.y !== now.y || was.width !== now.width) {
        const card = b.closest<HTMLElement>('article.card');
        if (card !== null) touched.add(card);
      }
    }
    for (const card of touched) this.hold(card);
  }

  /** Makes a card inert for INERT_MS from now (a new card, a moved one, a tab that came back into view). */
  hold(card: HTMLElement): void {
    this.#until.set(card, performance.now() + INERT_MS);
    window.clearTimeout(this.#timers.get(card));
    this.#timers.set(
      card,
      window.setTimeout(() => this.sync(card), INERT_MS + 5),
    );
    this.sync(card);
  }

  isInert(card: HTMLElement): boolean {
    const until = this.#until.get(card);
    return until !== undefined && performance.now() < until;
  }

  /** Applies the card's state to its decision buttons: disabled while inert or while a request is in flight. */
  sync(card: HTMLElement): void {
    const inert = this.isInert(card);
    if (inert) card.dataset.inert = '';
    else delete card.dataset.inert;
    const disabled = inert || this.#busy(card);
    for (const b of card.querySelectorAll<HTMLButtonElement>(DECISION)) b.disabled = disabled;
  }

  /**
   * The cards the owner is on — the one under the pointer and the one holding focus — that have live
   * decision buttons (waiting, or reconcilable): only a click on those could land where the owner did not
   * aim. A finished card moving is harmless (issue 23 item 5: after Approve on the only card, the finished
   * card slid under the resting pointer and held every later arrival back until the button was clicked).
   */
  engaged(): HTMLElement[] {
    const out: HTMLElement[] = [];
    const hovered = document.querySelector<HTMLElement>('article.card:hover');
    if (hovered !== null && decides(hovered)) out.push(hovered);
    const focused = document.activeElement?.closest<HTMLElement>('article.card');
    if (focused && focused !== hovered && decides(focused)) out.push(focused);
    return out;
  }
}
