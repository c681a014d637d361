/**
 * Where the panel's cards go, so that nothing slides under the owner's pointer or focus (contracts.md 5
 * (v2): "arriving cards never move the focused or hovered one"). The queue runs oldest first — the oldest
 * request expires first, so it belongs on top — and an arrival is appended at its end, where it moves no
 * card of the queue. It would still push the history (below the queue) down, so while the owner is on a
 * card with live decision buttons (waiting or reconcilable: click-safety.ts `engaged`) that an arrival would
 * move, the arrival is held back (queue-view.ts shows a fixed "N new requests" button); a finished card
 * moving is harmless (issue 23 item 5).
 * Cards are placed with as few moves as possible, and focus stays where the owner left it.
 */
import type { View } from '../../common/owner-messages.js';

export function newestFirst(a: View, b: View): number {
  return a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1;
}

export function oldestFirst(a: View, b: View): number {
  return -newestFirst(a, b);
}

/**
 * Puts `nodes` into `parent` in order. Leavers go first, so the others keep their places and are moved
 * only when the order really changed (a moved node loses focus, and moving it is what we avoid).
 */
export function place(parent: HTMLElement, nodes: HTMLElement[]): void {
  const keep = new Set(nodes);
  for (const child of [...parent.children]) if (!keep.has(child as HTMLElement)) child.remove();
  nodes.forEach((node, i) => {
    if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] ?? null);
  });
}

/**
 * The arrivals (ids in `waiting`, oldest first, not yet in `queue`) to hold back because placing them
 * would move one of the `engaged` cards: any arrival moves a card below the queue; one sorted before a
 * queue card moves that card.
 */
export function arrivalsToHold(
  queue: HTMLElement,
  waiting: View[],
  arrivals: Set<string>,
  engaged: HTMLElement[],
): Set<string> {
  const moves = (card: HTMLElement): boolean => {
    if (!queue.contains(card)) return arrivals.size > 0;
    const at = waiting.findIndex((v) => v.id === card.dataset.pendingId);
    return waiting.some((v, i) => arrivals.has(v.id) && (at === -1 || i < at));
  };
  return arrivals.size > 0 && engaged.some(moves) ? new Set(arrivals) : new Set();
}

/** The queue card holding focus now, and its index, to hand to `keepFocus` after placing. */
export function focusInQueue(queue: HTMLElement): { id: string; at: number } | undefined {
  const card = document.activeElement?.closest<HTMLElement>('article.card');
  const id = card?.dataset.pendingId;
  if (!card || id === undefined || card.parentElement !== queue) return undefined;
  return { id, at: [...queue.children].indexOf(card) };
}

/**
 * Focus stays on the card it was on (`node`, its current element). A card that left the queue (decided,
 * expired) hands focus to the card that took its place — never to the newest one — without scrolling:
 * the owner stays where they were. With no card left in the queue focus is let go rather than follow the
 * card into the history, where it would hold back every later arrival; `j` then starts at the top.
 */
export function keepFocus(queue: HTMLElement, node: HTMLElement | undefined, at: number): void {
  if (node !== undefined && queue.contains(node)) {
    if (!node.contains(document.activeElement)) node.focus({ preventScroll: true });
    return;
  }
  const successor = queue.children[Math.min(at, queue.children.length - 1)] as HTMLElement | undefined;
  if (successor !== undefined) successor.focus({ preventScroll: true });
  else if (node?.contains(document.activeElement)) (document.activeElement as HTMLElement).blur();
}
