/**
 * Idle keep-alive connections (c5.http-keepalive): the daemon must not be the first to close a connection
 * its clients still hold. A client that pools connections (Node's fetch, which both MCP SDKs use; a tunnel
 * or reverse proxy in front of the daemon: docs/clients.md) sends its next request on a pooled socket; if
 * the daemon closed that socket an instant before, the request dies with `fetch failed: other side closed`
 * — a tool call lost for no reason, which a client may not retry (a POST is not idempotent). Node's fetch
 * keeps a socket for the daemon's `Keep-Alive: timeout=N` hint minus 2 s, on timers that run only when its
 * event loop does: a busy client (a test parsing a 10 MiB snapshot, a proxy under load) reuses late.
 *
 * Found as a flake of attack-owner-frames (the MCP client's call after the snapshot checks). Reproduced
 * here: a real daemon, a real SDK client of each generation over HTTP whose event loop is busy while an
 * answer arrives (its clock starts late) and again when the daemon's old 5 s idle timeout passes, then the
 * next call on the same pooled connection — `fetch failed: other side closed` with the 5 s timeout.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { echoConfig, GENERATIONS, httpClient } from './helpers/mcp.js';

let d: RunningDaemon;

beforeAll(async () => {
  d = await startDaemon({ config: echoConfig() });
});

afterAll(async () => {
  await d?.stop();
});

/** Holds this process's event loop for `ms`: nothing of the client runs, as on a busy machine. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

/** The daemon's `Keep-Alive` header on an ordinary response (`undefined` when it sends none). */
function keepAliveHint(): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL('/', d.url),
      { agent: false, headers: { connection: 'keep-alive' } },
      (res) => {
        res.resume();
        resolve(String(res.headers['keep-alive']));
        req.destroy();
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A raw HTTP/1.1 exchange that says `Connection: close` and never closes its own side: what it received, and whether the daemon closed it. */
function askingClose(head: string, body = ''): { received: () => string; closed: () => boolean } {
  let received = '';
  let closed = false;
  const socket = connect(Number(new URL(d.url).port), '127.0.0.1', () => {
    socket.write(
      `${head}Host: ${new URL(d.url).host}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  socket.setEncoding('utf8');
  socket.on('data', (t: string) => {
    received += t;
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    closed = true;
  });
  return { received: () => received, closed: () => closed };
}

describe('[c5.http-keepalive] a client that says Connection: close is closed after its answer (RFC 9112 9.6)', () => {
  it('[c5.http-keepalive] an MCP initialize (whose SSE answer the SDK marks keep-alive) and a page are answered, then closed', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const mcp = askingClose(
      `POST /mcp HTTP/1.1\r\nAuthorization: Bearer ${d.mcpToken}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n`,
      init,
    );
    const page = askingClose('GET /login HTTP/1.1\r\n');
    // Well inside the idle timeout: only the client's `close` can end these.
    await waitFor(() => mcp.closed() && page.closed(), 'the daemon to close both connections', 20_000);
    expect(mcp.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(mcp.received()).toContain('"protocolVersion"');
    expect(page.received()).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('[c5.http-keepalive] the daemon does not close a pooled connection under a client', () => {
  it('[c5.http-keepalive] advertises an idle timeout longer than the proxies the docs name keep theirs (120 s)', async () => {
    const hint = await keepAliveHint();
    const seconds = Number(/^timeout=(\d+)/.exec(hint ?? '')?.[1]);
    expect(seconds, `Keep-Alive: ${hint}`).toBeGreaterThan(120);
  });

  for (const generation of GENERATIONS) {
    it(`[c5.http-keepalive] a ${generation} client that reads an answer late and calls again 7 s later on the same connection is answered`, async () => {
      const client = await httpClient(d.info.mcp_url, d.mcpToken, generation);
      try {
        const t0 = Date.now();
        const first = client.listTools();
        await new Promise((r) => setTimeout(r, 100)); // the call is sent; the daemon answers at once
        // The answer waits in the socket while the client is busy: its keep-alive clock (hint − 2 s)
        // starts 5 s after the daemon's.
        busy(5_000);
        expect((await first).tools.length).toBeGreaterThan(0);
        // 7 s after the answer left: past the old 5 s (closed by ~6 s), not past the client's clock (~8 s).
        busy(t0 + 7_000 - Date.now());
        expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      } finally {
        await client.close();
      }
    }, 30_000);
  }
});
