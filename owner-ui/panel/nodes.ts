/**
 * Contract 16: several daemons share one PostgreSQL, and every owner sees every node's commands. Each card
 * carries its node's mark (card.ts, `.node-mark`, from `View.node`), shown only once the panel holds
 * commands of more than one node — queue, history and search results alike — so one machine alone stays
 * uncluttered. Then too the history search offers its node field, with the nodes seen so far to pick from.
 * Showing the marks is a class on <body> (styles.css), so no card is rebuilt when a second node appears;
 * the caller does it inside the ClickGuard, like every change that may move a card.
 */
import type { View } from '../../common/owner-messages.js';
import { byId, el } from '../dom.js';

/** The distinct nodes of `views`, by name (commands stored before nodes have none). */
export function nodesOf(views: Iterable<View>): string[] {
  const names = new Set<string>();
  for (const v of views) if (v.node !== undefined) names.add(v.node);
  return [...names].sort();
}

export class NodeMarks {
  #shown = '';

  /** Shows the marks (and the search's node field) when `all` holds more than one node's commands. */
  update(all: Iterable<View>): void {
    const names = nodesOf(all);
    const key = names.join(' ');
    if (key === this.#shown) return;
    this.#shown = key;
    document.body.classList.toggle('many-nodes', names.length > 1);
    byId('search-nodes').replaceChildren(...names.map((n) => el('option', { value: n })));
  }
}
