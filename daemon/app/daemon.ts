/**
 * The long-lived daemon: owns the data dir, the store, the broker, the HTTP server and the edges.
 * `start()` opens the store, recovers the broker from it (rules 3 and 4), listens, mounts the MCP and owner
 * edges, writes `daemon.json` (contract 1.2), then starts the background work. `reload()` reads the config
 * again (contract 17, reload.ts). `close()` is a clean stop (contract 17): answers the waiting calls, lets
 * running children finish briefly, closes the store, removes `daemon.json`.
 */
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import {
  auditPublicKeyText,
  CheckpointTimer,
  checkpointIntervalMs,
  loadOrCreateAuditKey,
  signerOf,
} from '../audit/index.js';
import type { Logger } from '../base/index.js';
import { UsageError, VERSION } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { Broker } from '../core/index.js';
import {
  type DaemonInfo,
  type DataDir,
  openDataDir,
  removeDaemonInfo,
  runningDaemon,
  writeDaemonInfo,
} from '../datadir/index.js';
import type { Edge } from '../http/index.js';
import { createOrigins, Flight } from '../http/index.js';
import { createSources } from '../kinds/index.js';
import { launcher } from '../launch/index.js';
import { createMcpEdge } from '../mcp/index.js';
import { OAuthServer, oauthRoutes } from '../oauth/index.js';
import { createOwnerEdge, type OwnerContext, type ReloadOutcome } from '../owner/index.js';
import { removeRulesStatus, writeRulesStatus } from '../rules/index.js';
import { assertConfinable, Confiner } from '../sandbox/index.js';
import { type DaemonStore, openStore, removeDatabaseStatus } from '../store/index.js';
import { Tokens } from '../tokens/index.js';
import type { Source } from '../tool-kind/index.js';
import { removeUpstreamStatus, UpstreamRegistry } from '../upstreams/index.js';
import { startBackground } from './background.js';
import { recordConfigLoaded } from './config-loaded.js';
import { createBroker } from './create-broker.js';
import { httpServer, listen } from './listen.js';
import { LiveConfig } from './live-config.js';
import { ownerContext } from './owner-context.js';
import { type OwnerNotifications, startOwnerNotifications } from './owner-notifications.js';
import type { OwnerRules } from './owner-rules.js';
import { ownersWithoutPasskey } from './passkey-owners.js';
import { type Reloadable, reloadConfig } from './reload.js';
import { unwritable, unwritableAsync } from './unwritable.js';

export interface DaemonOptions {
  env?: NodeJS.ProcessEnv;
  log: Logger;
  /** Contract 17: reads the config again as `start` read it (same flags); absent, a reload keeps the config. */
  reread?: () => Config;
}

export class Daemon {
  readonly #live: LiveConfig;
  readonly #env: NodeJS.ProcessEnv;
  readonly #log: Logger;
  readonly #reread: (() => Config) | undefined;
  readonly #confiner: Confiner;
  #paths: DataDir | undefined;
  #store: DaemonStore | undefined;
  #broker: Broker | undefined;
  #ownerRules: OwnerRules | undefined;
  #sources: Source[] = [];
  #checkpoints: CheckpointTimer | undefined;
  /** Notifications and Web Push (contracts 13.1, 13.2). */
  #notifications: OwnerNotifications | undefined;
  #server: Server | undefined;
  #edges: Edge[] = [];
  #tokens: Tokens | undefined;
  #upstreams: UpstreamRegistry | undefined;
  /** The kinds' work (previews: contract 12) and the retention pass, closed before the store. */
  #background: { close(): void } | undefined;
  #info: DaemonInfo | undefined;
  #started = false;
  #closed: Promise<void> | undefined;
  /** What a reload changes, once the daemon is ready (reload.ts). */
  #reloadable: Reloadable | undefined;
  /** One reload at a time, in the order asked (a SIGHUP during `ogf-broker reload` waits its turn). */
  #reloading: Promise<unknown> = Promise.resolve();
  /** The requests in flight, refused once a clean stop begins (contract 17). */
  readonly #flight = new Flight();

  constructor(config: Config, options: DaemonOptions) {
    this.#live = new LiveConfig(config);
    this.#env = options.env ?? process.env;
    this.#log = options.log;
    this.#reread = options.reread;
    // What a confined process must not see: the data dir (tokens, database, keys).
    this.#confiner = new Confiner(this.#env, [config.dataDir]);
  }

  get info(): DaemonInfo | undefined {
    return this.#info;
  }

  /** The owner login URL (contract 5): printed at start, never logged. */
  get ownerLoginUrl(): string {
    if (!this.#info || !this.#tokens) throw new Error('daemon not started');
    return `${this.#info.url}/login#token=${this.#tokens.ownerToken}`;
  }

  /** Contract 13.3: the owners who have no passkey while the config requires one (passkey-owners.ts). */
  ownersWithoutPasskey(): Promise<string[]> {
    return this.#store === undefined
      ? Promise.resolve([])
      : ownersWithoutPasskey(this.#live.current, this.#store);
  }

  async start(): Promise<DaemonInfo> {
    if (this.#started) throw new Error('Daemon.start() called twice');
    this.#started = true;
    const config = this.#live.current;
    // Contract 21: a confined entry that cannot be confined here refuses the config before anything starts.
    assertConfinable(config, this.#confiner);
    const { paths, store, tokens } = await this.#openStore(config);
    // Contract 7: one MCP client connection per upstream, opened in the background once the daemon is ready.
    const upstreams = new UpstreamRegistry({
      upstreams: config.upstreams,
      version: VERSION,
      log: this.#log,
      env: this.#env,
      confiner: this.#confiner,
    });
    this.#upstreams = upstreams;
    // architecture.md "The house": each kind builds its source, which lists its tools and names its
    // executor; the MCP edge lists them in the kinds' order (and merges their parts of list_commands in it).
    const [log, confiner, live] = [this.#log, this.#confiner, this.#live];
    const world = { config, paths, log, upstreams, confiner, current: () => live.current };
    const sources = unwritable(config.dataDir, () => createSources(world));
    this.#sources = sources;
    const { broker, rules, desk } = createBroker({
      ...{ live: this.#live, store, sources, env: this.#env, log: this.#log },
      publish: (e) => this.#notifications?.publish(e),
    });
    this.#broker = broker;
    this.#ownerRules = desk;
    // Contract 18: the owners' rules in force before any request is taken.
    await unwritableAsync(config.dataDir, desk.start());
    // A config rule that took an owners' rule's id is refused, as a reload would refuse it.
    const clash = rules.clash(config);
    if (clash !== undefined) throw new UsageError(clash);
    // The store's refusal arrives as a rejection: told the same way as a synchronous one.
    await unwritableAsync(config.dataDir, broker.start());
    const url = await this.#serve(config, { paths, store, broker, sources, tokens, upstreams, desk });
    this.#info = {
      pid: process.pid,
      version: VERSION,
      url,
      mcp_url: `${url}/mcp`,
      owner_url: `${url}/`,
      started_at: new Date().toISOString(),
    };
    unwritable(config.dataDir, () => writeDaemonInfo(paths.daemonJson, this.#info!));
    unwritable(config.dataDir, () => writeRulesStatus(config.dataDir, process.pid, rules.count));
    this.#background = startBackground({
      world,
      broker,
      store,
      sources,
      onToolsChange: (l) => this.#onToolsChange(l),
      log: this.#log,
    });
    this.#reloadable = {
      live: this.#live,
      rules,
      sources,
      notifications: this.#notifications!,
      broker,
      upstreams,
      audits: store.audits,
      confiner: this.#confiner,
      log: this.#log,
    };
    this.#log.log('info', 'daemon_ready', {
      url,
      pid: process.pid,
      version: VERSION,
      ogf_bridge: config.ogf_bridge !== null,
      commands: Object.keys(config.commands).length,
      upstreams: upstreams.names().length,
      // Contract 16: where the daemon keeps its data (never the URL: it may hold a password).
      store: config.database_url === null ? 'sqlite' : 'postgres',
    });
    return this.#info;
  }

  /**
   * Contract 17 (SIGHUP, `ogf-broker reload`): the config read again and applied, or kept when the new one
   * does not load (reload.ts). Never rejects: the outcome says what happened.
   */
  reload(): Promise<ReloadOutcome> {
    const next = this.#reloading.then(() => this.#reload());
    this.#reloading = next;
    return next;
  }

  #reload(): Promise<ReloadOutcome> {
    if (this.#reloadable === undefined || this.#closed !== undefined)
      return Promise.resolve({ ok: false, error: 'the daemon is not running' });
    if (this.#reread === undefined)
      return Promise.resolve({ ok: false, error: 'this daemon was started without its config file' });
    return reloadConfig(this.#reloadable, this.#reread);
  }

  /** The data dir (one daemon each), the audit key, the store and the tokens (contracts 1.2, 14, 16, 5). */
  async #openStore(config: Config): Promise<{ paths: DataDir; store: DaemonStore; tokens: Tokens }> {
    const paths = unwritable(config.dataDir, () => openDataDir(config.dataDir));
    this.#paths = paths;
    const other = runningDaemon(paths.daemonJson);
    if (other && other.pid !== process.pid) {
      throw new UsageError(`already running: pid ${other.pid} serves this data dir at ${other.url}`);
    }
    // The process that forks launches (launch/spawner.ts), started while this one is small and idle.
    launcher.warm();
    // Contract 14: the audit key is made at the first start; the store signs checkpoints with it.
    const auditKey = unwritable(config.dataDir, () => loadOrCreateAuditKey(config.dataDir));
    // Contract 16: the shared PostgreSQL when configured, else broker.db (store/open.ts).
    const store = await unwritableAsync(
      config.dataDir,
      openStore(config, paths, {
        log: this.#log,
        // Contract 16: on a shared database this daemon is the node `node_name` (a second live one exits 2).
        node: {
          name: config.node_name,
          host: hostname(),
          pid: process.pid,
          version: VERSION,
          auditPublicKey: auditPublicKeyText(auditKey.publicKey),
        },
        signer: signerOf(auditKey),
      }),
    );
    this.#store = store;
    this.#checkpoints = new CheckpointTimer({
      audits: store.audits,
      log: this.#log,
      intervalMs: checkpointIntervalMs(this.#env, this.#log),
    });
    const tokens = unwritable(config.dataDir, () => new Tokens(paths, store, this.#env));
    this.#tokens = tokens;
    await unwritableAsync(config.dataDir, tokens.refreshAtStart(config.database_url !== null));
    tokens.assertDistinct();
    return { paths, store, tokens };
  }

  /** OAuth, the notification channels, the HTTP server and its edges; returns the daemon's URL. */
  async #serve(
    config: Config,
    o: {
      paths: DataDir;
      store: DaemonStore;
      broker: Broker;
      sources: Source[];
      tokens: Tokens;
      upstreams: UpstreamRegistry;
      desk: OwnerRules;
    },
  ): Promise<string> {
    let port = config.port;
    const origins = createOrigins(config.public_url, () => port, config.host);
    const base = () => config.public_url ?? origins.url();
    // Contract 15: OAuth for remote AI clients, on with public_url or oauth.enabled; `<base>` is public_url,
    // else the daemon's own URL.
    const oauth = config.oauth.enabled
      ? new OAuthServer({
          store: o.store,
          grants: o.broker,
          allowLoopbackMetadata: config.oauth.allow_loopback_metadata,
          base,
        })
      : undefined;
    const notifications = await startOwnerNotifications({
      ...o,
      config,
      baseUrl: base,
      env: this.#env,
      log: this.#log,
    });
    this.#notifications = notifications;
    // Contract 14 (v4): the config on the record, and a weaker one than the last start's told to the owner.
    await recordConfigLoaded({
      config,
      audits: o.store.audits,
      publish: notifications.publish,
      log: this.#log,
    });
    const ctx: OwnerContext = ownerContext({
      ...o,
      live: this.#live,
      origins,
      oauth,
      notifications,
      onToolsChange: (l) => this.#onToolsChange(l),
      reload: () => this.reload(),
      env: this.#env,
      log: this.#log,
    });
    const { server, limits } = httpServer({
      flight: this.#flight,
      origins,
      edges: () => this.#edges,
      env: this.#env,
      log: this.#log,
    });
    this.#server = server;
    port = await listen(server, config.host, config.port);
    const mcpEdge = createMcpEdge(ctx);
    this.#edges = [mcpEdge, createOwnerEdge(ctx, { loginMax: limits.loginMax }, this.#env)];
    if (oauth !== undefined) {
      // A connection that ends (Disconnect, refresh-token reuse, revocation) loses its MCP sessions at once.
      const off = oauth.connections.onDisconnect((name) => mcpEdge.closeClient(name));
      this.#edges.push({ routes: [oauthRoutes(oauth, this.#log)], upgrades: [], close: async () => off() });
    }
    return origins.url();
  }

  /** Calls `l` when any source's tool set may have changed (an upstream's tools compiled, re-listed). */
  #onToolsChange(l: () => void): () => void {
    const offs = this.#sources.map((s) => s.onChange?.(l));
    return () => {
      for (const off of offs) off?.();
    };
  }

  /** Clean shutdown; safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    // A start that failed says so in one line (the CLI's); only a daemon that was ready logs its stop.
    const wasReady = this.#info !== undefined;
    if (wasReady) this.#log.log('info', 'daemon_stopping', {});
    const server = this.#server;
    const closedServer = server ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
    try {
      // Contract 17, a clean stop: no new call is taken; every call waiting for a decision is answered with
      // its command's current result (the broker's close begins so) and its answer is written before the
      // edges close their streams; panels are told the daemon stops (owner sockets close 1001).
      this.#flight.stop();
      const brokerClosed = this.#broker?.close();
      await this.#flight.idle();
      await Promise.allSettled(this.#edges.map((e) => e.close()));
      this.#background?.close();
      this.#notifications?.close();
      this.#ownerRules?.close();
      await brokerClosed;
      // After the broker: a call still in flight had its grace period; then every server's group stops.
      await this.#upstreams?.close();
      server?.closeAllConnections();
      await closedServer;
      // The last entries of this run are sealed before the store closes. A start that failed (exit 2, one
      // line) seals nothing: its few entries are sealed by the next run's first checkpoint.
      if (wasReady) await this.#checkpoints?.close();
      else this.#checkpoints?.stop();
    } finally {
      this.#store?.close();
      if (this.#paths) {
        if (this.#upstreams && this.#upstreams.names().length > 0)
          removeUpstreamStatus(this.#paths.upstreamsJson);
        removeRulesStatus(this.#paths.root);
        removeDatabaseStatus(this.#paths.root);
        removeDaemonInfo(this.#paths.daemonJson, process.pid);
      }
      if (wasReady) this.#log.log('info', 'daemon_stopped', {});
    }
  }
}
