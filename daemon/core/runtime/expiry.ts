/**
 * Review deadlines (contract 2: `expire`, reason ReviewExpired): each command awaiting review has its
 * deadline here, set when it is committed (or at start, from its stored `review_expires_at`, so a restart
 * keeps the original deadline) and dropped once the command leaves `awaiting_review`. When one is due, the
 * broker's `expire` applies the event — unless the command was decided meanwhile or the broker is closing.
 *
 * One timer for all of them, at the earliest deadline, over a min-heap: a timer per command made a restart
 * with 10,000 awaiting arm 10,000 Node timers (bench row 5: 34–41 ms of a profiled restart, and their
 * objects kept for as long as each waits). A dropped deadline stays in the heap until it surfaces or the heap
 * is rebuilt, which happens once it holds more dropped entries than live ones: memory follows the commands
 * awaiting review, not the commands decided.
 *
 * A store that refuses the write (read-only, disk full) rolls the batch back; the rollback re-arms the
 * command a second later (`rearm`), so an expiry is never lost. Its own file (issue 20 item 3): the broker
 * says which command and when, this file owns the deadlines.
 */

import type { Logger } from '../../base/index.js';
import { type Clock, iso } from '../../base/index.js';
import type { Command } from '../model/index.js';

export interface ExpiryDeps {
  clock: Clock;
  log: Logger;
  /** The command as the working view has it now, if still not final. */
  active(id: string): Command | undefined;
  /** Applies the `expire` event at `at`; rejects when its batch failed. */
  expire(current: Command, at: string): Promise<unknown>;
}

/** One deadline: `retry` when it only arms the command again (after a rolled-back expiry). */
interface Due {
  at: number;
  id: string;
  /** Arming order: equal deadlines fire in the order they were set. */
  seq: number;
  retry: boolean;
}

/** How long after a rolled-back expiry the command is armed again. */
const RETRY_MS = 1000;

export class Expiry {
  readonly #deps: ExpiryDeps;
  /** Each command's current deadline; a heap entry that is not its id's entry here was dropped. */
  readonly #due = new Map<string, Due>();
  #heap: Due[] = [];
  #seq = 0;
  #timer: { cancel(): void } | undefined;
  /** When #timer fires (Infinity when none is set). */
  #timerAt = Number.POSITIVE_INFINITY;
  #closing = false;

  constructor(deps: ExpiryDeps) {
    this.#deps = deps;
  }

  /** Sets (or moves) `c`'s deadline to its `review_expires_at`. */
  arm(c: Command): void {
    this.#set(c.id, Date.parse(c.review_expires_at), false);
  }

  /** `c` left `awaiting_review` (its change committed): its deadline no longer applies. */
  cancel(id: string): void {
    this.#due.delete(id);
  }

  /**
   * After a rollback: every command awaiting review without a deadline (its expiry fired while the failed
   * batch changed it) is armed again a second later, from its then current state.
   */
  rearm(active: Iterable<Command>): void {
    for (const c of active) {
      if (c.phase.state === 'awaiting_review' && !this.#due.has(c.id))
        this.#set(c.id, this.#deps.clock.now() + RETRY_MS, true);
    }
  }

  /** Shutdown: nothing fires any more, nothing is armed. */
  close(): void {
    this.#closing = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#due.clear();
    this.#heap = [];
  }

  #set(id: string, at: number, retry: boolean): void {
    if (this.#closing) return;
    const due: Due = { at, id, seq: ++this.#seq, retry };
    this.#due.set(id, due);
    if (this.#heap.length > 64 && this.#heap.length > 2 * this.#due.size)
      this.#heap = heapOf(this.#due.values());
    else push(this.#heap, due);
    if (at < this.#timerAt) this.#schedule();
  }

  /** The one timer, at the earliest live deadline. */
  #schedule(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    while (this.#heap.length > 0 && this.#due.get(this.#heap[0]!.id) !== this.#heap[0]) pop(this.#heap);
    const next = this.#heap[0];
    if (next === undefined || this.#closing) return;
    this.#timerAt = next.at;
    this.#timer = this.#deps.clock.setTimeout(() => this.#fire(), next.at - this.#deps.clock.now());
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = this.#deps.clock.now();
    while (!this.#closing && this.#heap.length > 0 && this.#heap[0]!.at <= now) {
      const due = pop(this.#heap)!;
      if (this.#due.get(due.id) !== due) continue;
      this.#due.delete(due.id);
      if (due.retry) this.#again(due.id);
      else this.#expire(due.id, now);
    }
    this.#schedule();
  }

  #expire(id: string, now: number): void {
    const current = this.#deps.active(id);
    if (current?.phase.state !== 'awaiting_review') return;
    // The store refused the write (read-only, disk full): the rollback arms a retry shortly rather than
    // lose the expiry.
    this.#deps
      .expire(current, iso(now))
      .catch((e: unknown) =>
        this.#deps.log.log('error', 'commit_failed', { id, error: (e as Error).message }),
      );
  }

  #again(id: string): void {
    const current = this.#deps.active(id);
    if (current) this.arm(current);
  }
}

function before(a: Due, b: Due): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

function push(heap: Due[], due: Due): void {
  heap.push(due);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(heap[i]!, heap[parent]!)) break;
    [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
    i = parent;
  }
}

function pop(heap: Due[]): Due | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length === 0 || last === undefined) return top;
  heap[0] = last;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
    if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
    if (m === i) return top;
    [heap[i], heap[m]] = [heap[m]!, heap[i]!];
    i = m;
  }
}

function heapOf(dues: Iterable<Due>): Due[] {
  const heap: Due[] = [];
  for (const d of dues) push(heap, d);
  return heap;
}
