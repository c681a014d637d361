/**
 * The tools `tools/list` publishes (contract 3.1), as one changing set: today the five built-in tools; later
 * every upstream's tools too (section 7). A source that changes the set calls `replace()`, and every listener
 * (each 2025-era session, the 2026-07-28 subscription bus) then tells its clients with
 * `notifications/tools/list_changed`. Nothing is sent when the set did not actually change.
 */
import type { Tool } from '@modelcontextprotocol/server';

export type ToolsChanged = () => void;

export class ToolSet {
  #tools: readonly Tool[];
  #byName: Map<string, Tool>;
  readonly #listeners = new Set<ToolsChanged>();

  constructor(tools: readonly Tool[]) {
    this.#tools = tools;
    this.#byName = new Map(tools.map((t) => [t.name, t]));
  }

  list(): Tool[] {
    return [...this.#tools];
  }

  names(): string[] {
    return this.#tools.map((t) => t.name);
  }

  get(name: string): Tool | undefined {
    return this.#byName.get(name);
  }

  /** Replaces the whole set; listeners hear of it only when something a client can see changed. */
  replace(tools: readonly Tool[]): void {
    if (JSON.stringify(tools) === JSON.stringify(this.#tools)) return;
    this.#tools = tools;
    this.#byName = new Map(tools.map((t) => [t.name, t]));
    for (const l of [...this.#listeners]) l();
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: ToolsChanged): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
