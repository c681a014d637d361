/**
 * The history search (contract 14): text (in the command, its arguments, client, decider or a note), state,
 * client and a date range, answered by the daemon from its indexes (a `history` frame with those fields) —
 * the panel holds only what it has loaded, so searching it alone would miss the rest. While a search is
 * on, the history shows its results only; "Export shown" asks for the JSONL of the shown commands' audit
 * entries and saves it as a file (`ogf-broker audit verify --file` checks it).
 */
import type { View } from '../../common/owner-messages.js';
import { byId, setText } from '../dom.js';

export interface SearchFilter {
  text?: string;
  state?: string;
  client?: string;
  since?: string;
  until?: string;
  /** Contract 16: the node that received it, exactly. */
  node?: string;
}

export class HistorySearch {
  readonly #form = byId<HTMLFormElement>('history-search');
  readonly #status = byId('search-status');
  /** The ids the last search answered, while a search is on. */
  #matches: Set<string> | undefined;
  #pendingReq: string | undefined;

  /**
   * `search(filter)` sends a `history` frame with the filter and returns its req_id (undefined when not
   * connected); `exportShown()` asks for the JSONL of what is shown; `changed()` re-renders.
   */
  constructor(
    search: (filter: SearchFilter) => string | undefined,
    exportShown: () => void,
    changed: () => void,
  ) {
    this.#form.addEventListener('submit', (e) => {
      e.preventDefault();
      const filter = this.filter();
      if (Object.keys(filter).length === 0) {
        this.clear();
        changed();
        return;
      }
      this.#pendingReq = search(filter);
      setText(this.#status, this.#pendingReq === undefined ? 'Not connected.' : 'Searching…');
    });
    byId('search-clear').addEventListener('click', () => {
      this.#form.reset();
      this.clear();
      changed();
    });
    byId('search-export').addEventListener('click', exportShown);
  }

  /** What the form asks for; empty fields are left out. Dates are whole local days. */
  filter(): SearchFilter {
    const f: SearchFilter = {};
    const value = (id: string) => byId<HTMLInputElement | HTMLSelectElement>(id).value.trim();
    if (value('search-text') !== '') f.text = value('search-text');
    if (value('search-state') !== '') f.state = value('search-state');
    if (value('search-client') !== '') f.client = value('search-client');
    if (value('search-node') !== '') f.node = value('search-node').toLowerCase();
    const since = value('search-since');
    const until = value('search-until');
    if (since !== '') f.since = new Date(`${since}T00:00:00`).toISOString();
    if (until !== '') f.until = new Date(`${until}T23:59:59.999`).toISOString();
    return f;
  }

  /** Whether `reqId` answers this search; if so its commands become the shown results. */
  answered(reqId: string, commands: View[]): boolean {
    if (reqId !== this.#pendingReq) return false;
    this.#pendingReq = undefined;
    this.#matches = new Set(commands.map((v) => v.id));
    setText(
      this.#status,
      commands.length === 0
        ? 'No command matches.'
        : `${commands.length} matching command${commands.length === 1 ? '' : 's'}.`,
    );
    return true;
  }

  /** While a search is on: whether command `id` is one of its results. */
  shows(id: string): boolean {
    return this.#matches === undefined || this.#matches.has(id);
  }

  get active(): boolean {
    return this.#matches !== undefined;
  }

  clear(): void {
    this.#matches = undefined;
    this.#pendingReq = undefined;
    setText(this.#status, '');
  }

  /** Says what happened to an export. */
  say(text: string): void {
    setText(this.#status, text);
  }
}

/** Saves `text` as a file the browser downloads. */
export function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
