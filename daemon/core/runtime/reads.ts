/**
 * What the edges read of the broker: committed state only (broker-api.ts BrokerApi: "its reads see committed
 * state only"; architecture.md example 3: nobody hears of a change before its commit). A non-final command
 * comes from the committed view in memory (command-views.ts), anything else from the store's committed reads and
 * queries (store.ts); live grants from the grant book's committed view (grant-book.ts). Never the working
 * view: a change queued this turn is invisible here until its batch commits.
 *
 * Its own file (issue 20 item 3): the broker writes, this reads; a store behind the ports (SQLite today,
 * PostgreSQL in section 16) changes what these ask, not the broker.
 */

import type { ChainEntry, Command, Grant, State } from '../model/index.js';
import type { BrokerApi, HistorySearch, StorePorts } from '../ports/index.js';
import type { Views } from './command-views.js';
import type { GrantBook } from './grant-book.js';

export interface ReadsDeps {
  store: StorePorts;
  views: Views;
  grants: GrantBook;
}

/** The reads of BrokerApi, written here once (the broker hands them out as they are). */
export type ReadName =
  | 'get'
  | 'snapshot'
  | 'history'
  | 'search'
  | 'auditFor'
  | 'tasksOf'
  | 'counts'
  | 'liveGrants'
  | 'recentGrants';

export class Reads implements Pick<BrokerApi, ReadName> {
  readonly #store: StorePorts;
  readonly #views: Views;
  readonly #grants: GrantBook;

  constructor(deps: ReadsDeps) {
    this.#store = deps.store;
    this.#views = deps.views;
    this.#grants = deps.grants;
  }

  /** The command as last committed (edges never see a change before its commit). */
  get(id: string): Command | undefined {
    return this.#views.shown(id) ?? this.#store.committedReads.command(id);
  }

  /** Every non-final command plus the newest `finalLimit` final ones, newest first. */
  snapshot(finalLimit = 200): Command[] {
    return this.#views.shownAll().reverse().concat(this.#store.committedReads.recentFinal(finalLimit));
  }

  /** Commands newest first, before a pending_id (or an ISO time) when given. */
  history(limit: number, before?: string): Promise<Command[]> {
    return this.#store.commands.history(limit, before);
  }

  /** The history search (contract 14), newest first, served by the store's indexes. */
  search(filter: HistorySearch, limit: number, before?: string): Promise<Command[]> {
    return this.#store.commands.search(filter, limit, before);
  }

  /** These commands' audit entries, oldest first (contract 14: "who did what, when"). */
  auditFor(commandIds: readonly string[]): Promise<ChainEntry[]> {
    return this.#store.audits.chainFor(commandIds);
  }

  /** One page of `client`'s tasks, newest first (issue 19 finding 3: by index, never another client's). */
  tasksOf(
    client: string,
    limit: number,
    maxChars: number,
    before?: string,
  ): Promise<{ commands: Command[]; more: boolean } | undefined> {
    return this.#store.commands.tasksOf(client, limit, maxChars, before);
  }

  counts(): Promise<Partial<Record<State, number>>> {
    return this.#store.commands.counts();
  }

  /** Every live grant as last committed, oldest first (the owner snapshot). */
  liveGrants(): Grant[] {
    return this.#grants.live();
  }

  /** The newest `limit` grants in any state, newest first (`grant list --all`). */
  recentGrants(limit: number): Promise<Grant[]> {
    return this.#store.grants.recent(limit);
  }
}
