/**
 * The broker's subscribers (BrokerApi.subscribe, subscribeGrants): each hears every committed change, in
 * commit order. One that throws is logged and skipped, so it can neither stop the others hearing of the
 * change nor fail the batch that made it (architecture.md example 3). Its own file (issue 20 item 3).
 */
import type { Logger } from '../../base/index.js';

export class Listeners<T> {
  readonly #log: Logger;
  readonly #listeners = new Set<(value: T) => void>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Adds `listener`; returns the function that removes it. */
  add(listener: (value: T) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells every listener, a copy of the set, so one that unsubscribes while told does not skip another. */
  emit(value: T): void {
    for (const l of [...this.#listeners]) {
      try {
        l(value);
      } catch (e) {
        this.#log.log('error', 'listener_failed', { error: (e as Error).message });
      }
    }
  }
}
