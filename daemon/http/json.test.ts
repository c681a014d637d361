/**
 * The one JSON response writer (issue 37 item 5): its length, charset and no-store on every answer, a
 * caller's header replacing a default whatever its case (no header sent twice), and HEAD without a body.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendJson } from './json.js';

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/owned')
      sendJson(res, 404, { error: 'gone' }, { 'Cache-Control': 'no-cache', 'X-Extra': '1' });
    else sendJson(res, 200, { ok: 'é' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function call(method: string, path: string): Promise<{ status: number; raw: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, raw: res.rawHeaders, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('sendJson', () => {
  it('answers JSON with its byte length, charset and no-store', async () => {
    const r = await call('GET', '/');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ ok: 'é' });
    const h = Object.fromEntries(
      r.raw.flatMap((v, i) => (i % 2 === 0 ? [[v.toLowerCase(), r.raw[i + 1]]] : [])),
    );
    expect(h['content-type']).toBe('application/json; charset=utf-8');
    expect(h['content-length']).toBe(String(Buffer.byteLength(r.body)));
    expect(h['cache-control']).toBe('no-store');
  });

  it("lets a caller's header replace a default whatever its case, sent once", async () => {
    const r = await call('GET', '/owned');
    expect(r.status).toBe(404);
    const names = r.raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(names.filter((n) => n === 'cache-control')).toHaveLength(1);
    expect(r.raw[r.raw.findIndex((n) => n.toLowerCase() === 'cache-control') + 1]).toBe('no-cache');
    expect(names).toContain('x-extra');
  });

  it('answers HEAD with the headers and no body', async () => {
    const r = await call('HEAD', '/');
    expect(r.status).toBe(200);
    expect(r.body).toBe('');
  });
});
