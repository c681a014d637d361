/**
 * Rule 6: the launches of one OGF session never overlap and run in approval order. Each session key is
 * a lane; a lane runs one launch at a time, and a lane can be held busy from outside (after a restart,
 * while an orphaned delivery of the dead daemon may still run). Commands without a key do not queue.
 */
export class SessionLanes {
  readonly #queues = new Map<string, string[]>();
  readonly #busy = new Set<string>();
  readonly #run: (id: string, done: () => void) => void;

  /** `run` launches one command and calls `done` exactly once when it has ended. */
  constructor(run: (id: string, done: () => void) => void) {
    this.#run = run;
  }

  /** Queues `id` on its session's lane; it runs when every earlier one on that lane has ended. */
  enqueue(key: string, id: string): void {
    const queue = this.#queues.get(key) ?? [];
    queue.push(id);
    this.#queues.set(key, queue);
    this.#pump(key);
  }

  /** Marks a lane busy until `release`; false when it already was. */
  hold(key: string): boolean {
    if (this.#busy.has(key)) return false;
    this.#busy.add(key);
    return true;
  }

  /** Ends a hold and starts the lane's next launch, if any. */
  release(key: string): void {
    this.#busy.delete(key);
    this.#pump(key);
  }

  #pump(key: string): void {
    if (this.#busy.has(key)) return;
    const queue = this.#queues.get(key);
    const id = queue?.shift();
    if (queue && queue.length === 0) this.#queues.delete(key);
    if (id === undefined) return;
    this.#busy.add(key);
    this.#run(id, () => this.release(key));
  }
}
