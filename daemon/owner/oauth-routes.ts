/**
 * The owner's side of OAuth (contract 15), over HTTP beside the panel: the consent page
 * (`/oauth/consent#request=ID`, a static page of the panel), its request's content and the owner's Allow /
 * Deny, and the connected clients with Disconnect. Every JSON route needs the panel session's cookie AND its
 * panel key (header `x-ogf-owner-key`), like the owner socket: a server on another 127.0.0.1 port that
 * received the cookie cannot approve a connection. POSTs also need one of the daemon's own Origins and a
 * JSON body, so a cross-site form cannot post here. The page itself may not be framed
 * (`frame-ancestors 'none'`, static.ts: clickjacking).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpRoute } from '../http/index.js';
import type { OAuthServer } from '../oauth/index.js';
import type { OwnerContext } from './context.js';
import { json, PANEL_KEY_HEADER } from './login.js';
import type { OwnerSessions } from './sessions.js';
import { sendPage } from './static.js';

const BODY_MAX = 4096;
const CONSENT_RE = /^\/owner\/oauth\/consent\/([A-Za-z0-9_-]{1,64})$/;

function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
): void {
  json(req, res, status, { error: { code, message } });
}

function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= BODY_MAX) chunks.push(c);
    });
    req.once('end', () => {
      if (size > BODY_MAX) return resolve(undefined);
      try {
        const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        resolve(
          v !== null && typeof v === 'object' && !Array.isArray(v)
            ? (v as Record<string, unknown>)
            : undefined,
        );
      } catch {
        resolve(undefined);
      }
    });
    req.once('error', () => resolve(undefined));
  });
}

/**
 * With OAuth off, the panel's list answers `enabled: false` (so the panel hides the section without a
 * failed request); nothing else of OAuth exists.
 */
export function oauthOffRoute(sessions: OwnerSessions, ctx: OwnerContext): HttpRoute {
  return (req, res, url) => {
    if (url.pathname !== '/owner/oauth/clients' || req.method !== 'GET') return false;
    const key = req.headers[PANEL_KEY_HEADER];
    const match = sessions.authenticate(req, typeof key === 'string' ? key : undefined);
    if (match === undefined || !ctx.tokens.isCurrent(match.owner))
      refuse(req, res, 401, 'Unauthorized', 'sign in to the owner panel first');
    else json(req, res, 200, { enabled: false, clients: [] });
    return true;
  };
}

/** The routes while OAuth is on. */
export function oauthOwnerRoutes(ctx: OwnerContext, sessions: OwnerSessions, oauth: OAuthServer): HttpRoute {
  /** The signed-in owner's name (cookie and panel key, still current), or undefined. */
  const ownerOf = (req: IncomingMessage): string | undefined => {
    const key = req.headers[PANEL_KEY_HEADER];
    const match = sessions.authenticate(req, typeof key === 'string' ? key : undefined);
    return match !== undefined && ctx.tokens.isCurrent(match.owner) ? match.owner.name : undefined;
  };
  const postAllowed = (req: IncomingMessage): boolean => {
    const origin = req.headers.origin;
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    return (origin === undefined || ctx.origins.isAllowedOrigin(origin)) && type === 'application/json';
  };

  return async (req, res, url) => {
    const path = url.pathname;
    const m = req.method;
    if (path === '/oauth/consent' && (m === 'GET' || m === 'HEAD')) {
      await sendPage(req, res, 'consent.html');
      return true;
    }
    if (!path.startsWith('/owner/oauth/')) return false;
    const owner = ownerOf(req);
    if (owner === undefined) {
      refuse(req, res, 401, 'Unauthorized', 'sign in to the owner panel first');
      return true;
    }
    if (m === 'POST' && !postAllowed(req)) {
      refuse(req, res, 403, 'Forbidden', 'only the panel’s own pages may post here, as application/json');
      return true;
    }
    const consent = CONSENT_RE.exec(path);
    if (consent !== null && m === 'GET') {
      const view = await oauth.consent(consent[1]!);
      if (view === undefined)
        refuse(
          req,
          res,
          404,
          'NotFound',
          'this connection request is no longer waiting (expired or decided); connect again from the AI',
        );
      else json(req, res, 200, { consent: view });
      return true;
    }
    if (consent !== null && m === 'POST') {
      const body = await readJson(req);
      const allow = body?.decision === 'allow' ? true : body?.decision === 'deny' ? false : undefined;
      const name = body?.client_name;
      if (allow === undefined || (allow && typeof name !== 'string')) {
        refuse(
          req,
          res,
          400,
          'BadMessage',
          'body must be {"decision":"allow","client_name":"<name>","inherit"?:true} or {"decision":"deny"}',
        );
        return true;
      }
      // Contract 15 (v4): `inherit: true` is the ticked box for a used name; the daemon checks it.
      const out = await oauth.decide(
        consent[1]!,
        owner,
        allow,
        typeof name === 'string' ? name : '',
        body?.inherit === true,
      );
      if ('error' in out) refuse(req, res, 400, 'BadMessage', out.error);
      else {
        ctx.log.log('info', allow ? 'oauth_consent_allowed' : 'oauth_consent_denied', { owner });
        json(req, res, 200, { ok: true, redirect: out.redirect });
      }
      return true;
    }
    if (path === '/owner/oauth/name' && m === 'GET') {
      // The card's check as the owner types (contract 15 v4): refused, or what the name would inherit.
      const name = url.searchParams.get('client_name') ?? '';
      const check = await oauth.checkName(name);
      json(req, res, 200, {
        client_name: name.slice(0, 64),
        ...(check.kind === 'refused' ? { refused: check.message } : {}),
        ...(check.kind === 'used' ? { inherits: check.inherits } : {}),
      });
      return true;
    }
    if (path === '/owner/oauth/clients' && m === 'GET') {
      const list = await oauth.list();
      json(req, res, 200, {
        enabled: true,
        clients: list.map((c) => ({
          client_name: c.client_name,
          client_id: c.client_id,
          client_id_host: c.client_host,
          redirect_host: c.redirect_host,
          connected_at: c.connected_at,
          last_used_at: c.last_used_at,
          grants: c.grants,
        })),
      });
      return true;
    }
    if (path === '/owner/oauth/disconnect' && m === 'POST') {
      const body = await readJson(req);
      const name = body?.client_name;
      const endGrants = body?.end_grants;
      if (typeof name !== 'string' || (endGrants !== undefined && typeof endGrants !== 'boolean')) {
        refuse(req, res, 400, 'BadMessage', 'body must be {"client_name":"<name>","end_grants"?:false}');
        return true;
      }
      // Contract 15 (v4): the grants end with the connection unless the owner unticked the box.
      const ended = await oauth.disconnectByName(name, owner, endGrants !== false);
      if (ended === undefined)
        refuse(
          req,
          res,
          404,
          'NotFound',
          `no connected client is named ${JSON.stringify(name.slice(0, 64))}`,
        );
      else json(req, res, 200, { ok: true, grants_ended: ended.grants_ended });
      return true;
    }
    refuse(req, res, 404, 'NotFound', 'no such owner OAuth route');
    return true;
  };
}
