/**
 * The history: finished commands, newest first (contracts.md 5), filtered by status and client
 * (filters.ts), with how many need reconciling (an ERROR or UNKNOWN outcome nobody recorded yet) and the
 * "Load older history" button, which is disabled once a page comes back empty.
 */
import type { View } from '../../common/owner-messages.js';
import { byId } from '../dom.js';
import { HistoryFilters } from './filters.js';
import { place } from './placement.js';

export class HistoryView {
  readonly #el = byId('history');
  readonly #older = byId<HTMLButtonElement>('older');
  readonly #filters: HistoryFilters;

  /** `filtered()`: the owner picked another filter; `older()`: the owner asked for older history. */
  constructor(filtered: () => void, older: () => void) {
    this.#filters = new HistoryFilters(filtered);
    this.#older.addEventListener('click', older);
  }

  /** Puts `nodes` in the history, in this order. */
  place(nodes: HTMLElement[]): void {
    place(this.#el, nodes);
  }

  /** Offers every client of `all`, and hides the cards of `done` the filters exclude. */
  filter(
    all: View[],
    done: View[],
    node: (v: View) => HTMLElement | undefined,
    shows?: (id: string) => boolean,
  ): void {
    this.#filters.apply(all, done, node, shows);
  }

  /** A `history` reply brought `count` commands: none means there is nothing older to ask for. */
  loaded(count: number): void {
    this.#older.disabled = count === 0;
  }

  /** How many finished commands of `done` still need reconciling. */
  showAttention(done: View[]): void {
    const attention = done.filter(
      (v) => (v.status === 'ERROR' || v.status === 'UNKNOWN') && !v.reconciliation,
    ).length;
    byId('attention').textContent = attention === 0 ? '' : `${attention} need reconciling`;
  }
}
