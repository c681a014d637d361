/**
 * The history's filters (issue 4): by status and by client. The client list follows the clients seen so
 * far; a finished card the filters exclude is hidden, not removed, so clearing a filter brings it back at
 * once, and "nothing matches" shows when every finished card is hidden.
 */
import type { View } from '../../common/owner-messages.js';
import { byId, el } from '../dom.js';

export class HistoryFilters {
  readonly #status = byId<HTMLSelectElement>('filter-status');
  readonly #client = byId<HTMLSelectElement>('filter-client');

  /** `changed()` runs when the owner picks another filter (app.ts re-renders). */
  constructor(changed: () => void) {
    this.#status.addEventListener('change', changed);
    this.#client.addEventListener('change', changed);
  }

  /**
   * Offers every client of `all`, and hides the cards of `done` (`node(v)`) the filters exclude, and those
   * a history search on (history-search.ts) did not answer (`shows`).
   */
  apply(
    all: View[],
    done: View[],
    node: (v: View) => HTMLElement | undefined,
    shows: (id: string) => boolean = () => true,
  ): void {
    const clients = [...new Set(all.map((v) => v.client))].sort();
    const current = this.#client.value;
    if (this.#client.options.length - 1 !== clients.length) {
      this.#client.replaceChildren(
        el('option', { value: '' }, 'all clients'),
        ...clients.map((c) => el('option', { value: c }, c)),
      );
      this.#client.value = clients.includes(current) ? current : '';
    }
    let shown = 0;
    for (const v of done) {
      const n = node(v);
      if (n === undefined) continue;
      const okStatus = this.#status.value === '' || this.#status.value === v.status;
      const okClient = this.#client.value === '' || this.#client.value === v.client;
      n.hidden = !(okStatus && okClient && shows(v.id));
      if (!n.hidden) shown++;
    }
    byId('history-empty').hidden = shown > 0;
  }
}
