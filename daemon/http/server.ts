/**
 * The daemon's one HTTP server: every request and every upgrade has its Host checked first (403,
 * DNS rebinding, contract 5), then the edges' routes are tried in order; nothing matched → 404.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpRoute, Origins, UpgradeRoute } from '../context.js';
import type { Logger } from '../log.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Answers an upgrade with a plain HTTP status and closes the socket. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({ error: reason });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
}

export interface HttpServerDeps {
  origins: Origins;
  log: Logger;
  routes: () => HttpRoute[];
  upgrades: () => UpgradeRoute[];
}

export function createHttpServer(deps: HttpServerDeps): Server {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = requestUrl(req);
    if (!deps.origins.isAllowedHost(req.headers.host))
      return sendJson(res, 403, { error: 'Host not allowed' });
    if (!url) return sendJson(res, 400, { error: 'Bad request URL' });
    try {
      for (const route of deps.routes()) if (await route(req, res, url)) return;
      if (!res.headersSent) sendJson(res, 404, { error: 'Not found' });
    } catch (e) {
      deps.log.log('error', 'http_error', {
        path: url.pathname.startsWith('/mcp/') ? '/mcp/<token>' : url.pathname,
        error: (e as Error).message,
      });
      if (!res.headersSent) sendJson(res, 500, { error: 'Internal error' });
      else res.end();
    }
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const url = requestUrl(req);
    if (!deps.origins.isAllowedHost(req.headers.host)) return refuseUpgrade(socket, 403, 'Forbidden');
    if (!url) return refuseUpgrade(socket, 400, 'Bad Request');
    for (const route of deps.upgrades()) if (route(req, socket, head, url)) return;
    refuseUpgrade(socket, 404, 'Not Found');
  });
  // Slow-loris and idle keep-alive bounds; MCP streams set their own.
  server.headersTimeout = 10_000;
  server.requestTimeout = 0;
  return server;
}
