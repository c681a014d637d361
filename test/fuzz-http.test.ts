/**
 * Fuzzing the daemon's HTTP front (issue 6 item 4; contract 3 and 5): generated requests with hostile
 * paths, methods, Host, Origin, Authorization, cookies and content types, plus upgrade attempts. Each
 * gets a 4xx (never a 5xx, never a hang), no answer echoes a token, nothing is queued, and the daemon
 * keeps answering. A foreign Host is always 403 whatever else the request carries (DNS rebinding).
 */
import { request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { FUZZ_SEED } from './helpers/fuzz.js';
import { commandCount, echoConfig } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';

const RUNS = 400;

interface Reply {
  status: number;
  body: string;
}

/** One raw request (any Host, any header); resolves the status and body, or the upgrade status. */
function send(
  d: RunningDaemon,
  opts: { method: string; path: string; headers: Record<string, string>; body?: string; upgrade?: boolean },
): Promise<Reply> {
  const url = new URL(d.url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      method: opts.method,
      path: opts.path,
      headers: opts.upgrade
        ? {
            Connection: 'Upgrade',
            Upgrade: 'websocket',
            'Sec-WebSocket-Version': '13',
            'Sec-WebSocket-Key': 'MDEyMzQ1Njc4OWFiY2RlZg==',
            ...opts.headers,
          }
        : opts.headers,
      setHost: !('Host' in opts.headers),
      agent: false,
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer to ${opts.method} ${opts.path}`)));
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

// Header values node will put on the wire: printable ASCII only.
const headerText = fc.oneof(
  fc.string({ maxLength: 60 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  fc.constantFrom('', ' ', 'null', 'Bearer', 'Bearer ', 'Basic YTpi', 'bearer x y', '%00', '../..', '*'),
);

describe('[c3.2.bad-input] [c5.host] hostile HTTP requests and upgrades', () => {
  let d: RunningDaemon;
  let owner: OwnerSocket;

  beforeAll(async () => {
    d = await startDaemon({ config: echoConfig() });
    owner = await OwnerSocket.open(d);
  });
  afterAll(async () => {
    await owner?.close();
    await d?.stop();
  });

  it(`${RUNS} generated requests: never a 5xx or a hang, no token echoed, nothing queued`, async () => {
    const port = new URL(d.url).port;
    const arb = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE'),
      path: fc.oneof(
        fc.constantFrom(
          '/mcp',
          '/mcp/',
          '/mcp/x',
          '/mcp/%ZZ',
          '/mcp/%00',
          '/mcp/../owner/ws',
          '/owner/ws',
          '/login',
          '//',
          '/?a=1',
          '/%2e%2e/',
          '/mcp?token=x',
        ),
        fc.webPath(),
      ),
      host: fc.oneof(
        fc.constant(`127.0.0.1:${port}`),
        fc.constant(`localhost:${port}`),
        fc.constantFrom(
          'evil.example',
          `127.0.0.1:${Number(port) + 1}`,
          '127.0.0.1',
          '',
          `attacker.com:${port}`,
        ),
        headerText,
      ),
      origin: fc.option(
        fc.oneof(fc.constantFrom('null', 'http://evil.example', `http://127.0.0.1:${port}`), headerText),
      ),
      authorization: fc.option(
        fc.oneof(headerText, fc.constant('Bearer <mcp>'), fc.constant('Bearer <owner>')),
      ),
      contentType: fc.option(
        fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x', ''),
      ),
      accept: fc.option(fc.constantFrom('application/json, text/event-stream', '*/*', 'text/html')),
      body: fc.option(
        fc.oneof(
          fc.json(),
          fc.string({ maxLength: 200 }),
          fc.constant(
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command_wait","arguments":{"command":"echo","args":{"word":"x"}}}}',
          ),
        ),
      ),
      upgrade: fc.boolean(),
    });
    const secrets = [d.ownerToken, d.mcpToken];
    const cases = fc.sample(arb, { numRuns: RUNS, seed: FUZZ_SEED + 11 });
    let foreign = 0;
    for (const c of cases) {
      const headers: Record<string, string> = { Host: c.host };
      if (c.origin !== null) headers.Origin = c.origin;
      if (c.authorization !== null)
        headers.Authorization = c.authorization.replace('<mcp>', d.mcpToken).replace('<owner>', d.ownerToken);
      if (c.contentType !== null) headers['Content-Type'] = c.contentType;
      if (c.accept !== null) headers.Accept = c.accept;
      const what = `${c.upgrade ? 'UPGRADE GET' : c.method} ${c.path} ${JSON.stringify(headers).slice(0, 160)}`;
      const r = await send(d, {
        method: c.upgrade ? 'GET' : c.method,
        path: c.path,
        headers,
        ...(c.body !== null && !c.upgrade && c.method !== 'GET' && c.method !== 'HEAD'
          ? { body: c.body }
          : {}),
        upgrade: c.upgrade,
      }).catch((e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      });
      expect(r.status, what).toBeGreaterThanOrEqual(c.upgrade ? 101 : 200);
      expect(r.status, `${what} → ${r.status} ${r.body.slice(0, 200)}`).toBeLessThan(500);
      for (const s of secrets) expect(r.body.includes(s), `${what} echoed a token`).toBe(false);
      const ownHost = c.host === `127.0.0.1:${port}` || c.host === `localhost:${port}`;
      if (!ownHost) {
        foreign++;
        expect(r.status, `${what}: a foreign Host must be refused`).toBe(403);
      }
    }
    expect(foreign).toBeGreaterThan(RUNS / 4);
    // Some bodies were valid tool calls without a session: still nothing queued, nobody told.
    expect(commandCount(d)).toBe(0);
    expect(owner.frames.filter((f) => f.type === 'upsert')).toEqual([]);
    expect(owner.closeCode).toBeUndefined();
    const health = await send(d, { method: 'GET', path: '/', headers: {} });
    expect(health.status).toBe(200);
    expect(d.child.exitCode).toBeNull();
  });
});
