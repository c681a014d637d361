/**
 * The config file's schema (contract 1.3): the sections, merged into one object; unknown keys are errors.
 */
import { z } from 'zod';
import { commandSchema, NAME_RE } from './catalog.js';
import { databaseUrlFromEnvSchema } from './database.js';
import { HTTPS_ORIGIN, intIn, isHttpsOrigin } from './fields.js';
import { commandApprovals, configGrantSchema } from './grants.js';
import { nodeNameSchema } from './node.js';
import { notifySchema, pushSchema } from './notify.js';
import { oauthSchema } from './oauth.js';
import { passkeyAllowRefusal, requiresPasskey } from './passkey.js';
import { repeatedRuleId, ruleSchema } from './rules.js';
import { sandboxSchema } from './sandbox.js';
import { UPSTREAM_NAME_RE, upstreamSchema } from './upstreams.js';

const bridgeSchema = z.strictObject({
  url: z.string().regex(/^wss?:\/\/[^\s]+$/, 'must be a ws:// or wss:// URL'),
  delivery_timeout_ms: z.number().int().min(100).max(60_000).default(5000),
});

/** The largest `output_limit_bytes` (contract 1.3, v2): 1 MiB. */
export const OUTPUT_LIMIT_MAX = 1024 * 1024;

/** The whole config file; a grant naming an unknown command, a cue or a quorum command is refused. */
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
    // Contract 11: the owner's rules, evaluated in order at submit.
    rules: z.array(ruleSchema).default([]),
    // Contract 15 (v3): OAuth for remote AI clients.
    oauth: oauthSchema,
    // Contract 13.3 (v3): true = approving any command needs a passkey assertion (see passkey.ts).
    require_passkey: z.boolean('must be true or false').default(false),
    // Contract 20 (v4): how many days a succeeded file write keeps the file's previous content for a revert
    // (0: none). At most 7: the retention rule removes it with the command's other bulky fields.
    revert_days: intIn(0, 7).default(7),
    // Contract 13.1 (v3): notification channels.
    notify: notifySchema,
    // Contract 19 (v4): whether the owners' Web Push devices get Approve and Deny.
    push: pushSchema,
    // Contract 16: the variable holding the shared PostgreSQL's URL (else OGF_BROKER_DATABASE_URL, else SQLite).
    database_url_from_env: databaseUrlFromEnvSchema.optional(),
    // Contract 16: this daemon's name among the nodes of one database (default: the host name, node.ts).
    node_name: nodeNameSchema.optional(),
    // Contract 21 (v4): the confinement of every catalog command and stdio upstream without its own.
    sandbox_default: sandboxSchema.nullable().default(null),
  })
  .superRefine((file, ctx) => {
    const twice = repeatedRuleId(file.rules);
    if (twice >= 0) {
      const id = file.rules[twice]!.id;
      ctx.addIssue({
        code: 'custom',
        path: ['rules', twice, 'id'],
        message: `rule ${id}: ids must be unique; ${id} is used twice`,
      });
    }
    // Contract 13.3: an allow rule may not approve what needs the owner's passkey.
    file.rules.forEach((rule, i) => {
      if (rule.decision !== 'allow') return;
      const why = passkeyAllowRefusal(file, rule.when);
      if (why !== undefined)
        ctx.addIssue({ code: 'custom', path: ['rules', i, 'decision'], message: `rule ${rule.id}: ${why}` });
    });
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
              : requiresPasskey(file, g.command)
                ? `${g.command} needs a passkey for each approval (require_passkey), so it cannot be granted`
                : undefined;
      if (why !== undefined) ctx.addIssue({ code: 'custom', path: ['grants', i, 'command'], message: why });
    });
  });

/** The avatar bridge (contract 1.3 `ogf_bridge`), after `OGF_BRIDGE_URL` is applied. */
export interface BridgeConfig {
  url: string;
  delivery_timeout_ms: number;
}
