/**
 * "Sign in with a passkey" (contract 13.3): the login page asks `POST /login/passkey/options` for request
 * options (a discoverable credential, user verification required), lets the browser's authenticator answer,
 * and posts the answer to `POST /login/passkey`. A verified answer gives exactly what the token login gives
 * (login.ts): an `HttpOnly; SameSite=Strict` session cookie and, in the body, the panel key — a session of
 * the passkey's owner, marked as signed in with a passkey (it may add and remove passkeys).
 *
 * The same guards as the token login: a browser Origin must be one of ours (and it names the relying
 * party: `http://localhost:PORT` or public_url), JSON bodies only, and each check goes through the login gate
 * (at most 4 at a time, a refusal answered after 1 s).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpRoute } from '../http/index.js';
import { BODY_MAX, json, type LoginDeps, ownOrigin, readBody, refuse, viaPublicUrl } from './login.js';
import type { PasskeyCeremonies } from './passkey-ceremonies.js';

/** A sign-in answer is a few KiB of base64url. */
const ANSWER_MAX = 16 * 1024;

function relyingParty(desk: PasskeyCeremonies, deps: LoginDeps, req: IncomingMessage, res: ServerResponse) {
  if (!ownOrigin(deps.ctx, req)) {
    refuse(req, res, 403, 'Forbidden', 'Origin: passkeys sign in from the daemon’s own pages only');
    return undefined;
  }
  const rp = desk.relyingParty(req.headers.origin);
  if (!rp.ok) {
    refuse(req, res, 400, 'BadRequest', rp.why);
    return undefined;
  }
  return rp.rp;
}

async function jsonBody(req: IncomingMessage, res: ServerResponse, max: number): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    refuse(req, res, 415, 'BadRequest', 'Content-Type must be application/json');
    return undefined;
  }
  const text = await readBody(req, max);
  if (text === undefined) {
    res.once('finish', () => req.destroy());
    refuse(req, res, 413, 'BadRequest', `body must be at most ${max} bytes`, { Connection: 'close' });
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    refuse(req, res, 400, 'BadRequest', 'body must be JSON');
    return undefined;
  }
}

async function signIn(desk: PasskeyCeremonies, deps: LoginDeps, req: IncomingMessage, res: ServerResponse) {
  const { ctx, sessions, throttle } = deps;
  const rp = relyingParty(desk, deps, req, res);
  if (rp === undefined) return;
  const body = await jsonBody(req, res, ANSWER_MAX);
  if (body === undefined) return;
  const response = (body as { response?: unknown }).response;
  if (
    response === null ||
    typeof response !== 'object' ||
    typeof (response as { id?: unknown }).id !== 'string'
  ) {
    refuse(req, res, 400, 'BadRequest', 'body must be {"response": <the browser’s WebAuthn answer>}');
    return;
  }
  const address = req.socket.remoteAddress ?? 'unknown';
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  // The WebAuthn check is async; the gate's slot is held for it, and its verdict decides the outcome.
  const verdict = await desk.signIns.verify(response as { id: string }, rp, new Date().toISOString());
  const cred = verdict.ok ? ctx.tokens.ownerCredential(verdict.owner) : undefined;
  const outcome = await throttle.attempt(() => {
    if (cred !== undefined) return true;
    ctx.broker.audit({
      at: new Date().toISOString(),
      actor: { kind: 'owner', name: 'owner:browser' },
      action: 'owner_login_refused',
      detail: { address, via: 'passkey' },
    });
    ctx.log.log('warn', 'owner_login_refused', { address, via: 'passkey' });
    return false;
  }, gone.signal);
  if (outcome === 'gone') return;
  if (outcome === 'busy') {
    refuse(req, res, 503, 'TooManyAttempts', 'the daemon is checking other login attempts: try again', {
      'Retry-After': String(throttle.retryAfterS()),
    });
    return;
  }
  if (outcome === 'refused' || cred === undefined) {
    refuse(req, res, 401, 'Unauthorized', verdict.ok ? 'that owner no longer exists' : verdict.why);
    return;
  }
  const session = sessions.create(cred, 'passkey');
  ctx.log.log('info', 'owner_login', { address, owner: cred.name, via: 'passkey' });
  json(
    req,
    res,
    200,
    { ok: true, key: session.key },
    { 'Set-Cookie': sessions.cookie(session.id, viaPublicUrl(ctx, req)) },
  );
}

/** `POST /login/passkey/options` and `POST /login/passkey`. */
export function passkeyLoginRoutes(deps: LoginDeps, desk: PasskeyCeremonies): HttpRoute[] {
  return [
    async (req, res, url) => {
      if (req.method !== 'POST') return false;
      if (url.pathname === '/login/passkey/options') {
        const rp = relyingParty(desk, deps, req, res);
        if (rp === undefined) return true;
        if ((await jsonBody(req, res, BODY_MAX)) === undefined) return true;
        json(req, res, 200, { options: await desk.signIns.options(rp) });
        return true;
      }
      if (url.pathname === '/login/passkey') {
        await signIn(desk, deps, req, res);
        return true;
      }
      return false;
    },
  ];
}
