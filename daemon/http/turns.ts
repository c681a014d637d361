/**
 * Short event-loop turns under a burst of requests (bench row 2). Node 20 accepts one new connection per
 * turn of its event loop (seen here: twelve connections made at once to a server whose turns take 20 ms
 * were accepted 20 ms apart). When a hundred clients send at once, every request read in one turn was
 * handled in that turn — the SDK's parse, our intake, up to the group commit — so the turn lasted tens of
 * milliseconds, and a client that had opened a new connection meanwhile waited one such turn for each
 * connection ahead of it: row 2's slow mode, a p99 of 0.3–1 s.
 *
 * A request asks `turn()` before its handling. At most `perTurn` requests go on in one turn; the others
 * wait, in the order they asked, and go on `perTurn` at a time in the turns after, each turn polling (and
 * so accepting) between. A count, not a clock: what a request costs runs in microtasks after it is let go,
 * where no timer can see it; at ~0.5–1 ms a request, eight make a turn of a few milliseconds while a group
 * commit still gathers several submissions. A lone request, or a few, never wait.
 */
export class TurnLimit {
  readonly #perTurn: number;
  /** Requests let go in this turn; reset at its end (setImmediate). */
  #now = 0;
  /** Requests waiting for a later turn, in the order they asked. */
  readonly #waiting: Array<() => void> = [];
  #pumping = false;

  constructor(perTurn: number) {
    if (!Number.isInteger(perTurn) || perTurn < 1) throw new Error('perTurn must be an integer ≥ 1');
    this.#perTurn = perTurn;
  }

  /** Undefined when the request may go on in this turn, else a promise that resolves in a later one. */
  turn(): Promise<void> | undefined {
    if (this.#waiting.length === 0 && this.#now < this.#perTurn) {
      if (this.#now++ === 0) setImmediate(() => (this.#now = 0));
      return undefined;
    }
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      if (!this.#pumping) {
        this.#pumping = true;
        setImmediate(() => this.#pump());
      }
    });
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Lets `perTurn` waiting requests go on (their handling runs in the microtasks after this callback), then,
   * while any wait, comes again in the next turn: an immediate set in the check phase runs in the next one.
   */
  #pump(): void {
    for (let i = 0; i < this.#perTurn && this.#waiting.length > 0; i++) this.#waiting.shift()!();
    if (this.#waiting.length > 0) setImmediate(() => this.#pump());
    else this.#pumping = false;
  }
}
