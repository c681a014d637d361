/**
 * One MCP client connection per configured upstream (contract 7). Connected in the background at start
 * (start never waits for them), as a client that declares no capabilities. A connection that ends is
 * opened again after 1 s, doubling up to 60 s while it keeps failing, back to 1 s once it stayed up for
 * 60 s. Each upstream's tools are cached from its first `tools/list` answer, refreshed on its
 * `notifications/tools/list_changed`, and kept while it reconnects; every change is told to listeners
 * (the MCP edge then sends its own list_changed). `close()` stops every server's process group.
 * Previews go through connections of their own (./preview-instances.ts, contract 12 (v4)), never these.
 *
 * ```
 *  connecting ──initialize + tools/list──▶ connected ──exit / close / garbage──▶ down ──backoff──▶ connecting
 * ```
 */
import type { Client, Tool, Transport } from '@modelcontextprotocol/client';
import type { Logger } from '../base/index.js';
import { type Clock, mcpClient, mcpClientIfLoaded, mcpClientLoaded, systemClock } from '../base/index.js';
import type { UpstreamConfig } from '../config/index.js';
import { Confiner } from '../sandbox/index.js';
import { MAX_TOOLS } from './limits.js';
import { type LeaseResult, PreviewInstances } from './preview-instances.js';
import { type Instance, openTransport } from './transport.js';

/** Backoff between connection attempts (contract 7): 1 s doubling to 60 s, reset after 60 s up. */
export const BACKOFF_MIN_MS = 1000;
export const BACKOFF_MAX_MS = 60_000;
export const STABLE_MS = 60_000;
/** How long initialize and one tools/list may take before the attempt counts as failed. */
const HANDSHAKE_TIMEOUT_MS = 30_000;

export type UpstreamState = 'connecting' | 'connected' | 'down';

/** What `status`, `doctor` and `list_commands` show of one upstream. */
export interface UpstreamStatus {
  name: string;
  state: UpstreamState;
  /** Tools the upstream listed (all of them, before the `tools` filter), once it answered. */
  tools: number;
  /** Why it is down (one sentence), when it is. */
  why?: string;
}

/** A live client an executor may send one call through. */
export interface UpstreamLink {
  client: Client;
  /** True while this exact connection is open. */
  open(): boolean;
}

export type OpenTransport = (
  name: string,
  config: UpstreamConfig,
  log: Logger,
  instance?: Instance,
) => Transport;

export interface RegistryDeps {
  upstreams: Record<string, UpstreamConfig>;
  version: string;
  log: Logger;
  /** The world (architecture.md rule 7): production opens the real stdio or HTTP transport. */
  openTransport?: OpenTransport;
  env?: NodeJS.ProcessEnv;
  /** Contract 21: starts a stdio server under its confinement (a preview's instance always confined). */
  confiner?: Confiner;
  /** Time for the backoff (architecture.md rule 7: unit tests use a fake clock). */
  clock?: Clock;
}

class Connection {
  state: UpstreamState = 'connecting';
  why: string | undefined;
  tools: Tool[] | undefined;
  link: UpstreamLink | undefined;
  backoffMs = BACKOFF_MIN_MS;
  upSince = 0;
  timer: { cancel(): void } | undefined;
  current: { client: Client; transport: Transport } | undefined;
  constructor(
    readonly name: string,
    readonly config: UpstreamConfig,
  ) {}
}

export class UpstreamRegistry {
  readonly #deps: RegistryDeps;
  readonly #open: OpenTransport;
  readonly #clock: Clock;
  readonly #conns = new Map<string, Connection>();
  readonly #listeners = new Set<() => void>();
  readonly #previews: PreviewInstances;
  #started = false;
  #closed = false;

  constructor(deps: RegistryDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#open =
      deps.openTransport ??
      ((name, config, log, instance) =>
        openTransport(
          name,
          config,
          log,
          deps.env,
          instance ?? 'main',
          deps.confiner ?? new Confiner(deps.env ?? process.env, []),
        ));
    this.#previews = new PreviewInstances({
      version: deps.version,
      log: deps.log,
      clock: this.#clock,
      handshakeMs: HANDSHAKE_TIMEOUT_MS,
      open: (name, config) => this.#open(name, config, deps.log, 'preview'),
    });
    for (const [name, config] of Object.entries(deps.upstreams)) {
      this.#conns.set(name, new Connection(name, config));
    }
  }

  /** Connects every upstream in the background; returns at once. */
  start(): void {
    if (this.#started) throw new Error('UpstreamRegistry.start() called twice');
    this.#started = true;
    for (const c of this.#conns.values()) void this.#connect(c);
  }

  names(): string[] {
    return [...this.#conns.keys()];
  }

  config(name: string): UpstreamConfig | undefined {
    return this.#conns.get(name)?.config;
  }

  /** The upstream's cached tools (undefined until it first answered tools/list). */
  tools(name: string): readonly Tool[] | undefined {
    return this.#conns.get(name)?.tools;
  }

  /** The open connection to send a call through, or undefined when the upstream is not connected now. */
  link(name: string): UpstreamLink | undefined {
    const c = this.#conns.get(name);
    return c?.state === 'connected' ? c.link : undefined;
  }

  /**
   * The open connection, waiting up to `timeoutMs` while the upstream is still connecting (a call approved
   * before a restart is sent after it, contract 7); undefined when it is down or stays unconnected.
   */
  async awaitLink(name: string, timeoutMs: number): Promise<UpstreamLink | undefined> {
    const c = this.#conns.get(name);
    if (c === undefined || this.#closed) return undefined;
    if (c.state !== 'connecting') return this.link(name);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop();
        resolve(this.link(name));
      };
      const timer = setTimeout(done, timeoutMs);
      const stop = this.onChange(() => {
        if (c.state !== 'connecting' || this.#closed) done();
      });
    });
  }

  /**
   * A connection for one preview computation (contract 12 (v4)): never the one approved calls use — a
   * second instance of a stdio server, an HTTP upstream's own session — started on demand, stopped after
   * 60 s idle. The caller releases it when done.
   */
  previewLease(name: string): Promise<LeaseResult> {
    const c = this.#conns.get(name);
    if (c === undefined) return Promise.resolve({ ok: false, why: 'it is not configured' });
    return this.#previews.lease(name, c.config);
  }

  status(): UpstreamStatus[] {
    return [...this.#conns.values()].map((c) => {
      const s: UpstreamStatus = { name: c.name, state: c.state, tools: c.tools?.length ?? 0 };
      if (c.state === 'down' && c.why !== undefined) s.why = c.why;
      return s;
    });
  }

  /** Calls `listener` after any upstream's tools or state changed; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * A reload's upstreams (contract 17): `next` in the config's order; each upstream named in `restart` (its
   * entry changed) or gone from `next` is stopped with its preview instance, each new or changed one
   * connected again in the background; the others keep their connections. A call running on a stopped
   * connection ends as a restart would end it (UNKNOWN: sent, no answer).
   */
  async reload(next: Readonly<Record<string, UpstreamConfig>>, restart: readonly string[]): Promise<void> {
    if (this.#closed) return;
    const stops: Array<Promise<void>> = [];
    const stop = (c: Connection) => {
      c.timer?.cancel();
      const cur = c.current;
      c.current = undefined;
      c.link = undefined;
      c.state = 'down';
      c.why = 'its entry changed in the config';
      this.#previews.retire(c.name);
      if (cur) stops.push(closeQuietly(cur.client, cur.transport));
    };
    const before = new Map(this.#conns);
    this.#conns.clear();
    const fresh: Connection[] = [];
    for (const [name, config] of Object.entries(next)) {
      const kept = before.get(name);
      if (kept !== undefined && !restart.includes(name)) {
        this.#conns.set(name, kept);
        continue;
      }
      if (kept !== undefined) stop(kept);
      const c = new Connection(name, config);
      this.#conns.set(name, c);
      fresh.push(c);
    }
    for (const [name, c] of before) if (!this.#conns.has(name)) stop(c);
    if (this.#started) for (const c of fresh) void this.#connect(c);
    this.#changed();
    await Promise.allSettled(stops);
  }

  /** Stops every upstream (process groups included) and every pending reconnect. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([
      this.#previews.close(),
      ...[...this.#conns.values()].map(async (c) => {
        c.timer?.cancel();
        const cur = c.current;
        c.current = undefined;
        c.link = undefined;
        if (cur) await closeQuietly(cur.client, cur.transport);
      }),
    ]);
  }

  #changed(): void {
    for (const l of [...this.#listeners]) {
      try {
        l();
      } catch (e) {
        this.#deps.log.log('error', 'listener_failed', { error: (e as Error).message });
      }
    }
  }

  async #connect(c: Connection): Promise<void> {
    // Loaded at the first connection (base/mcp-client.ts); a reload may have dropped `c` meanwhile.
    if (mcpClientIfLoaded() === undefined) await mcpClient();
    if (this.#closed || this.#conns.get(c.name) !== c) return;
    const { Client } = mcpClientLoaded();
    c.state = 'connecting';
    const log = this.#deps.log;
    let transport: Transport;
    try {
      transport = this.#open(c.name, c.config, log);
    } catch (e) {
      this.#down(c, undefined, `it could not be started: ${(e as Error).message}`);
      return;
    }
    // No capabilities (contract 7): no roots, sampling or elicitation for an upstream to ask for.
    const client = new Client({ name: 'ogf-broker', version: this.#deps.version }, { capabilities: {} });
    const session = { client, transport };
    c.current = session;
    let ended = false;
    let lastError: string | undefined;
    const end = (why: string) => {
      if (ended) return;
      ended = true;
      if (c.current === session) this.#down(c, session, why);
    };
    client.onclose = () =>
      end(lastError === undefined ? 'its connection closed' : `its connection ended: ${lastError}`);
    client.onerror = (e) => {
      lastError = e.message;
      log.log('warn', 'upstream_error', { upstream: c.name, error: e.message });
    };
    try {
      // A known era (legacy initialize): no probe, so nothing is ever sent to a sibling process.
      await client.connect(transport, { prior: { kind: 'legacy' }, timeout: HANDSHAKE_TIMEOUT_MS });
      // One tools/list at a time per session, and one more after it when notifications came meanwhile: a
      // server sending list_changed in a loop cannot make us send unbounded requests, and answers cannot land
      // out of order (an older list overwriting a newer one).
      let refreshing = false;
      let again = false;
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        if (c.current !== session) return;
        if (refreshing) {
          again = true;
          return;
        }
        refreshing = true;
        void (async () => {
          try {
            do {
              again = false;
              if (!(await this.#refresh(c, session))) return;
            } while (again && c.current === session);
          } finally {
            refreshing = false;
          }
        })();
      });
      if (this.#closed || c.current !== session) return;
      // Connected means usable: only once its first tools/list was answered and accepted.
      if (!(await this.#refresh(c, session))) return;
      c.state = 'connected';
      c.why = undefined;
      c.upSince = this.#clock.now();
      c.link = { client, open: () => c.current === session && c.state === 'connected' };
      log.log('info', 'upstream_connected', { upstream: c.name, tools: c.tools?.length ?? 0 });
      this.#changed();
    } catch (e) {
      end(`it did not answer initialize: ${(e as Error).message}`);
    }
  }

  /** Fetches and caches the upstream's tools; false (and the connection closed) when refused. */
  async #refresh(c: Connection, session: { client: Client; transport: Transport }): Promise<boolean> {
    let why: string;
    try {
      const { tools } = await session.client.listTools(undefined, {
        timeout: HANDSHAKE_TIMEOUT_MS,
        cacheMode: 'bypass',
      });
      if (c.current !== session || this.#closed) return false;
      if (tools.length <= MAX_TOOLS) {
        c.tools = tools;
        if (c.state === 'connected') this.#changed();
        return true;
      }
      why = `it listed ${tools.length} tools, more than the ${MAX_TOOLS} accepted`;
    } catch (e) {
      if (c.current !== session || this.#closed) return false;
      why = `its tools/list answer was refused: ${(e as Error).message}`;
    }
    this.#deps.log.log('warn', 'upstream_tools_refused', { upstream: c.name, why });
    this.#down(c, session, why);
    return false;
  }

  #down(c: Connection, session: { client: Client; transport: Transport } | undefined, why: string): void {
    if (session) void closeQuietly(session.client, session.transport);
    c.current = undefined;
    c.link = undefined;
    if (this.#closed) return;
    const wasUp = c.state === 'connected';
    if (wasUp && this.#clock.now() - c.upSince >= STABLE_MS) c.backoffMs = BACKOFF_MIN_MS;
    c.state = 'down';
    c.why = why;
    const delay = c.backoffMs;
    c.backoffMs = Math.min(c.backoffMs * 2, BACKOFF_MAX_MS);
    this.#deps.log.log('warn', 'upstream_down', { upstream: c.name, why, retry_in_ms: delay });
    this.#changed();
    c.timer = this.#clock.setTimeout(() => {
      if (!this.#closed) void this.#connect(c);
    }, delay);
  }
}

async function closeQuietly(client: Client, transport: Transport): Promise<void> {
  try {
    await client.close();
  } catch {
    // Already closed.
  }
  try {
    await transport.close();
  } catch {
    // Already closed.
  }
}
