/**
 * The broker's two views of its commands in memory (architecture.md example 3: batched, never skipped).
 *
 * The working view (`active`, the per-client PENDING counts, the changes not stored yet) changes at once, so
 * a later request of the same turn sees it: the caps count a command queued a moment ago, a request_id
 * repeated within the turn finds its command. Decisions read it. The committed view (`shown`) follows only
 * after the batch's commit; what edges read (`get`, `snapshot`, `wait`) comes from it, so nobody hears of
 * a change before it is stored. When a batch fails, `rollback` puts the working view back from the
 * committed one. Anything older than the last commit is the store's (the broker asks it).
 *
 * Its own file (issue 20 item 3): the broker decides and applies; this file only remembers.
 */
import { type Command, isFinal } from '../model/index.js';

const requestKey = (client: string, requestId: string) => `${client}\n${requestId}`;

/** Final commands heard from other nodes whose version is remembered (a late read-back is then ignored). */
const FINAL_SEEN_MAX = 10_000;

/** Newer: a later version, or the same version with another preview (an amend keeps the version). */
function isNewer(c: Command, known: Command): boolean {
  if (c.version !== known.version) return c.version > known.version;
  return c.preview !== known.preview && JSON.stringify(c.preview) !== JSON.stringify(known.preview);
}

export class Views {
  /**
   * The working view: every non-final command as of the last change, committed or not, in creation order.
   * Decisions read it; its size is the PENDING count the caps bound.
   */
  #active = new Map<string, Command>();
  /** The committed view: every non-final command as of the last commit, in creation order. Edges read it. */
  readonly #committed = new Map<string, Command>();
  /** Commands the pending batch changed (finals too), at their latest version: not in the store yet. */
  readonly #unsaved = new Map<string, Command>();
  /** Commands the pending batch created, by client and request_id (the store has them after the commit). */
  readonly #unsavedRequests = new Map<string, Command>();
  /** Contract 16: the versions of other nodes' commands heard final, oldest first (bounded). */
  readonly #finalSeen = new Map<string, number>();
  /** PENDING commands by client, kept with #active (contract 1.3's per-client cap). */
  readonly #pendingByClient = new Map<string, number>();

  /** A non-final command in the working view. */
  active(id: string): Command | undefined {
    return this.#active.get(id);
  }

  /** Every non-final command in the working view, in creation order. */
  actives(): IterableIterator<Command> {
    return this.#active.values();
  }

  /** How many commands are PENDING, committed or not (contract 1.3: `max_pending`). */
  get pending(): number {
    return this.#active.size;
  }

  /** How many commands `client` has PENDING, committed or not (contract 1.3: `max_pending_per_client`). */
  pendingOf(client: string): number {
    return this.#pendingByClient.get(client) ?? 0;
  }

  /** The command as this turn left it (final ones too), if it changed since the last commit or is active. */
  working(id: string): Command | undefined {
    return this.#active.get(id) ?? this.#unsaved.get(id);
  }

  /** The command `client` created under `requestId` in the pending batch, if any. */
  unsavedRequest(client: string, requestId: string): Command | undefined {
    return this.#unsavedRequests.get(requestKey(client, requestId));
  }

  /** A non-final command as last committed. */
  shown(id: string): Command | undefined {
    return this.#committed.get(id);
  }

  /** Every non-final command as last committed, in creation order. */
  shownAll(): Command[] {
    return [...this.#committed.values()];
  }

  /** At start: a stored non-final command, in both views. */
  load(c: Command): void {
    this.#track(c);
    this.#committed.set(c.id, c);
  }

  /** A command this turn created: the working view at once (the next request of this turn sees it). */
  created(c: Command): void {
    // Contract 11: a command a rule denied at submit is created final, never PENDING.
    if (!isFinal(c)) this.#track(c);
    this.#unsaved.set(c.id, c);
    if (c.request_id !== undefined) this.#unsavedRequests.set(requestKey(c.client, c.request_id), c);
  }

  /** A change this turn made to a command: the working view at once. */
  changed(next: Command): void {
    if (isFinal(next)) this.#untrack(next);
    else this.#track(next);
    this.#unsaved.set(next.id, next);
  }

  /** After its commit: the committed view follows a change (a final command leaves it). */
  show(c: Command): void {
    if (isFinal(c)) {
      this.#committed.delete(c.id);
      this.#seenFinal(c);
    } else this.#committed.set(c.id, c);
  }

  /**
   * Contract 16: another node's committed change, as the store read it back. The committed view follows
   * when it is newer than what it holds; the working view too, unless the pending batch changed that
   * command (the batch then fails on the database, and its rollback takes the working view from this
   * committed one). False when it was not newer: nothing changed, nobody needs to hear of it.
   */
  heard(c: Command): boolean {
    const known = this.#committed.get(c.id) ?? this.#active.get(c.id);
    if (known !== undefined && !isNewer(c, known)) return false;
    const seen = this.#finalSeen.get(c.id);
    if (seen !== undefined && seen >= c.version) return false;
    if (isFinal(c)) {
      this.#committed.delete(c.id);
      this.#seenFinal(c);
    } else {
      this.#committed.set(c.id, c);
    }
    if (!this.#unsaved.has(c.id)) {
      if (isFinal(c)) this.#untrack(c);
      else this.#track(c);
    }
    return true;
  }

  /** The pending batch committed: the store has what it changed. */
  saved(): void {
    this.#unsaved.clear();
    this.#unsavedRequests.clear();
  }

  /** A batch failed and nothing of it is stored: the working view goes back to the committed one. */
  rollback(): void {
    this.#active = new Map(this.#committed);
    this.#pendingByClient.clear();
    for (const c of this.#active.values()) {
      this.#pendingByClient.set(c.client, (this.#pendingByClient.get(c.client) ?? 0) + 1);
    }
    this.#unsaved.clear();
    this.#unsavedRequests.clear();
  }

  /** A final version remembered, so a read-back older than it (contract 16) is never taken for news. */
  #seenFinal(c: Command): void {
    this.#finalSeen.delete(c.id);
    this.#finalSeen.set(c.id, c.version);
    if (this.#finalSeen.size > FINAL_SEEN_MAX) this.#finalSeen.delete(this.#finalSeen.keys().next().value!);
  }

  #track(c: Command): void {
    if (!this.#active.has(c.id)) {
      this.#pendingByClient.set(c.client, (this.#pendingByClient.get(c.client) ?? 0) + 1);
    }
    this.#active.set(c.id, c);
  }

  #untrack(c: Command): void {
    if (!this.#active.delete(c.id)) return;
    const n = (this.#pendingByClient.get(c.client) ?? 1) - 1;
    if (n > 0) this.#pendingByClient.set(c.client, n);
    else this.#pendingByClient.delete(c.client);
  }
}
