/**
 * The daemon's one JSON response writer (issue 37 item 5): the HTTP server's own refusals, /mcp's JSON-RPC
 * errors, the OAuth endpoints and the owner routes all answer through it, so every JSON answer carries its
 * length, `no-store` and its charset the same way, and a HEAD request gets the headers without the body.
 */
import type { ServerResponse } from 'node:http';

/** Writes `body` as JSON with `status`; `headers` are added (and win over the defaults, whatever their case). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  const all: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
  };
  for (const [name, value] of Object.entries(headers)) all[name.toLowerCase()] = value;
  res.writeHead(status, all);
  res.end(res.req?.method === 'HEAD' ? undefined : text);
}
