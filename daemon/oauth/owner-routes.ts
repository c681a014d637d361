/**
 * The owner's side of OAuth (contract 15), over HTTP beside the panel: the consent page
 * (`/oauth/consent#request=ID`, a static page of the panel), its request's content and the owner's Allow /
 * Deny, and the connected clients with Disconnect. Every JSON route needs the panel session's cookie AND its
 * panel key (header `x-ogf-owner-key`), like the owner socket: a server on another 127.0.0.1 port that
 * received the cookie cannot approve a connection. POSTs also need one of the daemon's own Origins and a
 * JSON body, so a cross-site form cannot post here. The page itself may not be framed
 * (`frame-ancestors 'none'`, owner/static.ts: clickjacking).
 *
 * They are OAuth's, so they live here; who is signed in and how the panel answers are the owner edge's, which
 * lends them (OwnerDoor, built in owner/edge.ts): the edge imports OAuth, never the other way round.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../base/index.js';
import type { HttpRoute } from '../http/index.js';
import type { OAuthServer } from './server.js';

/** What the owner edge lends these routes: who is signed in, and how the panel's pages answer. */
export interface OwnerDoor {
  /** The signed-in owner's name (the panel session's cookie and panel key, its token still current). */
  ownerOf(req: IncomingMessage): string | undefined;
  /** Whether a browser Origin is one of the daemon's own. */
  isAllowedOrigin(origin: string): boolean;
  /** Sends JSON with the panel's security headers. */
  json(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void;
  /** Serves the consent page, a static page of the panel. */
  consentPage(req: IncomingMessage, res: ServerResponse): Promise<void>;
  log: Logger;
}

const BODY_MAX = 4096;
const CONSENT_RE = /^\/owner\/oauth\/consent\/([A-Za-z0-9_-]{1,64})$/;

function refuse(
  door: OwnerDoor,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
): void {
  door.json(req, res, status, { error: { code, message } });
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
export function oauthOffRoute(door: OwnerDoor): HttpRoute {
  return (req, res, url) => {
    if (url.pathname !== '/owner/oauth/clients' || req.method !== 'GET') return false;
    if (door.ownerOf(req) === undefined)
      refuse(door, req, res, 401, 'Unauthorized', 'sign in to the owner panel first');
    else door.json(req, res, 200, { enabled: false, clients: [] });
    return true;
  };
}

/** One signed-in owner's request to an `/owner/oauth/` route. */
interface OwnerCall {
  door: OwnerDoor;
  oauth: OAuthServer;
  owner: string;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
}

/** The routes while OAuth is on. */
export function oauthOwnerRoutes(door: OwnerDoor, oauth: OAuthServer): HttpRoute {
  return async (req, res, url) => {
    const path = url.pathname;
    const m = req.method;
    if (path === '/oauth/consent' && (m === 'GET' || m === 'HEAD')) {
      await door.consentPage(req, res);
      return true;
    }
    if (!path.startsWith('/owner/oauth/')) return false;
    const owner = door.ownerOf(req);
    if (owner === undefined) {
      refuse(door, req, res, 401, 'Unauthorized', 'sign in to the owner panel first');
      return true;
    }
    if (m === 'POST' && !postAllowed(door, req)) {
      const message = 'only the panel’s own pages may post here, as application/json';
      refuse(door, req, res, 403, 'Forbidden', message);
      return true;
    }
    const call: OwnerCall = { door, oauth, owner, req, res, url };
    const consent = CONSENT_RE.exec(path);
    if (consent !== null && m === 'GET') await showConsent(call, consent[1]!);
    else if (consent !== null && m === 'POST') await decideConsent(call, consent[1]!);
    else if (path === '/owner/oauth/name' && m === 'GET') await checkName(call);
    else if (path === '/owner/oauth/clients' && m === 'GET') await listClients(call);
    else if (path === '/owner/oauth/disconnect' && m === 'POST') await disconnect(call);
    else refuse(door, req, res, 404, 'NotFound', 'no such owner OAuth route');
    return true;
  };
}

/** A POST from one of the daemon's own pages (or no browser at all), as JSON: no cross-site form. */
function postAllowed(door: OwnerDoor, req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return (origin === undefined || door.isAllowedOrigin(origin)) && type === 'application/json';
}

/** The consent page's content: what is asking to connect. */
async function showConsent({ door, oauth, req, res }: OwnerCall, id: string): Promise<void> {
  const view = await oauth.consent(id);
  if (view !== undefined) door.json(req, res, 200, { consent: view });
  else {
    const message =
      'this connection request is no longer waiting (expired or decided); connect again from the AI';
    refuse(door, req, res, 404, 'NotFound', message);
  }
}

/** The owner's Allow (with the client's name) or Deny on the consent page. */
async function decideConsent({ door, oauth, owner, req, res }: OwnerCall, id: string): Promise<void> {
  const body = await readJson(req);
  const allow = body?.decision === 'allow' ? true : body?.decision === 'deny' ? false : undefined;
  const name = body?.client_name;
  if (allow === undefined || (allow && typeof name !== 'string')) {
    const message =
      'body must be {"decision":"allow","client_name":"<name>","inherit"?:true} or {"decision":"deny"}';
    refuse(door, req, res, 400, 'BadMessage', message);
    return;
  }
  // Contract 15 (v4): `inherit: true` is the ticked box for a used name; the daemon checks it.
  const clientName = typeof name === 'string' ? name : '';
  const out = await oauth.decide(id, owner, allow, clientName, body?.inherit === true);
  if ('error' in out) refuse(door, req, res, 400, 'BadMessage', out.error);
  else {
    door.log.log('info', allow ? 'oauth_consent_allowed' : 'oauth_consent_denied', { owner });
    door.json(req, res, 200, { ok: true, redirect: out.redirect });
  }
}

/** The card's check as the owner types (contract 15 v4): refused, or what the name would inherit. */
async function checkName({ door, oauth, req, res, url }: OwnerCall): Promise<void> {
  const name = url.searchParams.get('client_name') ?? '';
  const check = await oauth.checkName(name);
  door.json(req, res, 200, {
    client_name: name.slice(0, 64),
    ...(check.kind === 'refused' ? { refused: check.message } : {}),
    ...(check.kind === 'used' ? { inherits: check.inherits } : {}),
  });
}

/** The connected clients, for the panel's list. */
async function listClients({ door, oauth, req, res }: OwnerCall): Promise<void> {
  const list = await oauth.list();
  door.json(req, res, 200, {
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
}

/** Disconnect: the client's tokens end, and its grants unless the owner unticked the box. */
async function disconnect({ door, oauth, owner, req, res }: OwnerCall): Promise<void> {
  const body = await readJson(req);
  const name = body?.client_name;
  const endGrants = body?.end_grants;
  if (typeof name !== 'string' || (endGrants !== undefined && typeof endGrants !== 'boolean')) {
    refuse(door, req, res, 400, 'BadMessage', 'body must be {"client_name":"<name>","end_grants"?:false}');
    return;
  }
  // Contract 15 (v4): the grants end with the connection unless the owner unticked the box.
  const ended = await oauth.disconnectByName(name, owner, endGrants !== false);
  if (ended !== undefined) door.json(req, res, 200, { ok: true, grants_ended: ended.grants_ended });
  else {
    const message = `no connected client is named ${JSON.stringify(name.slice(0, 64))}`;
    refuse(door, req, res, 404, 'NotFound', message);
  }
}
