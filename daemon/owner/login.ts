/**
 * Login (contracts.md 5): `GET /login#token=T` serves a page whose script reads the token from the URL
 * fragment (which browsers never send to a server, so it stays out of logs and query strings) and POSTs it
 * as JSON to `POST /login`. Any owner's token (contract 9) logs in as that owner. A right token gets an `HttpOnly; SameSite=Strict` session cookie and, in the
 * body, the session's panel key (v2: the page keeps it in `localStorage`, see sessions.ts); a wrong one gets
 * 401 after a 1 s hold. Attempts go through the login gate (throttle.ts): at most 4 are checked at a time,
 * and the body is read before an attempt queues, so a slow body cannot hold a slot. The token is compared
 * in constant time and never logged or audited — only the fact of a refused attempt and the remote
 * address. The panel key is never logged either, and never travels in a URL.
 *
 * Requiring `Content-Type: application/json` means a cross-site HTML form cannot post here without a
 * CORS preflight we never grant, and a browser `Origin` must be one of ours. `POST /logout` checks the
 * `Origin` the same way and needs the panel key as well as the cookie: a page on another 127.0.0.1 port
 * (which is same-site, so the browser sends it our cookie) must not log the owner out, and neither may a
 * server there that received the cookie.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type EdgeContext, type HttpRoute, sendJson } from '../http/index.js';
import type { OwnerCredential } from '../tokens/index.js';
import { OwnerSessions } from './sessions.js';
import { securityHeaders, sendPage } from './static.js';
import type { LoginThrottle } from './throttle.js';

export const BODY_MAX = 4096;

export function json(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  extra: Record<string, string> = {},
) {
  sendJson(res, status, body, { ...securityHeaders(req), ...extra });
}

export function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra = {},
) {
  json(req, res, status, { error: { code, message } }, extra);
}

/**
 * Reads a small body; resolves undefined as soon as it grows past `max` bytes (the caller answers 413 and
 * closes the connection, so nobody can stream an endless body at the login).
 */
export function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= max) chunks.push(c);
      else {
        req.off('data', onData);
        resolve(undefined);
      }
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The panel key a request carries in this header (the session probe; the socket takes a subprotocol). */
export const PANEL_KEY_HEADER = 'x-ogf-owner-key';

/** True when the page is served through the https public_url (then the cookie is `Secure`). */
export function viaPublicUrl(ctx: EdgeContext, req: IncomingMessage): boolean {
  const pub = ctx.config.public_url;
  return (
    pub !== null && req.headers.host !== undefined && new URL(pub).host === req.headers.host.toLowerCase()
  );
}

export interface LoginDeps {
  ctx: EdgeContext;
  sessions: OwnerSessions;
  throttle: LoginThrottle;
}

/** False when a browser `Origin` is present and not one of the daemon's own (or public_url's). */
export function ownOrigin(ctx: EdgeContext, req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  return origin === undefined || ctx.origins.isAllowedOrigin(origin);
}

async function postLogin(deps: LoginDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const address = req.socket.remoteAddress ?? 'unknown';
  const token = await readLoginToken(deps.ctx, req, res);
  if (token === undefined) return;
  // The client hanging up while its attempt waits takes it out of the queue unchecked.
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  let owner: OwnerCredential | undefined;
  const outcome = await deps.throttle.attempt(() => {
    owner = checkToken(deps.ctx, token, address);
    return owner !== undefined;
  }, gone.signal);
  if (outcome === 'gone') return;
  if (outcome === 'busy') {
    // Unchecked: this token was not tried. Busy is nobody's failure, so no 429 and no lockout.
    const s = deps.throttle.retryAfterS();
    const message = `the daemon is checking other login attempts: try again in ${s} s`;
    refuse(req, res, 503, 'TooManyAttempts', message, { 'Retry-After': String(s) });
  } else if (outcome === 'refused' || owner === undefined) {
    const message = 'that is no owner’s token: open the login URL `ogf-broker token owner` printed for you';
    refuse(req, res, 401, 'Unauthorized', message);
  } else {
    logIn(deps, owner, address, req, res);
  }
}

/**
 * The token of a login POST, once its origin, type, size and shape are right; otherwise undefined, with
 * the refusal already answered.
 */
async function readLoginToken(
  ctx: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<string | undefined> {
  if (!ownOrigin(ctx, req)) {
    refuse(req, res, 403, 'Forbidden', 'Origin: this page may only be posted from the daemon’s own origin');
    return undefined;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    refuse(req, res, 415, 'BadRequest', 'Content-Type must be application/json');
    return undefined;
  }
  const text = await readBody(req, BODY_MAX);
  if (text === undefined) {
    res.once('finish', () => req.destroy());
    refuse(req, res, 413, 'BadRequest', `body must be at most ${BODY_MAX} bytes`, { Connection: 'close' });
    return undefined;
  }
  let token: unknown;
  try {
    token = (JSON.parse(text) as { token?: unknown }).token;
  } catch {
    token = undefined;
  }
  if (typeof token !== 'string' || token.length === 0 || token.length > 512) {
    refuse(req, res, 400, 'BadRequest', 'body must be {"token": "<owner token>"}');
    return undefined;
  }
  return token;
}

/** Whose token this is, run inside the login gate; a refusal is audited when checked, so the audit log
 * counts the attempts the gate let through. */
function checkToken(ctx: EdgeContext, token: string, address: string): OwnerCredential | undefined {
  const owner = ctx.tokens.ownerByToken(token);
  if (owner !== undefined) return owner;
  ctx.broker.audit({
    at: new Date().toISOString(),
    actor: { kind: 'owner', name: 'owner:browser' },
    action: 'owner_login_refused',
    detail: { address },
  });
  ctx.log.log('warn', 'owner_login_refused', { address });
  return undefined;
}

/** A right token: a new session, its cookie and panel key in the answer, the login audited. */
function logIn(
  { ctx, sessions }: LoginDeps,
  owner: OwnerCredential,
  address: string,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const session = sessions.create(owner);
  ctx.log.log('info', 'owner_login', { address, owner: owner.name });
  // Contract 14: who logged in, from where; never the token, the cookie or the panel key.
  ctx.broker.audit({
    at: new Date().toISOString(),
    actor: { kind: 'owner', name: owner.name },
    action: 'owner_login',
    detail: { address, via: 'browser' },
  });
  const cookie = sessions.cookie(session.id, viaPublicUrl(ctx, req));
  json(req, res, 200, { ok: true, key: session.key }, { 'Set-Cookie': cookie });
}

/** The login, logout and session-probe routes, and `GET /` (the panel, or the login page without a session). */
export function loginRoutes(deps: LoginDeps): HttpRoute[] {
  const { sessions } = deps;
  return [
    async (req, res, url) => {
      const path = url.pathname;
      const m = req.method;
      if (path === '/' && (m === 'GET' || m === 'HEAD')) {
        // Without a session `/` is the login page: it holds no command data (contract 5).
        await sendPage(req, res, sessions.session(req) !== undefined ? 'index.html' : 'login.html');
        return true;
      }
      if (path === '/login' && (m === 'GET' || m === 'HEAD')) {
        await sendPage(req, res, 'login.html');
        return true;
      }
      if (path === '/login' && m === 'POST') {
        await postLogin(deps, req, res);
        return true;
      }
      if (path === '/logout' && m === 'POST') {
        if (!ownOrigin(deps.ctx, req)) {
          refuse(req, res, 403, 'Forbidden', 'Origin: only the daemon’s own pages may log out');
          return true;
        }
        // Ending the session closes its sockets at once (contract 5 v2; edge.ts wires sessions to the hub).
        const key = req.headers[PANEL_KEY_HEADER];
        const panelKey = typeof key === 'string' ? key : undefined;
        const owner = sessions.authenticate(req, panelKey)?.owner;
        const ended = sessions.end(req, panelKey);
        if (ended && owner !== undefined) {
          deps.ctx.broker.audit({
            at: new Date().toISOString(),
            actor: { kind: 'owner', name: owner.name },
            action: 'owner_logout',
            detail: {},
          });
        }
        json(req, res, 200, { ok: true, ended }, { 'Set-Cookie': OwnerSessions.clearCookie() });
        return true;
      }
      if (path === '/owner/session' && m === 'GET') {
        // Lets a tab whose WebSocket keeps failing tell "logged out" (daemon restarted, or this tab's key is
        // not its session's) from "daemon down". Cookie and key, like the socket.
        const key = req.headers[PANEL_KEY_HEADER];
        const match = sessions.authenticate(req, typeof key === 'string' ? key : undefined);
        if (match !== undefined && deps.ctx.tokens.isCurrent(match.owner)) json(req, res, 200, { ok: true });
        else refuse(req, res, 401, 'Unauthorized', 'no owner session with this panel key: log in again');
        return true;
      }
      return false;
    },
  ];
}
