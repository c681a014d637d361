/**
 * The reference avatar app's HTTP server (contracts.md 6): the `ogf-bridge/1` endpoint at `/ogf-bridge`,
 * the page at `/`, and the page's own state stream at `/events` (server-sent events). Loopback only:
 * it binds 127.0.0.1 and answers only Host names of loopback (DNS rebinding would otherwise let a web
 * page read the session UUID), and browser writes (`/rotate`, `/ready`) must come from its own origin.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { BridgeEndpoint, type EndpointEvent } from '../../bridge-client/endpoint.js';

export const BRIDGE_PATH = '/ogf-bridge';

export interface AvatarServerOptions {
  port: number;
  /** Where index.html, styles.css and app.js are. */
  webDir: string;
  onEvent?: (event: EndpointEvent) => void;
}

export interface AvatarServer {
  pageUrl: string;
  bridgeUrl: string;
  endpoint: BridgeEndpoint;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};
const FILES = new Set(['index.html', 'styles.css', 'app.js']);
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** What the page renders: the session UUID (for the Bridge panel), readiness and the avatar state. */
function snapshot(endpoint: BridgeEndpoint, bridgeUrl: string): string {
  return JSON.stringify({
    session_id: endpoint.sessionId,
    instance_id: endpoint.instanceId,
    ready: endpoint.ready,
    bridge_url: bridgeUrl,
    server_time: Date.now(),
    state: endpoint.state,
  });
}

/** One of the page's built files (FILES), or 404; 500 when the page was not built. */
async function serveFile(req: IncomingMessage, res: ServerResponse, url: URL, webDir: string): Promise<void> {
  const name = url.pathname === '/' ? 'index.html' : url.pathname.slice(1);
  if (!FILES.has(name)) {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found\n');
    return;
  }
  try {
    const body = await readFile(join(webDir, name));
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': TYPES[extname(name)] ?? 'application/octet-stream',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch {
    res.writeHead(500, { 'Content-Type': 'text/plain' }).end('The page is not built; run npm run build.\n');
  }
}

/** The bridge peer is a program, not a page: its path, a loopback Host, and no browser Origin but ours. */
function bridgeUpgrade(req: IncomingMessage, hosts: Set<string>, origins: Set<string>): boolean {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const origin = req.headers.origin;
  return (
    url.pathname === BRIDGE_PATH &&
    hosts.has(req.headers.host ?? '') &&
    (origin === undefined || origins.has(origin))
  );
}

/** The page's two buttons: rotate the session, or set readiness (same origin only). */
function control(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  endpoint: BridgeEndpoint,
  origins: Set<string>,
): void {
  // A cross-site form or fetch could otherwise rotate the session or pause the avatar.
  if (!origins.has(req.headers.origin ?? '')) {
    res.writeHead(403, { 'Content-Type': 'text/plain' }).end('Forbidden: wrong origin.\n');
    return;
  }
  if (url.pathname === '/rotate') endpoint.rotate();
  else endpoint.ready = url.searchParams.get('value') !== 'false';
  res.writeHead(204, SECURITY_HEADERS).end();
}

/** Listens on 127.0.0.1:`port`, rejecting when the port cannot be had. */
function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Starts the app on 127.0.0.1:`port` (0 picks a free port). */
export async function startAvatarServer(opts: AvatarServerOptions): Promise<AvatarServer> {
  const endpoint = new BridgeEndpoint(opts.onEvent ? { onEvent: opts.onEvent } : {});
  const streams = new Set<ServerResponse>();
  let port = opts.port;
  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  const ownOrigins = () => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);
  let bridgeUrl = '';

  const push = () => {
    const data = `data: ${snapshot(endpoint, bridgeUrl)}\n\n`;
    for (const res of streams) res.write(data);
  };
  endpoint.onChange(push);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowedHosts().has(req.headers.host ?? '')) {
      res
        .writeHead(403, { 'Content-Type': 'text/plain' })
        .end('Forbidden: this page is served on loopback only.\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'POST' && (url.pathname === '/rotate' || url.pathname === '/ready')) {
      control(req, res, url, endpoint, ownOrigins());
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD, POST' }).end();
      return;
    }
    if (url.pathname === '/events') {
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'Content-Type': 'text/event-stream',
        Connection: 'keep-alive',
      });
      res.write(`retry: 1000\ndata: ${snapshot(endpoint, bridgeUrl)}\n\n`);
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    if (url.pathname === '/state') {
      res
        .writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'application/json' })
        .end(snapshot(endpoint, bridgeUrl));
      return;
    }
    await serveFile(req, res, url, opts.webDir);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('upgrade', (req, socket, head) => {
    if (!bridgeUpgrade(req, allowedHosts(), ownOrigins())) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    endpoint.handleUpgrade(req, socket, head);
  });
  await listen(server, opts.port);
  port = (server.address() as AddressInfo).port;
  bridgeUrl = `ws://127.0.0.1:${port}${BRIDGE_PATH}`;
  return {
    pageUrl: `http://127.0.0.1:${port}/`,
    bridgeUrl,
    endpoint,
    async close() {
      for (const res of streams) res.end();
      await endpoint.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
