/**
 * At most N preview calls at once per upstream (contract 12: 4). A waiter that is aborted (its command was
 * decided while it queued) leaves the queue without ever taking a slot.
 */

export class Slots {
  readonly #max: number;
  #busy = 0;
  readonly #queue: Array<() => void> = [];

  constructor(max: number) {
    this.#max = max;
  }

  /** Calls in flight now (tests and the bench read it). */
  get busy(): number {
    return this.#busy;
  }

  /**
   * Runs `fn` once a slot is free, unless `signal` aborts first (then resolves undefined without running it).
   * The slot is released when `fn` settles, whatever it did.
   */
  async run<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T | undefined> {
    if (signal.aborted) return undefined;
    if (this.#busy >= this.#max) {
      const got = await new Promise<boolean>((resolve) => {
        const take = () => {
          signal.removeEventListener('abort', leave);
          resolve(true);
        };
        const leave = () => {
          const i = this.#queue.indexOf(take);
          if (i !== -1) this.#queue.splice(i, 1);
          resolve(false);
        };
        this.#queue.push(take);
        signal.addEventListener('abort', leave, { once: true });
      });
      if (!got) return undefined;
    } else this.#busy++;
    try {
      return await fn();
    } finally {
      const next = this.#queue.shift();
      // The slot passes straight to the next waiter (busy unchanged), or is freed.
      if (next !== undefined) next();
      else this.#busy--;
    }
  }
}
