/**
 * The long-lived daemon: owns the data dir, the store, the broker, the HTTP server and the edges.
 * `start()` recovers from the store (rules 3 and 4), sweeps leftover session files, listens, mounts the
 * MCP and owner edges, then writes `daemon.json` (contract 1.2). `close()` is a clean stop (contract 17):
 * answers the waiting calls, lets running children finish briefly, closes the store, removes `daemon.json`.
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
import { systemClock, UsageError, VERSION } from '../base/index.js';
import { type Config, commandApprovals, requiresPasskey } from '../config/index.js';
import { Broker, faultsFromEnv, RetentionPass } from '../core/index.js';
import {
  type DaemonInfo,
  type DataDir,
  openDataDir,
  removeDaemonInfo,
  runningDaemon,
  writeDaemonInfo,
} from '../datadir/index.js';
import type { Edge } from '../http/index.js';
import { connectionLimits, createHttpServer, createOrigins, descriptorLimit, Flight } from '../http/index.js';
import { executorsOf } from '../kind/index.js';
import { createSources, KINDS, type KindWork, startKindWork } from '../kinds/index.js';
import { createMcpEdge } from '../mcp/index.js';
import { OAuthServer, oauthRoutes } from '../oauth/index.js';
import { createOwnerEdge, createSetupFeed, type OwnerContext } from '../owner/index.js';
import { RuleBook, removeRulesStatus, rulePort, writeRulesStatus } from '../rules/index.js';
import { type DaemonStore, openStore, removeDatabaseStatus } from '../store/index.js';
import { Tokens } from '../tokens/index.js';
import {
  removeUpstreamStatus,
  UpstreamRegistry,
  withExposed,
  writeUpstreamStatus,
} from '../upstreams/index.js';
import { compiledRules } from './compiled-rules.js';
import { recordConfigLoaded } from './config-loaded.js';
import { diagnose } from './diagnose.js';
import { listen } from './listen.js';
import { type OwnerNotifications, startOwnerNotifications } from './owner-notifications.js';
import { ownersWithoutPasskey } from './passkey-owners.js';
import { unwritable } from './unwritable.js';

export interface DaemonOptions {
  env?: NodeJS.ProcessEnv;
  log: Logger;
}

export class Daemon {
  readonly #config: Config;
  readonly #env: NodeJS.ProcessEnv;
  readonly #log: Logger;
  #paths: DataDir | undefined;
  #store: DaemonStore | undefined;
  #broker: Broker | undefined;
  #retention: RetentionPass | undefined;
  #checkpoints: CheckpointTimer | undefined;
  /** Notifications and Web Push (contracts 13.1, 13.2). */
  #notifications: OwnerNotifications | undefined;
  #server: Server | undefined;
  #edges: Edge[] = [];
  #tokens: Tokens | undefined;
  #upstreams: UpstreamRegistry | undefined;
  /** The kinds' background work (previews: contract 12), closed before the store. */
  #kindWork: KindWork[] = [];
  #info: DaemonInfo | undefined;
  #started = false;
  #closed: Promise<void> | undefined;
  /** The requests in flight, refused once a clean stop begins (contract 17). */
  readonly #flight = new Flight();

  constructor(config: Config, options: DaemonOptions) {
    this.#config = config;
    this.#env = options.env ?? process.env;
    this.#log = options.log;
  }

  get info(): DaemonInfo | undefined {
    return this.#info;
  }

  /** The store's audit port, once started (`audits.onCheckpoint`: the `checkpoint` notification, 13.1). */
  get audits(): DaemonStore['audits'] | undefined {
    return this.#store?.audits;
  }

  /** The owner login URL (contract 5): printed at start, never logged. */
  get ownerLoginUrl(): string {
    if (!this.#info || !this.#tokens) throw new Error('daemon not started');
    return `${this.#info.url}/login#token=${this.#tokens.ownerToken}`;
  }

  /** Contract 13.3: the owners who have no passkey while the config requires one (passkey-owners.ts). */
  ownersWithoutPasskey(): Promise<string[]> {
    return this.#store === undefined ? Promise.resolve([]) : ownersWithoutPasskey(this.#config, this.#store);
  }

  async start(): Promise<DaemonInfo> {
    if (this.#started) throw new Error('Daemon.start() called twice');
    this.#started = true;
    const config = this.#config;
    const paths = unwritable(config.dataDir, () => openDataDir(config.dataDir));
    this.#paths = paths;
    const other = runningDaemon(paths.daemonJson);
    if (other && other.pid !== process.pid) {
      throw new UsageError(`already running: pid ${other.pid} serves this data dir at ${other.url}`);
    }
    // Contract 14: the audit key is made at the first start; the store signs checkpoints with it.
    const auditKey = unwritable(config.dataDir, () => loadOrCreateAuditKey(config.dataDir));
    // Contract 16: the shared PostgreSQL when configured, else broker.db (store/open.ts).
    const store = await openStore(config, paths, {
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
    }).catch((e: unknown) =>
      unwritable(config.dataDir, () => {
        throw e;
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
    await tokens.refreshAtStart(config.database_url !== null).catch((e: unknown) =>
      unwritable(config.dataDir, () => {
        throw e;
      }),
    );
    tokens.assertDistinct();

    // Contract 7: one MCP client connection per upstream, opened in the background once the daemon is ready.
    const upstreams = new UpstreamRegistry({
      upstreams: config.upstreams,
      version: VERSION,
      log: this.#log,
      env: this.#env,
    });
    this.#upstreams = upstreams;
    // architecture.md "The house": each kind builds its source, which lists its tools and names its
    // executor; the MCP edge lists them in the kinds' order (and merges their parts of list_commands in it).
    const world = { config, paths, log: this.#log, upstreams };
    const sources = unwritable(config.dataDir, () => createSources(world));
    /** Calls `l` when any source's tool set may have changed (an upstream's tools compiled, re-listed). */
    const onToolsChange = (l: () => void) => {
      const offs = sources.map((s) => s.onChange?.(l));
      return () => {
        for (const off of offs) off?.();
      };
    };
    const broker = new Broker({
      store,
      reviewTimeoutS: config.review_timeout_s,
      maxPendingPerClient: config.max_pending_per_client,
      maxPending: config.max_pending,
      kinds: KINDS,
      executors: executorsOf(sources),
      // Contract 8: what may be granted is what the config names (catalog commands, upstream tools).
      commandPolicy: (name) => {
        const approvals = commandApprovals(config, name);
        return approvals === undefined ? undefined : { approvals };
      },
      // Contract 13.3: approvals of these need the approving owner's passkey; never granted or auto-approved.
      passkeyRequired: (name) => requiresPasskey(config, name),
      configGrants: config.grants,
      // Contract 16: commands carry this node's name; on a shared database only its own are launched here.
      node: config.node_name,
      shared: config.database_url !== null,
      // Contract 11: the config's rules, read at start (the config loader already compiled each once);
      // v4: path_under resolves links for commands of stdio upstreams (rules/facts.ts).
      rules: rulePort(new RuleBook(compiledRules(config), this.#log, systemClock), KINDS, config.upstreams),
      log: this.#log,
      // Test-only crash points, armed by OGF_BROKER_FAULT in the daemon's environment (core/fault.ts).
      faults: faultsFromEnv(this.#env),
    });
    this.#broker = broker;
    // The store's refusal arrives as a rejection: told the same way as a synchronous one.
    await broker.start().catch((e: unknown) =>
      unwritable(config.dataDir, () => {
        throw e;
      }),
    );

    let port = config.port;
    const origins = createOrigins(config.public_url, () => port, config.host);
    // Contract 15: OAuth for remote AI clients, on with public_url or oauth.enabled; `<base>` is public_url,
    // else the daemon's own URL.
    const oauth = config.oauth.enabled
      ? new OAuthServer({
          store,
          grants: broker,
          allowLoopbackMetadata: config.oauth.allow_loopback_metadata,
          base: () => config.public_url ?? origins.url(),
        })
      : undefined;
    const notify = await startOwnerNotifications({
      config,
      paths,
      store,
      broker,
      baseUrl: () => config.public_url ?? origins.url(),
      env: this.#env,
      log: this.#log,
    });
    this.#notifications = notify;
    // Contract 14 (v4): the config on the record, and a weaker one than the last start's told to the owner.
    await recordConfigLoaded({ config, audits: store.audits, publish: notify.publish, log: this.#log });
    const push = notify.push;
    const ctx: OwnerContext = {
      ...(oauth !== undefined
        ? {
            oauth,
            oauthBearer: {
              clientFor: (t: string) => oauth.connections.clientFor(t),
              challenge: (given: boolean) => oauth.challenge(given),
            },
          }
        : {}),
      config,
      paths,
      broker,
      sources,
      tokens,
      origins,
      log: this.#log,
      version: VERSION,
      passkeys: store.passkeys,
      push,
      // Contract 17: the terminal's doctor and notify test judge this daemon's environment (diagnose.ts).
      diagnose: diagnose({ config, env: this.#env, upstreams, base: () => origins.url() }),
      setup: createSetupFeed({
        config,
        sources,
        url: () => origins.url(),
        // An upstream's state (the registry) and the tools it exposes (compiled in the background after it
        // lists them, kinds/upstream/schema-compiler.ts) change at different moments: the help follows both.
        onUpstreamChange: (l) => {
          const offState = upstreams.onChange(l);
          const offTools = onToolsChange(l);
          return () => {
            offState();
            offTools();
          };
        },
        env: this.#env,
      }),
    };
    // Computed once: the HTTP server's gate and the owner edge's login gate share them (connections.ts).
    const fdLimit = descriptorLimit();
    const limits = connectionLimits(fdLimit, this.#env, (reason) =>
      this.#log.log('warn', 'http_max_connections_ignored', { reason }),
    );
    this.#log.log('info', 'http_limits', {
      max_connections: limits.max,
      ai_max: limits.aiMax,
      login_max: limits.loginMax,
      fd_limit: fdLimit,
    });
    const server = createHttpServer({
      limits,
      flight: this.#flight,
      origins,
      log: this.#log,
      routes: () => this.#edges.flatMap((e) => e.routes),
      upgrades: () => this.#edges.flatMap((e) => e.upgrades),
    });
    this.#server = server;
    port = await listen(server, config.host, config.port);
    const mcpEdge = createMcpEdge(ctx);
    this.#edges = [mcpEdge, createOwnerEdge(ctx, { loginMax: limits.loginMax }, this.#env)];
    if (oauth !== undefined) {
      // A connection that ends (Disconnect, refresh-token reuse, revocation) loses its MCP sessions at once.
      const off = oauth.connections.onDisconnect((name) => mcpEdge.closeClient(name));
      this.#edges.push({
        routes: [oauthRoutes(oauth, this.#log)],
        upgrades: [],
        close: async () => off(),
      });
    }
    const url = origins.url();
    this.#info = {
      pid: process.pid,
      version: VERSION,
      url,
      mcp_url: `${url}/mcp`,
      owner_url: `${url}/`,
      started_at: new Date().toISOString(),
    };
    unwritable(config.dataDir, () => writeDaemonInfo(paths.daemonJson, this.#info!));
    unwritable(config.dataDir, () => writeRulesStatus(config.dataDir, process.pid, config.rules.length));
    const publishStatus = () => {
      try {
        const listing = Object.assign({}, ...sources.map((s) => s.listing?.().fields ?? {}));
        const status = withExposed(upstreams.status(), listing);
        writeUpstreamStatus(paths.upstreamsJson, process.pid, status);
      } catch (e) {
        this.#log.log('error', 'upstream_status_not_written', { error: (e as Error).message });
      }
    };
    // Before the connections open: a preview (contract 12) goes through them once they are up.
    this.#kindWork = startKindWork(world, broker);
    if (upstreams.names().length > 0) {
      // Both the upstream's state and its exposed tools (compiled after it lists them) are in the status.
      upstreams.onChange(publishStatus);
      onToolsChange(publishStatus);
      publishStatus();
      upstreams.start();
    }
    // Issue 19 finding 3: finished commands' bulky fields are pruned after 7 days, off the hot path.
    const retention = new RetentionPass({
      scan: (after, limit) => store.commands.retentionScan(after, limit),
      prune: (id) => broker.prune(id),
      clock: systemClock,
      log: this.#log,
    });
    this.#retention = retention;
    retention.start();
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

  /** SIGHUP (contract 17): logged, never fatal — the seam for reload proper, a later issue (nothing half-applied). */
  reload(): void {
    this.#log.log('warn', 'reload_not_built', { reason: 'restart to apply a changed config' });
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
      this.#retention?.close();
      for (const w of this.#kindWork) w.close();
      this.#notifications?.close();
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
