/**
 * Compiles upstream tool schemas in the background, a slice at a time (issue 19 finding 4). Each schema's
 * compile is bounded (./schema-cost.ts), but one tools/list may hold hundreds of them (up to 8 MiB): done
 * in one synchronous step, that held the daemon's event loop for as long as they all took. Here a slice
 * compiles schemas until about SLICE_MS have passed, then yields to the event loop (setImmediate), so
 * every owner, client and other upstream is served between any two compiles; and the upstreams take
 * turns, so one that re-lists big schemas for ever delays only its own tools.
 *
 * A tool whose schema waits its turn is not exposed yet; `onReady` is called after each slice, and the
 * caller rebuilds its tools from the results. Results are kept while some listing still has the schema
 * (a tool re-listed with the same inputSchema keeps its validator) and dropped at the next `sweep` after.
 */
import { performance } from 'node:perf_hooks';
import { type CompiledSchema, compileInputSchema } from './schema.js';

/** How long one slice may go on starting new compiles (each one is bounded on its own). */
const SLICE_MS = 10;

export class SchemaCompiler {
  readonly #done = new Map<string, CompiledSchema>();
  /** Per upstream, the schemas waiting their turn by key, in listing order. */
  readonly #queues = new Map<string, Map<string, Record<string, unknown>>>();
  readonly #touched = new Set<string>();
  readonly #keys = new WeakMap<object, string>();
  readonly #onReady: () => void;
  #scheduled = false;

  /** `onReady` is called (asynchronously) after each slice that compiled something. */
  constructor(onReady: () => void) {
    this.#onReady = onReady;
  }

  /**
   * The compiled `schema` (or why it is refused); undefined while it waits its turn among `upstream`'s.
   * Marks it as still listed for the next `sweep`.
   */
  get(upstream: string, schema: Record<string, unknown>): CompiledSchema | undefined {
    const key = this.#keyOf(schema);
    this.#touched.add(key);
    const done = this.#done.get(key);
    if (done !== undefined) return done;
    let queue = this.#queues.get(upstream);
    if (queue === undefined) {
      queue = new Map();
      this.#queues.set(upstream, queue);
    }
    queue.set(key, schema);
    this.#schedule();
    return undefined;
  }

  /** Drops every result and waiting schema that no `get` asked for since the last sweep. */
  sweep(): void {
    for (const key of this.#done.keys()) if (!this.#touched.has(key)) this.#done.delete(key);
    for (const [upstream, queue] of this.#queues) {
      for (const key of queue.keys()) if (!this.#touched.has(key)) queue.delete(key);
      if (queue.size === 0) this.#queues.delete(upstream);
    }
    this.#touched.clear();
  }

  /** The schema's JSON, once per listed object (the registry keeps a listing's objects until it re-lists). */
  #keyOf(schema: Record<string, unknown>): string {
    let key = this.#keys.get(schema);
    if (key === undefined) {
      key = JSON.stringify(schema);
      this.#keys.set(schema, key);
    }
    return key;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#slice());
  }

  #slice(): void {
    this.#scheduled = false;
    const start = performance.now();
    let compiled = 0;
    while (this.#queues.size > 0 && (compiled === 0 || performance.now() - start < SLICE_MS)) {
      // Round robin: the first upstream in line compiles one schema, then goes to the back of the line.
      const [upstream, queue] = this.#queues.entries().next().value as [
        string,
        Map<string, Record<string, unknown>>,
      ];
      this.#queues.delete(upstream);
      const [key, schema] = queue.entries().next().value as [string, Record<string, unknown>];
      queue.delete(key);
      if (queue.size > 0) this.#queues.set(upstream, queue);
      this.#done.set(key, compileInputSchema(schema));
      compiled++;
    }
    if (this.#queues.size > 0) this.#schedule();
    if (compiled > 0) this.#onReady();
  }
}
