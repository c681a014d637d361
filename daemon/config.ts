/**
 * Configuration (contracts.md 1.1–1.3): flags, then environment variables, then the JSON file, then
 * embedded defaults — validated with zod into one frozen Config. Every error names the field and what it
 * accepts; the CLI turns it into one line and exit 2.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from './errors.js';
import { duplicateKeyPath } from './json-duplicates.js';
import { compilePattern } from './patterns.js';
import { hasForbiddenCharacter } from './text-rules.js';

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const PLACEHOLDER_RE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

const stringParam = z.strictObject({
  type: z.literal('string'),
  max_length: z.number().int().min(1).max(4096),
  // Anchored and compiled by RE2 (daemon/patterns.ts, contract 1.3 (v2)): what RE2 cannot compile is refused
  // here, naming the field, rather than at the first call.
  pattern: z
    .string()
    .superRefine((p, ctx) => {
      const compiled = compilePattern(p);
      if (!compiled.ok) ctx.addIssue({ code: 'custom', message: compiled.why });
    })
    .optional(),
  // Contract 1.3 (v2): values refuse control and bidi characters; true admits newline and tab, nothing else.
  // Absent means false (kept optional so catalog entries built in code need not spell it out).
  allow_newlines: z.boolean('must be true or false').optional(),
});
const integerParam = z
  .strictObject({ type: z.literal('integer'), min: z.number().int(), max: z.number().int() })
  .refine((p) => p.min <= p.max, 'min must not exceed max');
const enumParam = z.strictObject({
  type: z.literal('enum'),
  values: z.array(z.string().max(4096)).min(1).max(256),
});
const paramSchema = z.union([stringParam, integerParam, enumParam], {
  error:
    'must be {"type":"string","max_length":N,"pattern"?,"allow_newlines"?}, {"type":"integer","min":A,"max":B} or {"type":"enum","values":[...]}',
});
export type ParamSpec = z.infer<typeof paramSchema>;

const commandSchema = z
  .strictObject({
    description: z.string().max(1000),
    argv: z.array(z.string().min(1, 'must be non-empty strings')).min(1, 'must name a program'),
    params: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'param names must be identifiers'), paramSchema)
      .default({}),
    cwd: z.string().refine(isAbsolute, 'must be an absolute path').optional(),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'names must be identifiers'), z.string())
      .optional(),
    timeout_s: z.number().int().min(1).max(3600).default(60),
    // Contract 1.3/9 (v2): how many distinct owners must approve each call (absent: 1).
    approvals: intIn(1, 5).optional(),
  })
  .superRefine((cmd, ctx) => {
    cmd.argv.forEach((arg, i) => {
      const m = PLACEHOLDER_RE.exec(arg);
      if (m) {
        if (!(m[1]! in cmd.params)) {
          ctx.addIssue({
            code: 'custom',
            path: ['argv', i],
            message: `placeholder {${m[1]}} names no param`,
          });
        }
      } else if (arg.includes('{') && /\{[A-Za-z_][A-Za-z0-9_]*\}/.test(arg)) {
        ctx.addIssue({
          code: 'custom',
          path: ['argv', i],
          message: 'a placeholder must be a whole argv element, exactly {name}',
        });
      }
    });
    if (cmd.argv[0] !== undefined && PLACEHOLDER_RE.test(cmd.argv[0])) {
      ctx.addIssue({
        code: 'custom',
        path: ['argv', 0],
        message: 'the program must be a literal, not a placeholder',
      });
    }
  });
export type CatalogEntry = z.infer<typeof commandSchema>;

const bridgeSchema = z.strictObject({
  url: z.string().regex(/^wss?:\/\/[^\s]+$/, 'must be a ws:// or wss:// URL'),
  delivery_timeout_ms: z.number().int().min(100).max(60_000).default(5000),
});

/** The largest `output_limit_bytes` (contract 1.3, v2): 1 MiB. */
export const OUTPUT_LIMIT_MAX = 1024 * 1024;

/** An integer field from `min` to `max`, refused in one line that names the range and what came. */
function intIn(min: number, max: number) {
  const accepts = {
    error: (issue: { input?: unknown }) =>
      `must be an integer from ${min} to ${max}, got ${describeValue(issue.input)}`,
  };
  return z.number(accepts).int(accepts).min(min, accepts).max(max, accepts);
}

function describeValue(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (v === null) return 'null';
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

const HTTPS_ORIGIN = 'must be an https origin (scheme and host, no path), such as https://chatgpt.com';

function isHttpsOrigin(u: string): boolean {
  try {
    const url = new URL(u);
    return (
      url.protocol === 'https:' && (url.pathname === '/' || url.pathname === '') && !url.search && !url.hash
    );
  } catch {
    return false;
  }
}

const UPSTREAM_NAME_RE = /^[a-z][a-z0-9-]{0,23}$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
// RFC 7230 token: what an HTTP header name may be.
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Contract 7: one upstream MCP server — exactly one of `argv` (stdio) or `url` (Streamable HTTP). */
const upstreamSchema = z
  .strictObject({
    argv: z.array(z.string().min(1, 'must be non-empty strings')).min(1, 'must name a program').optional(),
    env: z.record(z.string().regex(ENV_NAME_RE, 'names must be identifiers'), z.string()).optional(),
    cwd: z.string().refine(isAbsolute, 'must be an absolute path').optional(),
    url: z
      .string()
      .refine((u) => {
        try {
          const p = new URL(u).protocol;
          return p === 'https:' || p === 'http:';
        } catch {
          return false;
        }
      }, 'must be an http:// or https:// URL')
      .optional(),
    headers_from_env: z
      .record(
        z.string().regex(HEADER_NAME_RE, 'header names must be HTTP tokens'),
        z.string().regex(ENV_NAME_RE, 'must name an environment variable'),
      )
      .optional(),
    timeout_s: intIn(1, 3600).default(60),
    tools: z.array(z.string().min(1)).optional(),
    trust_read_only_hint: z.boolean('must be true or false').default(false),
    // Contract 7/9: how many distinct owners must approve each call.
    approvals: intIn(1, 5).default(1),
    wait_seconds: z.number().min(0).max(90).default(50),
  })
  .superRefine((u, ctx) => {
    if ((u.argv === undefined) === (u.url === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'must have exactly one of argv (a stdio server) or url (Streamable HTTP)',
      });
    }
    if (u.url !== undefined) {
      for (const k of ['env', 'cwd'] as const) {
        if (u[k] !== undefined)
          ctx.addIssue({ code: 'custom', path: [k], message: 'applies to argv (stdio) upstreams only' });
      }
    }
    if (u.argv !== undefined && u.headers_from_env !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['headers_from_env'],
        message: 'applies to url (HTTP) upstreams only',
      });
    }
  });

export type UpstreamConfig = z.infer<typeof upstreamSchema>;

const CLIENT_OR_ALL = /^(?:\*|[a-z0-9][a-z0-9_-]{0,31})$/;

/** Contract 8: `"grants":[{"command","client"?,"args"?,"note"?}]`, client default `*`. */
const configGrantSchema = z.strictObject({
  command: z.string().min(1, 'must name a catalog command or an upstream tool'),
  client: z
    .string()
    .regex(CLIENT_OR_ALL, 'must be a client name (^[a-z0-9][a-z0-9_-]{0,31}$) or * for every client')
    .default('*'),
  args: z.record(z.string(), z.unknown(), 'must be an object of the exact arguments').optional(),
  note: z
    .string()
    .max(500, 'must be at most 500 characters')
    .refine((t) => !hasForbiddenCharacter(t), 'must hold no control or bidirectional characters')
    .optional(),
});

export const fileSchema = z
  .strictObject({
    review_timeout_s: z.number().int().min(10).max(86_400).default(300),
    public_url: z
      .string()
      .refine((u) => {
        try {
          const url = new URL(u);
          return url.protocol === 'https:' && (url.pathname === '/' || url.pathname === '') && !url.search;
        } catch {
          return false;
        }
      }, 'must be an https origin such as https://broker.example.com')
      .nullable()
      .default(null),
    // Contract 1.3 (v2): browser Origins /mcp accepts besides its own and public_url's (ChatGPT: https://chatgpt.com).
    mcp_allowed_origins: z.array(z.string().refine(isHttpsOrigin, HTTPS_ORIGIN)).default([]),
    // Contract 1.3 (v2): at most 1 MiB kept of each stream. Every final command's output is in the owner's
    // history and (cut to 16 KiB, view.ts) in its snapshot; 16 MiB of control characters made one View
    // ~192 MiB of JSON and a snapshot of three of them crashed the daemon (test/attack-flood.test.ts).
    output_limit_bytes: intIn(1024, OUTPUT_LIMIT_MAX).default(65536),
    // Contract 1.3 (v2): how many PENDING commands one client, and all clients together, may have. Without
    // them one client's batched POSTs queued thousands a second and every snapshot carried them all.
    max_pending_per_client: intIn(1, 10_000).default(100),
    max_pending: intIn(1, 100_000).default(2000),
    ogf_bridge: bridgeSchema.nullable().default(null),
    commands: z
      .record(
        z
          .string()
          .regex(NAME_RE, 'command names must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$')
          // Contract 1.3 (v2): `__` separates an upstream from its tool (section 7), so no catalog name holds it.
          .refine(
            (n) => !n.includes('__'),
            'command names must not contain __ (it belongs to upstream tools)',
          ),
        commandSchema,
      )
      .default({}),
    // Contract 7: MCP servers behind the gate, by name.
    upstreams: z
      .record(
        z.string().regex(UPSTREAM_NAME_RE, 'upstream names must match ^[a-z][a-z0-9-]{0,23}$'),
        upstreamSchema,
      )
      .default({}),
    grants: z.array(configGrantSchema).default([]),
  })
  .superRefine((file, ctx) => {
    // Contract 1.3/8: a grant naming an unknown command, a cue or a quorum command is a bad config.
    file.grants.forEach((g, i) => {
      const approvals = commandApprovals(file, g.command);
      const why =
        g.command === 'ogf.cue'
          ? 'ogf.cue cannot be granted (every cue opens the owner’s approval window)'
          : approvals === undefined
            ? `names no catalog command and no configured upstream tool (<upstream>__<tool>), got ${JSON.stringify(g.command)}`
            : approvals > 1
              ? `${g.command} needs ${approvals} owners to approve each call, so it cannot be granted`
              : undefined;
      if (why !== undefined) ctx.addIssue({ code: 'custom', path: ['grants', i, 'command'], message: why });
    });
  });

/**
 * How many owners must approve a call of `name` (contract 9), or undefined when the config knows no such
 * command: a catalog name, or `<upstream>__<tool>` of a configured upstream whose `tools` (when given)
 * lists the tool. Static, so config grants are checked before any upstream has connected.
 */
export function commandApprovals(
  config: Pick<Config, 'commands' | 'upstreams'>,
  name: string,
): number | undefined {
  const entry = Object.hasOwn(config.commands, name) ? config.commands[name] : undefined;
  if (entry !== undefined) return entry.approvals ?? 1;
  const sep = name.indexOf('__');
  if (sep < 0) return undefined;
  const upstreamName = name.slice(0, sep);
  const upstream = Object.hasOwn(config.upstreams, upstreamName) ? config.upstreams[upstreamName] : undefined;
  const tool = name.slice(sep + 2);
  if (upstream === undefined || tool === '') return undefined;
  if (upstream.tools !== undefined && !upstream.tools.includes(tool)) return undefined;
  return upstream.approvals;
}

export interface BridgeConfig {
  url: string;
  delivery_timeout_ms: number;
}

export interface Config {
  dataDir: string;
  host: string;
  port: number;
  configFile: string | undefined;
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
}

export type ConfigGrantEntry = z.infer<typeof configGrantSchema>;

/** What flags say; each falls back to its environment variable (contract 1.1). */
export interface ConfigFlags {
  dataDir?: string | undefined;
  host?: string | undefined;
  port?: string | undefined;
  config?: string | undefined;
}

/** The default data dir: `$XDG_STATE_HOME/ogf-broker`, else `~/.local/state/ogf-broker` (contract 1.2). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  return xdg && isAbsolute(xdg) ? join(xdg, 'ogf-broker') : join(homedir(), '.local', 'state', 'ogf-broker');
}

/** Resolves the data dir from a flag, `OGF_BROKER_DATA_DIR`, or the default. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const d = flag ?? env.OGF_BROKER_DATA_DIR;
  if (d === undefined || d === '') return defaultDataDir(env);
  return resolve(d);
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => {
    if (typeof key === 'number') return `${acc}[${key}]`;
    return acc === '' ? String(key) : `${acc}.${String(key)}`;
  }, '');
}

/** One line naming the first offending field and what it accepts. */
export function describeZodError(error: z.ZodError, prefix = ''): string {
  const issue = error.issues[0];
  if (!issue) return `${prefix}invalid`;
  if (issue.code === 'unrecognized_keys') {
    const where = formatPath(issue.path);
    const keys = issue.keys.map((k) => (where ? `${where}.${k}` : k)).join(', ');
    return `${prefix}${keys}: unknown key (not accepted here)`;
  }
  const field = formatPath(issue.path) || '(top level)';
  // zod 4 reports a bad record key as "Invalid key in record", with the key rule's own message inside.
  const inner = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
  return `${prefix}${field}: ${inner ?? issue.message}`;
}

/** The path of the first own `__proto__` key in parsed JSON, or undefined. Iterative: depth is the input's. */
function protoKeyPath(raw: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[raw, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    for (const [k, child] of Object.entries(v)) {
      const p = Array.isArray(v) ? `${path}[${k}]` : path === '' ? k : `${path}.${k}`;
      if (k === '__proto__' && !Array.isArray(v)) return p;
      stack.push([child, p]);
    }
  }
  return undefined;
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
  let raw: unknown = {};
  let used: string | undefined;
  try {
    const text = readFileSync(configFile, 'utf8');
    used = configFile;
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
  let bridge: BridgeConfig | null = file.ogf_bridge;
  const envBridge = env.OGF_BRIDGE_URL;
  if (envBridge !== undefined && envBridge !== '') {
    if (!/^wss?:\/\/[^\s]+$/.test(envBridge)) {
      throw new UsageError(`OGF_BRIDGE_URL: must be a ws:// or wss:// URL, got ${JSON.stringify(envBridge)}`);
    }
    bridge = { url: envBridge, delivery_timeout_ms: bridge?.delivery_timeout_ms ?? 5000 };
  }
  return Object.freeze({
    dataDir,
    host,
    port,
    configFile: used,
    review_timeout_s: file.review_timeout_s,
    public_url: file.public_url === null ? null : new URL(file.public_url).origin,
    mcp_allowed_origins: Object.freeze(file.mcp_allowed_origins.map((o) => new URL(o).origin)),
    output_limit_bytes: file.output_limit_bytes,
    max_pending_per_client: file.max_pending_per_client,
    max_pending: file.max_pending,
    ogf_bridge: bridge,
    commands: file.commands,
    upstreams: file.upstreams,
    grants: Object.freeze(file.grants),
  });
}
