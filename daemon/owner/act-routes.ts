/**
 * The door of a notification's one-time actions (contract 19 (v4)): `GET /act/<token>` shows the page with
 * the command and one button (nothing spent); `POST /act/<token>` — that button, ntfy's `http` action or the
 * service worker — decides as the token's owner through the broker's own `approve` /
 * `deny`, the path an owner socket takes, so every rule of contracts 5, 9 and 13.3 holds (AlreadyDecided,
 * VersionConflict, PasskeyRequired), with `via: <channel>` in the decision's audit entry, then spends it.
 *
 * The token is the whole authority: no cookie is read or set, so a POST from another origin in the owner's
 * browser (CSRF) can do only what its sender could do by POSTing the token itself — it must already hold
 * one. A spent, expired or stale token, or one for a command that no longer qualifies (offer.ts), answers
 * 410 and decides nothing. A stranger on the port guessing tokens (2^256 of them) meets its own gate
 * (owner/throttle.ts, separate from the login's so guesses never slow an owner's login): at most 4 checked at
 * a time, a miss held 1 s, at most 32 waiting — past that 429 at once, unchecked.
 *
 * ```
 *  /act/<t> ─▶ GET|HEAD|POST? ─no─▶ 405
 *     └ gate (4 at a time; full ─▶ 429) ─▶ look ─▶ row, unexpired, same version, still offered, owner
 *         exists? ─no─▶ (1 s) 410 ─── yes ─▶ GET: page │ POST: broker.approve/deny, then spend ─▶ 200 | 410
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ActionDesk, noOfferReason } from '../actions/index.js';
import type { ActionRecord, Command } from '../core/index.js';
import type { HttpRoute } from '../http/index.js';
import { actionPage, donePage, gonePage, sendHtml } from './act-page.js';
import type { OwnerContext } from './context.js';
import { LoginThrottle } from './throttle.js';

const ACT_PATH = /^\/act\/([^/]*)$/;
/** Guesses that may wait for the gate; past it, 429 at once. */
export const ACT_MAX_WAITING = 32;
const GONE = 'This action was used, has expired, or was never made.';

interface Found {
  row: ActionRecord;
  command: Command;
}

/** The act route; absent `ctx.actions` (a daemon without the store's actions), every /act/ is 404. */
export function actRoute(ctx: OwnerContext): HttpRoute {
  const gate = new LoginThrottle({ maxWaiting: ACT_MAX_WAITING });
  return async (req, res, url) => {
    const m = ACT_PATH.exec(url.pathname);
    if (m === null) return false;
    const desk = ctx.actions;
    if (desk === undefined) {
      sendHtml(req, res, 404, gonePage('Actions are off on this daemon.'));
      return true;
    }
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
      sendHtml(req, res, 405, gonePage('Only GET and POST work here.'), { Allow: 'GET, HEAD, POST' });
      return true;
    }
    await act(ctx, desk, gate, { req, res, token: m[1]!, spend: method === 'POST' });
    return true;
  };
}

async function act(
  ctx: OwnerContext,
  desk: ActionDesk,
  gate: LoginThrottle,
  a: { req: IncomingMessage; res: ServerResponse; token: string; spend: boolean },
): Promise<void> {
  const { req, res } = a;
  const hungUp = new AbortController();
  res.once('close', () => hungUp.abort());
  let found: Found | undefined;
  let why = GONE;
  const outcome = await gate.attempt(async () => {
    const row = await desk.look(a.token);
    if (row === undefined) return false;
    const command = ctx.broker.get(row.command_id);
    const no = command === undefined ? 'it is gone' : stale(command, row);
    if (no !== undefined || ctx.tokens.ownerCredential(row.owner) === undefined) {
      why = `This action no longer applies: ${no ?? 'its owner is gone'}.`;
      return false;
    }
    found = { row, command: command! };
    return true;
  }, hungUp.signal);
  if (outcome === 'gone') return;
  if (outcome === 'busy') {
    sendHtml(req, res, 429, gonePage('Too many tries at once; try again shortly.'), {
      'Retry-After': String(gate.retryAfterS()),
    });
    return;
  }
  if (outcome === 'refused' || found === undefined) return sendHtml(req, res, 410, gonePage(why));
  const { row, command } = found;
  if (!a.spend) {
    const page = actionPage(ctx.kinds, {
      command,
      action: row.action,
      owner: row.owner,
      expires_at: row.expires_at,
    });
    return sendHtml(req, res, 200, page);
  }
  const r =
    row.action === 'approve'
      ? await ctx.broker.approve(command.id, row.version, row.owner, undefined, undefined, row.channel)
      : await ctx.broker.deny(command.id, row.version, row.owner, undefined, row.channel);
  // Spent after the decision, not before it: a decision moves the command past the token's version, so
  // from its commit on the token (and its twin) is stale whatever the table holds, and two requests
  // carrying it race in the broker, which lets one decide (VersionConflict for the other, on any node).
  // Deleting first cost a durable commit of its own on every tap (issue 38's bench row 20: 2.4× the socket).
  await desk
    .spend(a.token)
    .catch((e: unknown) => ctx.log.log('warn', 'action_spend_failed', { error: (e as Error).message }));
  ctx.log.log('info', 'action_used', {
    id: command.id,
    action: row.action,
    owner: row.owner,
    channel: row.channel,
    ok: r.ok,
  });
  if (!r.ok) return sendHtml(req, res, 410, gonePage(`This action no longer applies: ${r.message}.`));
  sendHtml(req, res, 200, donePage(ctx.kinds, r.command, row.action, row.owner));
}

/** Why the command no longer takes this action: decided, changed since, or no longer offered. */
function stale(c: Command, row: ActionRecord): string | undefined {
  if (c.phase.state !== 'awaiting_review') return `it was already decided (${c.phase.state})`;
  if (c.version !== row.version) return 'the request changed since this action was sent';
  return noOfferReason(c);
}
