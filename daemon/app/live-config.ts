/**
 * The config the daemon applies now (contract 17). A reload replaces it whole or not at all, so every part
 * that reads it — the broker's command policy, the passkey rule, the owner edge, the doctor — reads
 * `current` when a request comes, never a copy taken at start. The parts that hold state built from it (the
 * rule book, the catalog's compiled patterns, the upstream connections, the notification channels) are
 * rebuilt by reload.ts and told through `onChange`.
 */
import type { Config } from '../config/index.js';

export class LiveConfig {
  #current: Config;
  readonly #listeners = new Set<(next: Config, before: Config) => void>();

  constructor(config: Config) {
    this.#current = config;
  }

  get current(): Config {
    return this.#current;
  }

  /** Makes `next` the config every part reads, then tells the listeners (in the order they subscribed). */
  replace(next: Config): void {
    const before = this.#current;
    this.#current = next;
    for (const l of [...this.#listeners]) l(next, before);
  }

  onChange(listener: (next: Config, before: Config) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
