/**
 * What the broker reads synchronously (core/ports/store.ts CommittedReads) and the token checks (tokens/), kept
 * in memory for a networked store (contract 16): every command not yet final, the newest `window` final
 * ones, the request_id index of those, every live grant and the newest `window` ended ones, and every
 * owner's and client's token hash. Loaded at open; kept current by this daemon's own commits (applied
 * once committed, transaction.ts) and by the change feed for other writers' (feed.ts, store.ts).
 *
 * The window: a final command older than the newest `window` finals is not here, so a `get` of it from
 * the broker answers as if unknown and a request_id reused after that many later commands makes a new
 * command (the database's unique index then refuses it: nothing is stored twice). Another daemon's
 * commit is here once its notification has been read back (milliseconds; after a lost connection, once
 * the feed is back and the whole mirror reloaded). Each row carries its version (commands) or `rev`
 * (grants, token hashes), so a late read never replaces a newer row.
 */
import type { Command, CommittedReads, Grant } from '../../core/index.js';
import { isFinal } from '../../core/index.js';
import type { TokenTable } from '../rules/index.js';

/** Final commands (and ended grants) the mirror keeps besides the active ones; see the file's comment. */
export const MIRROR_WINDOW = 1000;

interface Row<T> {
  value: T;
  seq: number;
  rev: number;
}

/** The two token tables: names to hashes and back. */
class TokenMap {
  readonly byName = new Map<string, { hash: string; rev: number }>();
  readonly byHash = new Map<string, string>();

  apply(name: string, hash: string, rev: number): void {
    const old = this.byName.get(name);
    if (old !== undefined && old.rev > rev) return;
    if (old !== undefined && this.byHash.get(old.hash) === name) this.byHash.delete(old.hash);
    this.byName.set(name, { hash, rev });
    this.byHash.set(hash, name);
  }

  all(): Map<string, string> {
    return new Map([...this.byName].sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, v]) => [n, v.hash]));
  }
}

/** How a committed write reaches the mirror in use (store.ts). */
export type Apply = (effect: (m: Mirror) => void) => void;

/** The in-memory copy; every method is synchronous. */
export class Mirror implements CommittedReads {
  readonly #window: number;
  readonly #commands = new Map<string, Row<Command>>();
  /** Seqs of the final commands held, ascending (evicted from the front). */
  #finals: Array<{ seq: number; id: string }> = [];
  readonly #requests = new Map<string, string>();
  readonly #grants = new Map<string, Row<Grant>>();
  #ended: Array<{ seq: number; id: string }> = [];
  readonly tokens: Record<TokenTable, TokenMap> = { owners: new TokenMap(), mcp_clients: new TokenMap() };

  constructor(window = MIRROR_WINDOW) {
    this.#window = window;
  }

  // ---- kept current ---------------------------------------------------------------------------------

  /** A command as committed at `seq` (its creation order); an older version than the one held is ignored. */
  applyCommand(c: Command, seq: number): void {
    const old = this.#commands.get(c.id);
    if (old !== undefined && old.value.version > c.version) return;
    if (old === undefined && isFinal(c) && this.#finals.length >= this.#window && seq < this.#finals[0]!.seq)
      return; // older than every final held: outside the window
    this.#commands.set(c.id, { value: c, seq, rev: c.version });
    if (c.request_id !== undefined) this.#requests.set(requestKey(c.client, c.request_id), c.id);
    if (isFinal(c) && (old === undefined || !isFinal(old.value))) {
      insertSorted(this.#finals, { seq, id: c.id });
      while (this.#finals.length > this.#window) this.#forgetCommand(this.#finals.shift()!.id);
    }
  }

  #forgetCommand(id: string): void {
    const row = this.#commands.get(id);
    if (row === undefined) return;
    this.#commands.delete(id);
    const c = row.value;
    if (c.request_id !== undefined) this.#requests.delete(requestKey(c.client, c.request_id));
  }

  /** A grant as committed (its `rev` orders writes of the same grant). */
  applyGrant(g: Grant, seq: number, rev: number): void {
    const old = this.#grants.get(g.id);
    if (old !== undefined && old.rev > rev) return;
    this.#grants.set(g.id, { value: g, seq, rev });
    if (g.state !== 'live' && !this.#ended.some((e) => e.id === g.id)) {
      insertSorted(this.#ended, { seq, id: g.id });
      while (this.#ended.length > this.#window) this.#grants.delete(this.#ended.shift()!.id);
    } else if (g.state === 'live') {
      this.#ended = this.#ended.filter((e) => e.id !== g.id);
    }
  }

  applyToken(table: TokenTable, name: string, hash: string, rev: number): void {
    this.tokens[table].apply(name, hash, rev);
  }

  // ---- CommittedReads --------------------------------------------------------------------------------

  command(id: string): Command | undefined {
    return this.#commands.get(id)?.value;
  }

  byRequest(client: string, requestId: string): Command | undefined {
    const id = this.#requests.get(requestKey(client, requestId));
    return id === undefined ? undefined : this.command(id);
  }

  /** Every command not yet final, oldest first. */
  active(): Command[] {
    return [...this.#commands.values()]
      .filter((r) => !isFinal(r.value))
      .sort((a, b) => a.seq - b.seq)
      .map((r) => r.value);
  }

  /** The newest `limit` final commands held, newest first. */
  recentFinal(limit: number): Command[] {
    const out: Command[] = [];
    for (let i = this.#finals.length - 1; i >= 0 && out.length < limit; i--) {
      out.push(this.#commands.get(this.#finals[i]!.id)!.value);
    }
    return out;
  }

  grant(id: string): Grant | undefined {
    return this.#grants.get(id)?.value;
  }

  /** Every grant stored as live, oldest first. */
  liveGrants(): Grant[] {
    return [...this.#grants.values()]
      .filter((r) => r.value.state === 'live')
      .sort((a, b) => a.seq - b.seq)
      .map((r) => r.value);
  }
}

function requestKey(client: string, requestId: string): string {
  return `${client}\u0000${requestId}`;
}

/** Inserts by seq into an ascending list; new rows usually go last, so it looks from the end. */
function insertSorted(list: Array<{ seq: number; id: string }>, item: { seq: number; id: string }): void {
  let i = list.length;
  while (i > 0 && list[i - 1]!.seq > item.seq) i--;
  list.splice(i, 0, item);
}
