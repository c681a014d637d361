/**
 * The pages of a notification's one-time action (contract 19 (v4)), written by the daemon: no script, one
 * form. `GET /act/<token>` shows what the owner would decide — the command's summary, its preview (the diff
 * or the dry run's text), until when the action works — and one button that POSTs back to the same URL (an
 * empty `action`: the page never writes the token, nor anything else of the request, back out); the POST
 * answers with what was done. Every text is escaped twice over: the visible-text rule first (controls and
 * bidirectional characters shown as `\u…`, contract 5), then HTML. Served with the panel's headers (a
 * strict CSP, no framing, no referrer, no cache) and no cookie.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeForTerminal } from '../base/index.js';
import type { Command, KindPolicies } from '../core/index.js';
import { securityHeaders } from './static.js';

const html = (t: string) =>
  t
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');

/** AI text as the page shows it: one escaped line per line (a diff keeps its lines). */
const shown = (t: string) =>
  t
    .split('\n')
    .map((l) => html(escapeForTerminal(l)))
    .join('\n');

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${html(title)}</title>
<link rel="stylesheet" href="/ui/styles.css">
</head><body><main class="act">
${body}
</main></body></html>
`;
}

function previewBlock(c: Command): string {
  const p = c.preview;
  if (p === undefined) return '';
  if (p.status === 'failed') return `<p>No preview: ${shown(p.error ?? 'it failed')}</p>`;
  const text = p.diff ?? p.text;
  if (text === undefined) return '';
  const cut = p.truncated === true ? '<p>The preview was cut at 256 KiB; the panel says the same.</p>' : '';
  return `<h2>Preview</h2>${cut}<pre class="diff">${shown(text)}</pre>`;
}

export interface ActView {
  command: Command;
  action: 'approve' | 'deny';
  owner: string;
  expires_at: string;
}

/** The GET page: what would be decided, and the one button. */
export function actionPage(kinds: KindPolicies, v: ActView): string {
  const c = v.command;
  const verb = v.action === 'approve' ? 'Approve' : 'Deny';
  return layout(
    `${verb}: ${c.command}`,
    `<h1>${shown(c.client)} asks: ${shown(c.command)}</h1>
<p class="summary">${shown(kinds.of(c.tool).summary(c))}</p>
${previewBlock(c)}
<p>${verb} as ${html(v.owner)}. This link works once, until ${html(v.expires_at)}.</p>
<form method="post"><button type="submit" class="${v.action}">${verb}</button></form>`,
  );
}

/** The POST's page: what was done. */
export function donePage(kinds: KindPolicies, c: Command, action: 'approve' | 'deny', owner: string): string {
  const done = action === 'approve' ? 'Approved' : 'Denied';
  const state = c.phase.state === 'awaiting_review' ? ' It still waits for other approvals.' : '';
  return layout(
    `${done}: ${c.command}`,
    `<h1>${done}</h1><p class="summary">${shown(kinds.of(c.tool).summary(c))}</p><p>${done} by ${html(owner)}.${state}</p>`,
  );
}

/** Spent, expired, stale or never made: nothing was decided. */
export function gonePage(why: string): string {
  return layout(
    'This action is gone',
    `<h1>This action is gone</h1><p>${html(why)} Nothing was decided; open the panel to decide.</p>`,
  );
}

export function sendHtml(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string,
  extra = {},
): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(bytes.length),
    ...securityHeaders(req),
    ...extra,
  });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}
