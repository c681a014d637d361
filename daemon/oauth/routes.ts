/**
 * The authorization server's HTTP routes (contract 15): the discovery documents, /register, /authorize,
 * /token and /revoke. The daemon's server has already checked Host (DNS rebinding). The documents and the
 * token, registration and revocation endpoints answer any browser Origin (CORS `*`, no credentials): they
 * hold nothing of the owner's and a public client in a browser (the MCP Inspector) must reach them.
 * /authorize sends the owner's browser to the consent page in the panel, `/oauth/consent#request=ID`: the
 * id rides in the fragment, out of server logs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../base/index.js';
import { sendJson } from '../http/index.js';
import { OAuthError } from './clients.js';
import type { OAuthServer } from './server.js';

const BODY_MAX = 16 * 1024;

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, mcp-protocol-version',
  'access-control-max-age': '600',
};

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, body, { pragma: 'no-cache', ...CORS, ...headers });
}

function sendError(res: ServerResponse, e: OAuthError): void {
  send(res, e.status, { error: e.code, error_description: e.message });
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** An error page for the browser when the redirect URI cannot be trusted (RFC 6749 §4.1.2.1). */
function sendPage(res: ServerResponse, status: number, message: string): void {
  const text = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Cannot connect this AI</title></head><body><h1>Cannot connect this AI</h1><p>${message.replace(/[&<>"']/g, (c) => ESCAPES[c]!)}</p></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= BODY_MAX) chunks.push(c);
      else {
        req.off('data', onData);
        req.resume();
        resolve(undefined);
      }
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new OAuthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
  const text = await readBody(req);
  if (text === undefined)
    throw new OAuthError('invalid_request', `the body must be at most ${BODY_MAX} bytes`, 413);
  return new URLSearchParams(text);
}

const CORS_PATHS = new Set([
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
  '/.well-known/oauth-authorization-server',
  '/register',
  '/token',
  '/revoke',
]);

/** The routes; `server` undefined (OAuth off) leaves every path to the next route (404). */
export function oauthRoutes(server: OAuthServer, log: Logger) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const path = url.pathname;
    const m = req.method;
    if (m === 'OPTIONS' && CORS_PATHS.has(path)) {
      res.writeHead(204, CORS);
      res.end();
      return true;
    }
    try {
      if (
        m === 'GET' &&
        (path === '/.well-known/oauth-protected-resource/mcp' ||
          path === '/.well-known/oauth-protected-resource')
      ) {
        send(res, 200, server.protectedResource());
        return true;
      }
      if (m === 'GET' && path === '/.well-known/oauth-authorization-server') {
        send(res, 200, server.authorizationServer());
        return true;
      }
      if (m === 'POST' && path === '/register') {
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'application/json')
          throw new OAuthError('invalid_client_metadata', 'Content-Type must be application/json');
        const text = await readBody(req);
        if (text === undefined)
          throw new OAuthError('invalid_client_metadata', `the body must be at most ${BODY_MAX} bytes`, 413);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          throw new OAuthError('invalid_client_metadata', 'the body must be JSON');
        }
        const answer = await server.clients.register(body);
        log.log('info', 'oauth_client_registered', { client_id: answer.client_id });
        send(res, 201, answer);
        return true;
      }
      if (m === 'GET' && path === '/authorize') {
        const out = await server.authorize(url.searchParams);
        if (out.kind === 'page') {
          log.log('info', 'oauth_authorize_refused', { reason: out.message });
          sendPage(res, out.status, out.message);
        } else {
          const location = out.kind === 'consent' ? `/oauth/consent#request=${out.id}` : out.location;
          res.writeHead(302, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
          res.end();
        }
        return true;
      }
      if (m === 'POST' && path === '/token') {
        const answer = await server.token(await formOf(req));
        send(res, 200, answer);
        return true;
      }
      if (m === 'POST' && path === '/revoke') {
        await server.revoke(await formOf(req));
        send(res, 200, {});
        return true;
      }
    } catch (e) {
      if (!(e instanceof OAuthError)) throw e;
      // The description names the field; never a token or code (they are not echoed into errors).
      log.log('info', 'oauth_refused', { path, error: e.code, reason: e.message });
      sendError(res, e);
      return true;
    }
    return false;
  };
}
