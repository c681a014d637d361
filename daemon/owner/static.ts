/**
 * Serves the panel's files (`owner-ui/` bundled by vite into `dist/owner-ui/`: vite.panel.config.ts; each
 * page in its entry's folder, the scripts, styles and icons flat beside them) with a strict Content Security
 * Policy: scripts and styles only from our own origin, no inline script or style, no framing, and
 * WebSocket connections only back to the host the page came from (contracts.md 5, issue 4).
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';

/** `dist/owner-ui` when running the built daemon (this file is `dist/daemon/owner/static.js`). */
export const UI_DIR = resolve(import.meta.dirname, '..', '..', 'owner-ui');

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  webmanifest: 'application/manifest+json',
};

/** Asset names are plain file names: no directories, so no path can climb out of UI_DIR. */
const ASSET_RE = /^[a-z0-9][a-z0-9-]*\.(js|css|svg|png)$/;

/** The CSP for a page served on `host` (already checked by the server against the allowed hosts). */
export function contentSecurityPolicy(host: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ws://${host} wss://${host}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers every panel response carries. */
export function securityHeaders(req: IncomingMessage): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(req.headers.host ?? '127.0.0.1'),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
}

async function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  status = 200,
): Promise<void> {
  const ext = name.slice(name.lastIndexOf('.') + 1);
  let body: Buffer;
  try {
    body = await readFile(join(UI_DIR, name));
  } catch {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...securityHeaders(req) });
    res.end(`not found: ${name} (run npm run build)\n`);
    return;
  }
  res.writeHead(status, {
    'Content-Type': TYPES[ext] ?? 'application/octet-stream',
    'Content-Length': String(body.length),
    ...securityHeaders(req),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Where each page sits in the bundle: one folder per entry (issue 37 item 6). */
const PAGES = {
  'index.html': 'panel/index.html',
  'login.html': 'login/login.html',
  'consent.html': 'consent/consent.html',
} as const;

/** Serves a page (index.html, login.html, consent.html). */
export function sendPage(req: IncomingMessage, res: ServerResponse, page: keyof typeof PAGES): Promise<void> {
  return sendFile(req, res, PAGES[page]);
}

/**
 * The installable panel's two files at the origin's root (contract 13.2): the manifest, and the service
 * worker, whose scope is the folder it is served from — so `/sw.js`, not `/ui/sw.js`. Neither holds
 * anything of a command or an owner: they are served like the panel's other files, without a session.
 */
const ROOT_FILES: Record<string, string> = {
  '/manifest.webmanifest': 'manifest.webmanifest',
  '/sw.js': 'sw.js',
};

/** Serves `/ui/<asset>`, the manifest and the service worker; returns false for any other path. */
export async function serveAsset(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const root = ROOT_FILES[url.pathname];
  if (root !== undefined) {
    await sendFile(req, res, root);
    return true;
  }
  if (!url.pathname.startsWith('/ui/')) return false;
  const name = url.pathname.slice('/ui/'.length);
  if (!ASSET_RE.test(name)) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...securityHeaders(req) });
    res.end('not found\n');
    return true;
  }
  await sendFile(req, res, name);
  return true;
}
