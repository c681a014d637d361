/**
 * Stateful Streamable HTTP sessions (contract 3): one SDK transport and server per MCP session, owned by the
 * client whose token opened it. Idle sessions are closed after `idleMs`.
 *
 * Caps are per client, so that no client can push another out (contract 3.2: "One client has at most 64
 * open MCP sessions: its 65th evicts its own least recently used one, never another client's"):
 *
 * ```
 *  initialize from client C ─▶ C below perClient and all below max? ─yes─▶ room
 *                                   │ no
 *                                   ▼
 *                    C's least recently used idle session ─exists─▶ closed, room
 *                                   │ none (all of C's are busy, or C has none)
 *                                   ▼
 *                                refused (503): nobody else's session is touched
 * ```
 *
 * `max` bounds memory across all clients; reaching it refuses new sessions rather than evicting another
 * client's. A session with a request in flight is never evicted. Room is reserved until the session is
 * added or the reservation released, so a burst of parallel initializes cannot overshoot a cap.
 * `maxBusyPerClient` bounds the requests one client may have in flight at once, so its waiting tool calls
 * cannot take every connection the daemon gives /mcp (see http/connections.ts). It is one count per client
 * for both generations (contract 10: the same rules): a 2025 session's POSTs and DELETEs (`begin`) and the
 * client's sessionless 2026-07-28 POSTs (`beginRequest`), which would otherwise be bounded by nothing but
 * the whole /mcp share.
 */
import type { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { Server } from '@modelcontextprotocol/server';
import type { Logger } from '../base/index.js';

export interface McpSession {
  id: string;
  client: string;
  server: Server;
  transport: NodeStreamableHTTPServerTransport;
  lastSeen: number;
  /** POST/DELETE requests now being handled (a waiting tool call keeps its session busy). */
  active: number;
}

export interface SessionOptions {
  /** All clients together (a memory bound, default 1000). */
  max?: number;
  /** One client (contract 3.2: 64). */
  perClient?: number;
  /** Requests one client may have in flight at once (default 128). */
  maxBusyPerClient?: number;
  idleMs?: number;
  sweepMs?: number;
  log: Logger;
  now?: () => number;
}

export const SESSIONS_PER_CLIENT = 64;

/** A short, non-identifying tag for logs: enough to follow one session, useless to resume it. */
export function sessionTag(id: string): string {
  return id.slice(0, 8);
}

export class SessionRegistry {
  readonly #sessions = new Map<string, McpSession>();
  /** Room reserved for sessions being initialized, per client. */
  readonly #reserved = new Map<string, number>();
  /** Requests in flight, per client. */
  readonly #busy = new Map<string, number>();
  readonly #max: number;
  readonly #perClient: number;
  readonly #maxBusy: number;
  readonly #idleMs: number;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(opts: SessionOptions) {
    this.#max = opts.max ?? 1000;
    this.#perClient = opts.perClient ?? SESSIONS_PER_CLIENT;
    this.#maxBusy = opts.maxBusyPerClient ?? 128;
    this.#idleMs = opts.idleMs ?? 30 * 60_000;
    this.#log = opts.log;
    this.#now = opts.now ?? Date.now;
    this.#timer = setInterval(() => this.sweep(), opts.sweepMs ?? 60_000);
    this.#timer.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Requests one client may have in flight at once, in both generations together. */
  get maxBusyPerClient(): number {
    return this.#maxBusy;
  }

  get(id: string): McpSession | undefined {
    return this.#sessions.get(id);
  }

  /** How many sessions `client` has open now. */
  count(client: string): number {
    let n = 0;
    for (const s of this.#sessions.values()) if (s.client === client) n++;
    return n;
  }

  /**
   * Makes room for one more session of `client` and holds it until `add` or `release`: evicts that client's
   * least recently used idle session when a cap is reached. Returns false when there is no room without
   * touching another client's session or a busy one (the caller answers 503).
   */
  async reserve(client: string): Promise<boolean> {
    if (this.#closed) return false;
    const mine = this.count(client) + (this.#reserved.get(client) ?? 0);
    const all = this.#sessions.size + this.#reservedTotal();
    if (mine >= this.#perClient || all >= this.#max) {
      let oldest: McpSession | undefined;
      for (const s of this.#sessions.values()) {
        if (s.client !== client || s.active > 0) continue;
        if (oldest === undefined || s.lastSeen < oldest.lastSeen) oldest = s;
      }
      if (oldest === undefined) {
        this.#log.log('warn', 'mcp_session_refused', {
          client,
          why: mine >= this.#perClient ? 'client_cap' : 'cap',
        });
        return false;
      }
      // Counted out before the await, so a parallel reserve picks another session or finds room.
      this.#sessions.delete(oldest.id);
      this.#reserved.set(client, (this.#reserved.get(client) ?? 0) + 1);
      await this.#evict(oldest, 'cap');
      return true;
    }
    this.#reserved.set(client, (this.#reserved.get(client) ?? 0) + 1);
    return true;
  }

  /** Gives back a reservation whose initialize did not produce a session. */
  release(client: string): void {
    const n = this.#reserved.get(client) ?? 0;
    if (n <= 1) this.#reserved.delete(client);
    else this.#reserved.set(client, n - 1);
  }

  /** Registers an initialized session (the transport calls this once it has chosen the session id). */
  add(session: McpSession): void {
    this.release(session.client);
    if (this.#closed) {
      void session.server.close();
      return;
    }
    this.#sessions.set(session.id, session);
    this.#log.log('info', 'mcp_session_opened', { client: session.client, session: sessionTag(session.id) });
  }

  /** Forgets a session whose transport closed (DELETE, eviction, shutdown). */
  forget(id: string): void {
    if (this.#sessions.delete(id)) this.#log.log('info', 'mcp_session_closed', { session: sessionTag(id) });
  }

  /** Marks the session used now (a GET stream: it carries nothing we need to keep a session alive for). */
  touch(session: McpSession): void {
    session.lastSeen = this.#now();
  }

  /**
   * Marks a request on the session as started; call the returned function when it ends. Undefined when the
   * session's client already has `maxBusyPerClient` requests in flight (the caller answers 503).
   */
  begin(session: McpSession): (() => void) | undefined {
    const end = this.beginRequest(session.client, session.id);
    if (end === undefined) return undefined;
    session.active++;
    session.lastSeen = this.#now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      session.active--;
      session.lastSeen = this.#now();
      end();
    };
  }

  /**
   * Marks a request of `client` as started, with or without a session (a 2026-07-28 request has none); call
   * the returned function when it ends (more calls change nothing). Undefined when the client already has
   * `maxBusyPerClient` requests in flight (the caller answers 503).
   */
  beginRequest(client: string, sessionId?: string): (() => void) | undefined {
    const busy = this.#busy.get(client) ?? 0;
    if (busy >= this.#maxBusy) {
      this.#log.log('warn', 'mcp_busy_refused', {
        client,
        ...(sessionId === undefined ? { generation: 'modern' } : { session: sessionTag(sessionId) }),
      });
      return undefined;
    }
    this.#busy.set(client, busy + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.#busy.get(client) ?? 1) - 1;
      if (left === 0) this.#busy.delete(client);
      else this.#busy.set(client, left);
    };
  }

  /** Closes sessions idle for longer than `idleMs`. */
  sweep(): void {
    if (this.#closed) return;
    const cutoff = this.#now() - this.#idleMs;
    for (const s of [...this.#sessions.values()]) {
      if (s.active === 0 && s.lastSeen < cutoff) {
        this.#sessions.delete(s.id);
        void this.#evict(s, 'idle');
      }
    }
  }

  #reservedTotal(): number {
    let n = 0;
    for (const r of this.#reserved.values()) n += r;
    return n;
  }

  async #evict(session: McpSession, why: 'idle' | 'cap'): Promise<void> {
    this.#log.log('info', 'mcp_session_evicted', {
      client: session.client,
      session: sessionTag(session.id),
      why,
    });
    await session.server.close().catch(() => {});
  }

  /**
   * Closes every session of `client` at once (contract 15: disconnecting an OAuth client closes its MCP
   * sessions); returns how many.
   */
  closeClient(client: string): number {
    const mine = [...this.#sessions.values()].filter((s) => s.client === client);
    for (const s of mine) {
      this.#sessions.delete(s.id);
      this.#log.log('info', 'mcp_session_closed', { client, session: sessionTag(s.id), why: 'disconnected' });
      void s.server.close().catch(() => {});
    }
    return mine.length;
  }

  /** Closes every session; harmless twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(all.map((s) => s.server.close().catch(() => {})));
  }
}
