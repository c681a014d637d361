/**
 * The daemon's one HTTP server: every request and every upgrade has its Host checked first (403,
 * DNS rebinding, contract 5), then the edges' routes are tried in order; nothing matched → 404.
 *
 * Deadlines (contract 5: "Every HTTP connection must send its headers within 10 s and its body within
 * 30 s"): Node's `headersTimeout` and `requestTimeout`, both counted from a request's first byte and both
 * about *receiving* it — Node stops the clock once the request is complete, so a tool call may keep its
 * response open for its 90 s wait (checked by experiment on Node 20). A request past either gets 408 and
 * its connection is closed. Node checks the clocks every `connectionsCheckingInterval` (30 s by default,
 * which would let a 10 s deadline run to 40 s), so we check every second. How many connections, and which
 * give way, is ./connections.ts.
 *
 * Idle keep-alive connections: the client closes them, not the daemon (test/http-keepalive.test.ts). A
 * client reuses a pooled connection until its own idle clock runs out: Node's fetch (both MCP SDKs) the
 * daemon's `Keep-Alive: timeout=N` hint minus 2 s, on timers that wait for its event loop; the proxies
 * docs/clients.md names for 60–120 s whatever the hint says (nginx 60 s, Cloudflare Tunnel 90 s, Caddy
 * 120 s). Node's 5 s default closed connections under busy SDK clients and under every such proxy: the
 * next call died with `other side closed`, lost unless the client retried a POST. An idle connection costs
 * a descriptor and is the first to give way when the daemon is full (connections.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../base/index.js';
import { ConnectionGate, type ConnectionLimits, isAiPath } from './connections.js';
import type { HttpRoute, Origins, UpgradeRoute } from './edge.js';
import type { Flight } from './flight.js';
import { sendJson } from './json.js';

export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** Past the longest idle pool above (Caddy's 120 s). */
export const KEEP_ALIVE_TIMEOUT_MS = 130_000;

/** Answers an upgrade with a plain HTTP status and closes the socket. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({ error: reason });
  // Destroyed once written: a peer that never closes its side must not keep a half-open socket.
  socket.once('finish', () => socket.destroy());
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
  /** How many connections, and of them how many for /mcp (connections.ts: connectionLimits). */
  limits: ConnectionLimits;
  /** The requests in flight, and whether the daemon still takes them (flight.ts: a clean stop). */
  flight?: Flight;
}

/** Whether a request asks for its connection to close after the answer (HTTP/1.0 unless it asks keep-alive). */
function asksClose(req: IncomingMessage): boolean {
  const options = (req.headers.connection ?? '')
    .toLowerCase()
    .split(',')
    .map((o) => o.trim());
  return req.httpVersion === '1.0' ? !options.includes('keep-alive') : options.includes('close');
}

/** The server, with its deadlines and connection gate (its limits: connections.ts). */
export function createHttpServer(deps: HttpServerDeps): Server {
  const limits = deps.limits;
  const gate = new ConnectionGate(limits, deps.log);
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
    },
    async (req: IncomingMessage, res: ServerResponse) => {
      // RFC 9112 9.6: a client that said `close` is closed after its answer, whatever the answer's headers
      // say (the MCP SDK marks its answers `Connection: keep-alive`, and Node then keeps the connection).
      if (asksClose(req)) res.once('finish', () => req.socket.end());
      if (deps.flight?.stopping)
        return sendJson(res, 503, { error: 'The daemon is stopping' }, { connection: 'close' });
      deps.flight?.track(req, res);
      const url = requestUrl(req);
      if (!deps.origins.isAllowedHost(req.headers.host))
        return sendJson(res, 403, { error: 'Host not allowed' });
      if (!url) return sendJson(res, 400, { error: 'Bad request URL' });
      if (!gate.request(req, res, isAiPath(url.pathname))) {
        return sendJson(
          res,
          503,
          { error: 'Too many open MCP connections; try again shortly.' },
          { 'retry-after': '5', connection: 'close' },
        );
      }
      try {
        for (const route of deps.routes()) if (await route(req, res, url)) return;
        if (!res.headersSent) sendJson(res, 404, { error: 'Not found' });
      } catch (e) {
        // A client that went away mid-request (a deadline, an eviction, a reset) is not our error.
        if (!(req.destroyed && !req.complete)) {
          deps.log.log('error', 'http_error', {
            path: url.pathname.startsWith('/mcp/') ? '/mcp/<token>' : url.pathname,
            error: (e as Error).message,
          });
        }
        if (!res.headersSent) sendJson(res, 500, { error: 'Internal error' });
        else res.end();
      }
    },
  );
  gate.attach(server);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const url = requestUrl(req);
    if (!deps.origins.isAllowedHost(req.headers.host)) return refuseUpgrade(socket, 403, 'Forbidden');
    if (!url) return refuseUpgrade(socket, 400, 'Bad Request');
    for (const route of deps.upgrades()) {
      if (route(req, socket, head, url)) {
        // A route that refused has ended the socket already; one still open now belongs to a WebSocket.
        if (!socket.writableEnded && !socket.destroyed) gate.upgraded(socket as Socket);
        return;
      }
    }
    refuseUpgrade(socket, 404, 'Not Found');
  });
  // After listening, a server error (accept failing when descriptors run out) is logged, never fatal:
  // the daemon keeps serving what it holds and accepts again once descriptors free up.
  server.once('listening', () => {
    server.on('error', (e: NodeJS.ErrnoException) =>
      deps.log.log('error', 'http_server_error', { code: e.code, error: e.message }),
    );
  });
  return server;
}
