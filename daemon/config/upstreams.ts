/**
 * The upstreams section (contract 7): MCP servers behind the gate, by name.
 */
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { ENV_NAME_RE, intIn } from './fields.js';
import { presetSchema, previewsSchema } from './previews.js';
import { entrySandboxSchema } from './sandbox.js';

/** An upstream's name (contract 7). */
export const UPSTREAM_NAME_RE = /^[a-z][a-z0-9-]{0,23}$/;
// RFC 7230 token: what an HTTP header name may be.
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Contract 7: one upstream MCP server — exactly one of `argv` (stdio) or `url` (Streamable HTTP). */
export const upstreamSchema = z
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
    // Contract 12: previews of a call's effect, per tool, and named sets of them for well-known servers.
    preset: presetSchema.optional(),
    previews: previewsSchema.optional(),
    // Contract 20 (v4): the preview is made again just before launch and nothing is sent when it changed.
    bind_previews: z.boolean('must be true or false').default(true),
    // Contract 13.3 (v3): approving a call of any of its tools needs a passkey assertion.
    require_passkey: z.boolean('must be true or false').optional(),
    // Contract 21 (v4): what a stdio server's process may touch (sandbox.ts); false: unconfined.
    sandbox: entrySandboxSchema.optional(),
  })
  .superRefine((u, ctx) => {
    if ((u.argv === undefined) === (u.url === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'must have exactly one of argv (a stdio server) or url (Streamable HTTP)',
      });
    }
    if (u.url !== undefined) {
      for (const k of ['env', 'cwd', 'sandbox'] as const) {
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
