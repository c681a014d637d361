/**
 * The change feed's connection (contract 16): one client of its own, not the pool's, LISTENing on
 * `ogf_broker`, where the triggers of schema.ts announce every committed row change (PostgreSQL delivers a
 * NOTIFY only once its transaction commits, in commit order). When the connection is lost (the database
 * restarted, the network went) notifications sent meanwhile are lost with it: the feed connects again
 * with a growing pause (0.25 s … 5 s) and, once LISTENing again, tells `resync` so the store reloads what
 * it keeps in memory. A missed notification therefore delays, never loses.
 */
import pg from 'pg';
import { beat, claimName, HEARTBEAT_MS, type NodeRecord, stopped } from './nodes.js';
import { CHANNEL } from './schema.js';

/** One row change as announced: its table, its key (id or name) and the writer (a store's random id). */
export interface Notice {
  t: string;
  k: string;
  w: string | null;
}

export interface FeedDeps {
  config: pg.ClientConfig;
  /** Row changes, in commit order. */
  notice(n: Notice): void;
  /** LISTENing again after a lost connection: whatever was announced meanwhile is unknown. */
  resync(): void;
  /** The connection was lost (true) or is back (false). */
  down(lost: boolean, error?: Error): void;
  /**
   * Contract 16: the node this daemon is. Its name is held on this session (nodes.ts: a second live daemon
   * with the name is refused, exit 2), registered, and its heartbeat moved every 5 s; taken again after a
   * lost connection. Absent for a process that is no node (`ogf-broker token`).
   */
  node?: NodeRecord;
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

export class Feed {
  readonly #deps: FeedDeps;
  #client: pg.Client | undefined;
  #closed = false;
  #retryMs = RETRY_MIN_MS;
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(deps: FeedDeps) {
    this.#deps = deps;
    const node = deps.node;
    if (node === undefined) return;
    this.#heartbeat = setInterval(() => {
      const c = this.#client;
      // A beat that fails: the connection's own error handler says the database is gone.
      if (c !== undefined) beat(c, node.name).catch(() => {});
    }, HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** Connects and LISTENs; rejects when the database cannot be reached now (the store's open fails). */
  async start(): Promise<void> {
    await this.#connect();
  }

  async #connect(): Promise<void> {
    const client = new pg.Client(this.#deps.config);
    let lost = false;
    const onLost = (e?: Error) => {
      if (lost) return;
      lost = true;
      if (this.#client === client) this.#client = undefined;
      client.removeAllListeners('notification');
      void client.end().catch(() => {});
      if (this.#closed) return;
      this.#deps.down(true, e);
      this.#schedule();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (m) => {
      if (m.channel !== CHANNEL || m.payload === undefined) return;
      try {
        this.#deps.notice(JSON.parse(m.payload) as Notice);
      } catch {
        // Not ours (someone NOTIFYing the channel by hand): ignored.
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (this.#deps.node !== undefined) await claimName(client, this.#deps.node);
    } catch (e) {
      lost = true;
      client.removeAllListeners();
      client.on('error', () => {});
      void client.end().catch(() => {});
      throw e;
    }
    if (this.#closed) {
      void client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#retryMs = RETRY_MIN_MS;
  }

  #schedule(): void {
    if (this.#closed || this.#timer !== undefined) return;
    const wait = this.#retryMs;
    this.#retryMs = Math.min(RETRY_MAX_MS, this.#retryMs * 2);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#connect().then(
        () => {
          if (this.#closed) return;
          this.#deps.down(false);
          this.#deps.resync();
        },
        () => this.#schedule(),
      );
    }, wait);
    this.#timer.unref();
  }

  /** True while LISTENing. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Stops; a node leaves the live list at once (its row says stopped, its lock goes with the session). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    const c = this.#client;
    this.#client = undefined;
    if (c === undefined) return;
    const node = this.#deps.node;
    if (node !== undefined) await stopped(c, node.name).catch(() => {});
    await c.end().catch(() => {});
  }
}
