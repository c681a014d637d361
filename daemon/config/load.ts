/**
 * Configuration (contracts.md 1.1–1.3): flags, then environment variables, then the JSON file, then
 * embedded defaults — validated with zod into one frozen Config. Every error names the field and what it
 * accepts; the CLI turns it into one line and exit 2.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { duplicateKeyPath, UsageError } from '../base/index.js';
import { resolveDataDir } from '../datadir/index.js';
import type { CatalogEntry } from './catalog.js';
import { DATABASE_ENV, databaseUrl } from './database.js';
import { describeZodError, protoKeyPath } from './fields.js';
import { type BridgeConfig, fileSchema } from './file.js';
import type { ConfigGrantEntry } from './grants.js';
import { defaultNodeName } from './node.js';
import type { NotifyChannelConfig } from './notify.js';
import type { OAuthConfig } from './oauth.js';
import type { RuleConfigEntry } from './rules.js';
import { type Confinement, confinementOf } from './sandbox.js';
import type { UpstreamConfig } from './upstreams.js';

export interface Config {
  dataDir: string;
  host: string;
  port: number;
  configFile: string | undefined;
  /** Contract 14 (v4) `config_loaded`: SHA-256 of the config file's bytes as read; null without a file. */
  configSha256: string | null;
  review_timeout_s: number;
  public_url: string | null;
  /** Normalised origins (`https://chatgpt.com`) /mcp accepts besides its own (contract 1.3). */
  mcp_allowed_origins: readonly string[];
  output_limit_bytes: number;
  max_pending_per_client: number;
  max_pending: number;
  ogf_bridge: BridgeConfig | null;
  commands: Record<string, CatalogEntry>;
  upstreams: Record<string, UpstreamConfig>;
  /** Contract 8: grants from the config file (client defaulted to `*`). */
  grants: ReadonlyArray<ConfigGrantEntry>;
  /** Contract 11: the owner's rules, in order (each `when` compiled once at load: daemon/rules/). */
  rules: ReadonlyArray<RuleConfigEntry>;
  /** Contract 15: OAuth for remote AI clients (on whenever public_url is set). */
  oauth: Readonly<OAuthConfig>;
  /** Contract 13.3: approving any command needs a passkey (per command: catalog / upstream entries). */
  require_passkey: boolean;
  /** Contract 20: days a succeeded file write keeps the file's previous content for a revert (0: off). */
  revert_days: number;
  /** Contract 13.1 (v3): notification channels, in the config's order. */
  notify: ReadonlyArray<NotifyChannelConfig>;
  /** Contract 19 (v4): the owners' Web Push devices (the channel `push`) carry Approve and Deny. */
  push: Readonly<{ actions: boolean }>;
  /** Contract 16: the shared PostgreSQL's URL, or null for the embedded SQLite (never logged: a password). */
  database_url: string | null;
  /** Contract 16: the variable the URL is read from (`database_url_from_env`, else OGF_BROKER_DATABASE_URL). */
  database_url_env: string;
  /** Contract 16: this daemon's node name (config `node_name`, default the host name: node.ts). */
  node_name: string;
  /**
   * Contract 21: the default confinement. Already applied: each command's and stdio upstream's `sandbox` is
   * its effective confinement (absent: unconfined; never `false` once loaded).
   */
  sandbox_default: Confinement | null;
}

/** What flags say; each falls back to its environment variable (contract 1.1). */
export interface ConfigFlags {
  dataDir?: string | undefined;
  host?: string | undefined;
  port?: string | undefined;
  config?: string | undefined;
}

function parsePort(raw: string, source: string): number {
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new UsageError(`${source}: port must be an integer from 0 to 65535, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/**
 * Loopback only (contract 1.1 v2): a daemon bound to 0.0.0.0 or a LAN address would be reachable by any
 * peer, which passes the Host check by simply sending `Host: 127.0.0.1:PORT`. Remote owners come in
 * through a tunnel or reverse proxy on this machine and `public_url`.
 */
const LOOPBACK_HOSTS = ['127.0.0.1', '::1', 'localhost'];

function parseHost(raw: string, source: string): string {
  if (!LOOPBACK_HOSTS.includes(raw)) {
    throw new UsageError(
      `${source}: must be a loopback address (127.0.0.1, ::1 or localhost), got ${JSON.stringify(raw)}; to reach the daemon from elsewhere, use a tunnel or reverse proxy and set public_url`,
    );
  }
  return raw;
}

/**
 * Loads the whole configuration. Reads the config file but creates nothing (contract: a bad config
 * changes nothing). Throws UsageError with one line on any problem.
 */
export function loadConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolveDataDir(flags.dataDir, env);
  const host = parseHost(
    flags.host ?? env.OGF_BROKER_HOST ?? '127.0.0.1',
    flags.host ? '--host' : 'OGF_BROKER_HOST',
  );
  const port = parsePort(
    flags.port ?? env.OGF_BROKER_PORT ?? '7719',
    flags.port ? '--port' : 'OGF_BROKER_PORT',
  );
  const explicit = flags.config ?? env.OGF_BROKER_CONFIG;
  const configFile = explicit ? resolve(explicit) : join(dataDir, 'config.json');
  const { raw, used, sha256 } = readConfigFile(configFile, explicit !== undefined && explicit !== '');
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new UsageError(`config ${configFile}: must be a JSON object`);
  }
  // zod records silently drop a `__proto__` key (a command named so would vanish, and start would
  // succeed); refuse it like any other unknown key (contract 1.3: unknown keys are errors).
  const proto = protoKeyPath(raw);
  if (proto !== undefined) {
    throw new UsageError(`config ${configFile}: ${proto}: unknown key (not accepted here)`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(describeZodError(parsed.error, `config ${configFile}: `));
  const file = parsed.data;
  const bridge = bridgeOf(file.ogf_bridge, env);
  return Object.freeze({
    dataDir,
    host,
    port,
    configFile: used,
    configSha256: sha256,
    review_timeout_s: file.review_timeout_s,
    public_url: file.public_url === null ? null : new URL(file.public_url).origin,
    mcp_allowed_origins: Object.freeze(file.mcp_allowed_origins.map((o) => new URL(o).origin)),
    output_limit_bytes: file.output_limit_bytes,
    max_pending_per_client: file.max_pending_per_client,
    max_pending: file.max_pending,
    ogf_bridge: bridge,
    commands: withConfinement(file.commands, file.sandbox_default),
    upstreams: withConfinement(file.upstreams, file.sandbox_default, (u) => u.argv !== undefined),
    grants: Object.freeze(file.grants),
    rules: Object.freeze(file.rules),
    oauth: Object.freeze({
      enabled: file.public_url !== null || file.oauth.enabled,
      allow_loopback_metadata: file.oauth.allow_loopback_metadata,
    }),
    require_passkey: file.require_passkey,
    revert_days: file.revert_days,
    notify: Object.freeze(file.notify),
    push: Object.freeze({ actions: file.push.actions }),
    database_url: databaseUrl(file.database_url_from_env, env),
    database_url_env: file.database_url_from_env ?? DATABASE_ENV,
    node_name: file.node_name ?? defaultNodeName(),
    sandbox_default: file.sandbox_default,
  });
}

/**
 * The config file's JSON, where it was read and its SHA-256 (the status file shows it); none when the
 * default file is absent. A file that was named (`explicit`) must be there.
 */
function readConfigFile(
  configFile: string,
  explicit: boolean,
): { raw: unknown; used: string | undefined; sha256: string | null } {
  let raw: unknown = {};
  let used: string | undefined;
  let sha256: string | null = null;
  try {
    const text = readFileSync(configFile, 'utf8');
    used = configFile;
    sha256 = createHash('sha256').update(text).digest('hex');
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`config ${configFile}: not valid JSON (${(e as Error).message})`);
    }
    // Contract 1.3: JSON.parse keeps the last of two equal keys, so a name given twice is found in the text.
    const twice = duplicateKeyPath(text);
    if (twice !== undefined) throw new UsageError(`config ${configFile}: ${twice}: named twice`);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (!(code === 'ENOENT' && !explicit)) {
      throw new UsageError(`config ${configFile}: cannot read it (${code ?? (e as Error).message})`);
    }
  }
  return { raw, used, sha256 };
}

/** The OGF bridge: the config's, or OGF_BRIDGE_URL's when set (keeping the config's delivery timeout). */
function bridgeOf(configured: BridgeConfig | null, env: NodeJS.ProcessEnv): BridgeConfig | null {
  let bridge: BridgeConfig | null = configured;
  const envBridge = env.OGF_BRIDGE_URL;
  if (envBridge !== undefined && envBridge !== '') {
    if (!/^wss?:\/\/[^\s]+$/.test(envBridge)) {
      throw new UsageError(`OGF_BRIDGE_URL: must be a ws:// or wss:// URL, got ${JSON.stringify(envBridge)}`);
    }
    bridge = { url: envBridge, delivery_timeout_ms: bridge?.delivery_timeout_ms ?? 5000 };
  }
  return bridge;
}

/** Each entry with its effective confinement (contract 21: its own, else the default; `false`: none). */
function withConfinement<T extends { sandbox?: Confinement | false | undefined }>(
  entries: Record<string, T>,
  fallback: Confinement | null,
  applies: (entry: T) => boolean = () => true,
): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const { sandbox, ...rest } = entry;
    const c = applies(entry) ? confinementOf(sandbox, fallback) : undefined;
    out[name] = (c === undefined ? rest : { ...rest, sandbox: c }) as T;
  }
  return out;
}
