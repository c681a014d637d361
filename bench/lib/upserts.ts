/**
 * The owner's upserts by `tag/state`, kept until asked for, so a wait never misses one that came first
 * (rows 10, 11, 12 follow commands by the `tag` argument of the bench catalog's `noop`).
 */
import type { Owner, View } from './clients.js';

export interface Seen {
  view: View;
  /** Arrival time on the owner's socket (`performance.now()`, before parsing). */
  at: number;
}

export class Upserts {
  readonly #seen = new Map<string, Seen>();
  readonly #waiting = new Map<string, (s: Seen) => void>();

  constructor(owner: Owner) {
    owner.onUpsert = (view, at) => {
      const key = `${String(view.args.tag)}/${view.state}`;
      const w = this.#waiting.get(key);
      if (w) {
        this.#waiting.delete(key);
        w({ view, at });
      } else this.#seen.set(key, { view, at });
    };
  }

  next(tag: string, state: string, timeoutMs = 30_000): Promise<Seen> {
    const key = `${tag}/${state}`;
    const s = this.#seen.get(key);
    if (s) {
      this.#seen.delete(key);
      return Promise.resolve(s);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(key);
        reject(new Error(`the owner never saw ${key}`));
      }, timeoutMs);
      this.#waiting.set(key, (x) => {
        clearTimeout(timer);
        resolve(x);
      });
    });
  }
}
