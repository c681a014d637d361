/**
 * The notify section (contract 13.1): channels that tell the owner a request waits, away from the panel —
 * webhooks (`json`, `ntfy`, `slack`, `discord`) and email over SMTP. Secrets stay in the environment:
 * `url_from_env`, `headers_from_env` and `smtp_url_from_env` name variables, whose values the daemon reads
 * when it sends and never logs (doctor checks that they are set and valid).
 */
import { z } from 'zod';
import { ENV_NAME_RE } from './fields.js';

/** An owner's name (contract 9), as `token owner --name` takes it. */
export const OWNER_NAME_RE = /^[a-z][a-z0-9_-]{0,31}$/;
/** A channel's id (contract 13.1). */
export const CHANNEL_ID_RE = /^[a-z][a-z0-9-]{0,31}$/;
// RFC 7230 token: what an HTTP header name may be.
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// `config` (contract 14 (v4)): the config weakened since the last start (app/config-loaded.ts).
export const NOTIFY_EVENTS = ['waiting', 'decided', 'failed', 'checkpoint', 'config'] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];
export const WEBHOOK_FORMATS = ['json', 'ntfy', 'slack', 'discord'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** True for an absolute http:// or https:// URL. */
export function isHttpUrl(u: string): boolean {
  try {
    const p = new URL(u).protocol;
    return p === 'https:' || p === 'http:';
  } catch {
    return false;
  }
}

/** True for `smtp://` or `smtps://` with a host (contract 13.1 `smtp_url_from_env`). */
export function isSmtpUrl(u: string): boolean {
  try {
    const url = new URL(u);
    return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const envName = (field: string) =>
  z
    .string(`${field} must name an environment variable`)
    .regex(ENV_NAME_RE, `must name an environment variable (letters, digits, _), such as SLACK_WEBHOOK_URL`);

const common = {
  id: z.string('must be a string').regex(CHANNEL_ID_RE, 'must match ^[a-z][a-z0-9-]{0,31}$'),
  events: z
    .array(z.enum(NOTIFY_EVENTS, `must be one of ${NOTIFY_EVENTS.join(', ')}`))
    .min(1, `must list at least one of ${NOTIFY_EVENTS.join(', ')}`)
    .default(['waiting']),
  include_args: z.boolean('must be true or false').default(false),
  // Contract 19 (v4): Approve and Deny in this channel's `waiting` messages, decided as `owner`. Absent:
  // off, and `owner` (channels.ts reads the defaults, so a channel without them loads as before).
  actions: z.boolean('must be true or false').optional(),
  owner: z
    .string('must be an owner name')
    .regex(OWNER_NAME_RE, 'must be an owner name matching ^[a-z][a-z0-9_-]{0,31}$')
    .optional(),
};

const webhookSchema = z
  .strictObject({
    type: z.literal('webhook'),
    ...common,
    url: z.string('must be a string').refine(isHttpUrl, 'must be an http:// or https:// URL').optional(),
    url_from_env: envName('url_from_env').optional(),
    format: z.enum(WEBHOOK_FORMATS, `must be one of ${WEBHOOK_FORMATS.join(', ')}`),
    headers_from_env: z
      .record(
        z.string().regex(HEADER_NAME_RE, 'header names must be HTTP tokens'),
        envName('headers_from_env'),
      )
      .optional(),
  })
  .superRefine((c, ctx) => {
    if ((c.url === undefined) === (c.url_from_env === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: 'a webhook needs exactly one of url or url_from_env (a variable holding the URL)',
      });
  });

// A mailbox as nodemailer takes it: `me@example.com` or `Name <me@example.com>`; no line breaks.
const MAILBOX_RE = /^[^\s@<>]+@[^\s@<>]+$|^[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>$/;
const mailbox = (field: string) =>
  z.string(`must be a string`).regex(MAILBOX_RE, `${field} must be an email address such as me@example.com`);

const emailSchema = z.strictObject({
  type: z.literal('email'),
  ...common,
  smtp_url_from_env: envName('smtp_url_from_env'),
  from: mailbox('from'),
  to: z.array(mailbox('to')).min(1, 'must list at least one address'),
});

export const notifyChannelSchema = z.discriminatedUnion('type', [webhookSchema, emailSchema], {
  error: (issue) =>
    issue.code === 'invalid_union' || issue.code === 'invalid_type'
      ? 'must be webhook or email (each channel is an object with a type)'
      : undefined,
});

/** The whole section: channel ids must differ. */
export const notifySchema = z
  .array(notifyChannelSchema)
  .default([])
  .superRefine((channels, ctx) => {
    const seen = new Set<string>();
    channels.forEach((c, i) => {
      if (seen.has(c.id))
        ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `${c.id} is used by another channel` });
      seen.add(c.id);
    });
  });

/**
 * Contract 19 (v4): the owners' devices (Web Push, contract 13.2) are the built-in channel `push`; with
 * `"push": {"actions": true}` their `waiting` notifications carry Approve and Deny, each device deciding as
 * the owner who subscribed it.
 */
export const pushSchema = z
  .strictObject({ actions: z.boolean('must be true or false').default(false) })
  .default({ actions: false });

export type WebhookChannelConfig = z.infer<typeof webhookSchema>;
export type EmailChannelConfig = z.infer<typeof emailSchema>;
export type NotifyChannelConfig = z.infer<typeof notifyChannelSchema>;
