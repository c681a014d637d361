/**
 * A message laid out for each webhook format (contract 13.1): `json` posts
 * `{"event","pending_id","client","command","summary","review_expires_at","url"}`; `ntfy` posts the summary
 * as the body with `Title`, `Click`, `Priority` and `Tags` headers; `slack` posts `{"text"}`; `discord` posts
 * `{"content"}`. With actions (contract 19 (v4)): ntfy's `Actions` header, and links in Slack and Discord.
 */
import type { WebhookFormat } from '../config/index.js';
import type { Message } from './message.js';

export interface WebhookBody {
  headers: Record<string, string>;
  body: string;
}

const JSON_TYPE = { 'Content-Type': 'application/json' };

/**
 * A header value as ntfy reads it: plain when it is printable ASCII, else RFC 2047 (`=?UTF-8?B?…?=`),
 * which ntfy decodes. HTTP header values cannot carry line breaks or most non-ASCII text.
 */
export function headerText(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

/**
 * Text from the AI (arguments under `include_args`, client names) as Slack shows it, never as markup
 * (contract 13.1 (v4)): `&`, `<`, `>` are Slack's documented escapes (no `<url|text>` link, `<@U…>` or
 * `<!channel>` mention can be written); mrkdwn has no escape for its emphasis markers (`*bold*`, `_it_`,
 * `~strike~`, `` `code` ``), so each marker is fenced by zero-width spaces, which stop a marker pairing
 * with another (the text reads the same; only markup is lost).
 */
export function slackEscape(t: string): string {
  return t
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replace(/[*_~`]/g, '\u200b$&\u200b');
}

/**
 * Text from the AI as Discord shows it, never as markup (contract 13.1 (v4)): Discord's markdown honours a
 * backslash before any marker, so every character that can open markup is escaped — emphasis, code, spoilers
 * and masked links (`[text](url)`) anywhere; headings, lists and quotes at a line's start; `@` (mentions are
 * also refused by `allowed_mentions`); and `://`, so an address the AI wrote is not made a link.
 */
export function discordEscape(t: string): string {
  return t
    .replace(/[\\*_~`|[\]<@]/g, '\\$&')
    .replace(/^([ \t]*)([#>-]|\d+\.)/gm, '$1\\$2')
    .replaceAll('://', '\\://');
}

function expiryLine(m: Message): string {
  return m.expires === undefined ? '' : `\nExpires ${m.expires}`;
}

/**
 * Contract 19 (v4): ntfy's `Actions` header — two `http` actions that POST to the one-time URLs when tapped
 * (the phone's ntfy app sends the request itself) and clear the notification. The URLs are base64url tokens
 * on an http(s) origin: no comma or semicolon, which the header's short form uses as separators.
 */
export function ntfyActions(a: NonNullable<Message['actions']>): string {
  return `http, Approve, ${a.approve}, method=POST, clear=true; http, Deny, ${a.deny}, method=POST, clear=true`;
}

/** Contract 19 (v4): the links a text message adds, one a line (each opens a page with one button). */
function actionLines(m: Message, link: (label: string, url: string) => string): string {
  const a = m.actions;
  if (a === undefined) return '';
  return `\n${link('Approve', a.approve)}\n${link('Deny', a.deny)}`;
}

export function webhookBody(format: WebhookFormat, m: Message): WebhookBody {
  switch (format) {
    case 'json':
      return {
        headers: JSON_TYPE,
        body: JSON.stringify(m.actions === undefined ? m.json : { ...m.json, actions: m.actions }),
      };
    case 'ntfy':
      return {
        headers: {
          'Content-Type': 'text/plain; charset=utf-8',
          Title: headerText(m.title),
          Click: m.url,
          Priority: String(m.priority),
          Tags: m.tags.join(','),
          ...(m.actions === undefined ? {} : { Actions: ntfyActions(m.actions) }),
        },
        body: m.summary,
      };
    case 'slack':
      return {
        headers: JSON_TYPE,
        body: JSON.stringify({
          text: `*${slackEscape(m.title)}*\n${slackEscape(m.summary)}${expiryLine(m)}\n<${m.url}|Open it in the panel>${actionLines(m, (l, u) => `<${u}|${l}>`)}`,
        }),
      };
    case 'discord':
      return {
        headers: JSON_TYPE,
        body: JSON.stringify({
          content: `**${discordEscape(m.title)}**\n${discordEscape(m.summary)}${expiryLine(m)}\n${m.url}${actionLines(m, (l, u) => `${l}: ${u}`)}`,
          // Nothing in a message may ping anyone (@everyone in an argument shown with include_args).
          allowed_mentions: { parse: [] },
        }),
      };
  }
}
