/**
 * The stdio front end's link to the daemon of its data dir (contract 1.1 `mcp-stdio`): finds the running
 * daemon through `daemon.json`, starts one in the background when none runs, and holds an SDK Client over
 * Streamable HTTP to its `/mcp`, authenticated as client `local`. A daemon that restarted (its session is
 * gone, or the port refused) is reconnected to once, transparently. The link speaks the 2025 generation
 * (a session, progress on its SSE stream) whatever generation the stdio client speaks: the answers are the
 * same in both (contract 10). The daemon's `notifications/tools/list_changed` (contract 3.1: an upstream
 * connected or changed its tools), heard on that session's GET stream, is told to `onToolsChanged`
 * listeners, as is every reconnection to a new daemon (whose tools may differ). Not an "upstream": in this
 * house that word means an MCP server behind the gate.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import type { Logger } from '../base/index.js';
import { BrokerError, isSdkHttpError, mcpClient } from '../base/index.js';
import { type DaemonInfo, dataDirPaths, runningDaemon } from '../datadir/index.js';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));
export const DAEMON_LOG = 'daemon.log';

export interface RelayOptions {
  dataDir: string;
  version: string;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** How long to wait for a daemon we started to write daemon.json. */
  startTimeoutMs?: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * True when sending the request again on a fresh connection is safe. A 404 (the daemon restarted and forgot
 * the session) and ECONNREFUSED (no daemon listened) mean it never reached a live session. ECONNRESET does
 * not: the daemon may have read the request, queued its command and died (or the connection broke) before
 * answering, so only a request that changes nothing (`idempotent`: listing, awaiting, polling a task) is
 * sent again — resending a `run_command_wait` would queue a second command, which a grant could approve.
 */
export function isReconnectable(e: unknown, idempotent: boolean): boolean {
  if (isSdkHttpError(e)) return e.status === 404;
  const cause = (e as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code === 'ECONNREFUSED' || (idempotent && cause?.code === 'ECONNRESET');
}

export class Relay {
  readonly #opts: RelayOptions;
  readonly #env: NodeJS.ProcessEnv;
  #client: Promise<Client> | undefined;
  #closed = false;
  /** True once a connection was made: a later one is a reconnection. */
  #connectedOnce = false;
  readonly #toolListeners = new Set<() => void>();

  constructor(opts: RelayOptions) {
    this.#opts = opts;
    this.#env = opts.env ?? process.env;
  }

  /** The connected client, connecting (and starting the daemon) on first use. */
  client(): Promise<Client> {
    if (this.#closed) return Promise.reject(new BrokerError('Closed', 'mcp-stdio is shutting down'));
    if (this.#client === undefined) {
      const p = this.#connect();
      this.#client = p;
      // A failed connection is not cached: the next call tries again (the daemon may be up by then).
      p.catch(() => {
        if (this.#client === p) this.#client = undefined;
      });
    }
    return this.#client;
  }

  /**
   * Runs `fn` on the client; once more on a fresh connection when the daemon restarted under us and the
   * request cannot have had an effect, or changes nothing (`idempotent`, see isReconnectable).
   */
  async call<T>(fn: (client: Client) => Promise<T>, idempotent: boolean): Promise<T> {
    const first = await this.client();
    try {
      return await fn(first);
    } catch (e) {
      if (!isReconnectable(e, idempotent) || this.#closed) throw e;
      this.#opts.log.log('info', 'mcp_stdio_reconnect', { reason: (e as Error).message });
      if (this.#client !== undefined && (await this.#client.catch(() => undefined)) === first)
        this.#client = undefined;
      void first.close().catch(() => {});
      return fn(await this.client());
    }
  }

  /** Calls `listener` whenever the daemon's tool set may have changed; returns the function that stops it. */
  onToolsChanged(listener: () => void): () => void {
    this.#toolListeners.add(listener);
    return () => this.#toolListeners.delete(listener);
  }

  #toolsChanged(): void {
    if (this.#closed) return;
    for (const l of [...this.#toolListeners]) {
      try {
        l();
      } catch (e) {
        this.#opts.log.log('error', 'listener_failed', { error: (e as Error).message });
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#toolListeners.clear();
    const c = this.#client;
    this.#client = undefined;
    if (c !== undefined) await (await c.catch(() => undefined))?.close().catch(() => {});
  }

  async #connect(): Promise<Client> {
    const info = await this.#ensureDaemon();
    const token = this.#token();
    const { Client, StreamableHTTPClientTransport } = await mcpClient();
    const client = new Client({ name: 'ogf-broker-mcp-stdio', version: this.#opts.version });
    // Before connecting, so a change announced as soon as the session's GET stream opens is not missed.
    client.setNotificationHandler('notifications/tools/list_changed', () => this.#toolsChanged());
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', info.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    this.#opts.log.log('info', 'mcp_stdio_connected', { url: `${info.url}/mcp`, daemon_pid: info.pid });
    // A new daemon (after a restart) may list other tools than the one the client last listed.
    if (this.#connectedOnce) queueMicrotask(() => this.#toolsChanged());
    this.#connectedOnce = true;
    return client;
  }

  /** Client `local`'s token: fixed by OGF_BROKER_MCP_TOKEN, else the daemon's `mcp.token` (contract 1.2). */
  #token(): string {
    const fixed = this.#env.OGF_BROKER_MCP_TOKEN;
    if (fixed !== undefined && fixed !== '') return fixed;
    const path = dataDirPaths(this.#opts.dataDir).mcpToken;
    try {
      return readFileSync(path, 'utf8').trim();
    } catch (e) {
      throw new BrokerError(
        'NoToken',
        `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }

  /**
   * The running daemon, or one started now in the background. Its stderr (JSON log lines, start-up errors)
   * goes to `<data-dir>/daemon.log`; its stdout is dropped because it prints the owner login URL, which
   * holds the owner token and must not land in a log file.
   */
  async #ensureDaemon(): Promise<DaemonInfo> {
    const paths = dataDirPaths(this.#opts.dataDir);
    const running = runningDaemon(paths.daemonJson);
    if (running !== undefined) return running;

    // The daemon creates and checks the data dir itself; we only need it to exist for the log file.
    mkdirSync(paths.root, { recursive: true, mode: 0o700 });
    const logPath = join(paths.root, DAEMON_LOG);
    const fd = openSync(logPath, 'a', 0o600);
    let exit: string | undefined;
    let exitAt = Number.POSITIVE_INFINITY;
    try {
      const child = spawn(process.execPath, [CLI, 'start', '--data-dir', paths.root], {
        detached: true,
        stdio: ['ignore', 'ignore', fd],
        env: this.#env,
        shell: false,
      });
      child.once('exit', (code, signal) => {
        exit = signal ?? `code ${code}`;
        exitAt = Date.now();
      });
      child.once('error', (e) => {
        exit = e.message;
        exitAt = Date.now();
      });
      child.unref();
      this.#opts.log.log('info', 'mcp_stdio_daemon_started', { pid: child.pid, log: logPath });
    } finally {
      closeSync(fd);
    }

    const end = Date.now() + (this.#opts.startTimeoutMs ?? 30_000);
    for (;;) {
      const info = runningDaemon(paths.daemonJson);
      if (info !== undefined) return info;
      // Ours may have lost a start race to another mcp-stdio's daemon ("already running"): give that one
      // a moment to write daemon.json before giving up.
      if (Date.now() > end || Date.now() - exitAt > 3000) {
        throw new BrokerError(
          'DaemonNotStarted',
          `no ogf-broker daemon came up for ${paths.root}${exit === undefined ? '' : ` (it exited: ${exit})`}; ${lastLine(logPath)}`,
        );
      }
      await sleep(50);
    }
  }
}

function lastLine(path: string): string {
  try {
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    return `see ${path}: ${lines.at(-1)?.slice(0, 300) ?? ''}`;
  } catch {
    return `see ${path}`;
  }
}
