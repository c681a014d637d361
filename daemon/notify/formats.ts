/**
 * A message laid out for each webhook format (contract 13.1): `json` posts
 * `{"event","pending_id","client","command","summary","review_expires_at","url"}`; `ntfy` posts the summary
 * as the body with `Title`, `Click`, `Priority` and `Tags` headers; `slack` posts `{"text"}`; `discord` posts
 * `{"content"}`.
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

/** Slack's mrkdwn treats these three as markup (its documented escapes). */
function slackEscape(t: string): string {
  return t.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function expiryLine(m: Message): string {
  return m.expires === undefined ? '' : `\nExpires ${m.expires}`;
}

export function webhookBody(format: WebhookFormat, m: Message): WebhookBody {
  switch (format) {
    case 'json':
      return { headers: JSON_TYPE, body: JSON.stringify(m.json) };
    case 'ntfy':
      return {
        headers: {
          'Content-Type': 'text/plain; charset=utf-8',
          Title: headerText(m.title),
          Click: m.url,
          Priority: String(m.priority),
          Tags: m.tags.join(','),
        },
        body: m.summary,
      };
    case 'slack':
      return {
        headers: JSON_TYPE,
        body: JSON.stringify({
          text: `*${slackEscape(m.title)}*\n${slackEscape(m.summary)}${expiryLine(m)}\n<${m.url}|Open it in the panel>`,
        }),
      };
    case 'discord':
      return {
        headers: JSON_TYPE,
        body: JSON.stringify({
          content: `**${m.title}**\n${m.summary}${expiryLine(m)}\n${m.url}`,
          // Nothing in a message may ping anyone (@everyone in an argument shown with include_args).
          allowed_mentions: { parse: [] },
        }),
      };
  }
}
