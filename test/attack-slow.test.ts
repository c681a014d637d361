/**
 * Slow-loris against the real daemon (contracts.md 5: "Every HTTP connection must send its headers within
 * 10 s and its body within 30 s"; the AI must not hang the daemon or lock the owner out). Hundreds of real
 * loopback connections send their headers or bodies a byte at a time: the daemon cuts each one (408) at its
 * deadline, yet a client that is slow but within the deadlines is served, and a real MCP client and a real
 * owner socket are served while the attack holds its connections. At the connection cap the oldest
 * connection still sending makes room for a new one; an AI holding its whole share of connections with
 * waiting tool calls still leaves room for the owner.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, echoConfig, httpClient, structured } from './helpers/mcp.js';
import { OwnerSocket, queue } from './helpers/owner.js';
import { openPanelSocket, panelLogin } from './helpers/panel.js';
import { initializeBody, postMcp, type RawPostAnswer } from './helpers/raw-mcp.js';
import { openFds, slowGroup } from './helpers/slow-client.js';

const INIT = initializeBody('slow');

let d: RunningDaemon | undefined;
const stops: Array<() => void> = [];

afterEach(async () => {
  for (const s of stops.splice(0)) s();
  await d?.stop();
  d = undefined;
});

function portOf(daemon: RunningDaemon): number {
  return Number(new URL(daemon.url).port);
}

/** The owner over the real WebSocket approves `id` and waits for its final View. */
async function approveAndFinish(owner: OwnerSocket, id: string): Promise<Record<string, unknown>> {
  const v = await owner.waitFor(
    (f) =>
      (f.type === 'upsert' && f.command.id === id) ||
      (f.type === 'snapshot' && f.commands.some((c: { id: string }) => c.id === id)),
    `the owner to see ${id}`,
  );
  const view = v.type === 'upsert' ? v.command : v.commands.find((c: { id: string }) => c.id === id);
  const reply = await owner.request({ type: 'approve', id, version: view.version });
  expect(reply).toMatchObject({ ok: true });
  return owner.upsert(id, (c) => c.status !== 'PENDING', `${id} to finish`);
}

/** A raw POST /mcp with the daemon's `local` token on its own connection. */
function rawMcp(
  daemon: RunningDaemon,
  body: string,
  headers: Record<string, string> = {},
): Promise<RawPostAnswer> {
  return postMcp(`${daemon.url}/mcp`, daemon.mcpToken, body, headers);
}

interface HeldShare {
  /** The command every held call waits on. */
  id: string;
  /** Each wait's end: its HTTP answer, or status 0 when the gate dropped its connection. */
  settled: Array<Promise<{ status: number; body: string }>>;
  /** The waits that ended so far, in the order they did. */
  answered: Array<{ status: number; body: string }>;
}

/**
 * The AI holds its share of connections: one queued `echo` and `count` concurrent 90 s
 * `await_command_result` waits on it, each on its own connection.
 */
async function holdAiShare(daemon: RunningDaemon, count: number): Promise<HeldShare> {
  const init = await rawMcp(daemon, INIT);
  expect(init.status).toBe(200);
  const session = {
    'mcp-session-id': String(init.headers['mcp-session-id']),
    'mcp-protocol-version': '2025-06-18',
  };
  await rawMcp(daemon, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), session);
  const queued = await rawMcp(
    daemon,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'run_command_wait',
        arguments: { command: 'echo', args: { word: 'held' }, wait_seconds: 0 },
      },
    }),
    session,
  );
  const id = /"pending_id\\?":\s*\\?"([A-Za-z0-9_-]+)/.exec(queued.body)?.[1];
  expect(id).toBeDefined();
  const waits = Array.from({ length: count }, (_, i) =>
    rawMcp(
      daemon,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 100 + i,
        method: 'tools/call',
        params: { name: 'await_command_result', arguments: { pending_id: id, wait_seconds: 90 } },
      }),
      session,
    ),
  );
  // Each ends as an answer, or as a connection the gate dropped: on a loaded machine a call can still be
  // sending its request when the cap is reached, and the gate then drops it rather than answer (the
  // cap counts a connection before its request is read). Both are refusals; neither is ever run.
  const settled = waits.map((w) =>
    w.then(
      (r) => ({ status: r.status, body: r.body }),
      (e: NodeJS.ErrnoException) => ({ status: 0, body: String(e.code ?? e.message) }),
    ),
  );
  const answered: Array<{ status: number; body: string }> = [];
  for (const w of settled) void w.then((r) => answered.push(r));
  return { id: id!, settled, answered };
}

/**
 * `n` wrong `POST /login`s at a time, each on its own connection, each sent again as soon as it ends
 * (a 401, a 503 busy, or a connection the daemon dropped). `refused()` counts the 401s: guesses checked.
 */
function loginFlood(daemon: RunningDaemon, n: number): { stop(): void; refused(): number } {
  const url = new URL(daemon.url);
  let stopped = false;
  let refused = 0;
  const body = JSON.stringify({ token: `wrong-${'x'.repeat(40)}` });
  const one = (): void => {
    if (stopped) return;
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/login',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        if (res.statusCode === 401) refused++;
        res.resume();
        res.on('end', () => setImmediate(one));
      },
    );
    req.on('error', () => setImmediate(one));
    req.end(body);
  };
  for (let i = 0; i < n; i++) one();
  return {
    stop: () => {
      stopped = true;
    },
    refused: () => refused,
  };
}

describe('[c5.http-deadlines] slow requests are cut at their deadlines', () => {
  it('[c5.http-deadlines] 400 byte-by-byte connections are cut (408) while an MCP client and the owner are served; slow-but-in-time clients are not', async () => {
    d = await startDaemon({ config: echoConfig() });
    const port = portOf(d);
    const host = `127.0.0.1:${port}`;
    // Headers that would take 25 s to arrive (100 bytes, one per 250 ms): past the 10 s deadline.
    const slowHeaders = slowGroup({
      port,
      count: 200,
      drip: `GET / HTTP/1.1\r\nHost: ${host}\r\nX-Pad: ${'p'.repeat(100)}\r\n\r\n`,
      tickMs: 250,
    });
    stops.push(slowHeaders.stop);
    // Complete headers at once, then a 4000-byte body at one byte per 500 ms: never done within 30 s.
    const slowBodies = slowGroup({
      port,
      count: 200,
      head: `POST /login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n`,
      drip: `{"token":"${'x'.repeat(3987)}"}`,
      tickMs: 500,
    });
    stops.push(slowBodies.stop);
    // Slow but within the deadlines: headers over about 4 s, and an initialize body over about 15 s
    // (longer than the headers deadline, shorter than the body deadline). Both must get real answers.
    const inTimeHeaders = slowGroup({
      port,
      count: 2,
      drip: `GET /login HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      tickMs: 4000 / 60,
    });
    stops.push(inTimeHeaders.stop);
    const inTimeBody = slowGroup({
      port,
      count: 2,
      head: `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${d.mcpToken}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INIT.length}\r\nConnection: close\r\n\r\n`,
      drip: INIT,
      tickMs: 15_000 / INIT.length,
    });
    stops.push(inTimeBody.stop);
    const attack = [...slowHeaders.connections, ...slowBodies.connections];
    await waitFor(() => attack.every((c) => c.sent > 0), 'every attacking connection to have begun');

    // While they are held: a real MCP client and a real owner socket are served end to end.
    const ai = await httpClient(d.info.mcp_url, d.mcpToken);
    const owner = await OwnerSocket.open(d);
    try {
      expect((await ai.listTools()).tools).toHaveLength(5);
      const id = await queue(ai, 'echo', { word: 'served' });
      const final = await approveAndFinish(owner, id);
      expect(final).toMatchObject({ status: 'SUCCEEDED' });
      const r = await call(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 });
      expect(structured(r)).toMatchObject({ status: 'SUCCEEDED', stdout: 'said served' });
    } finally {
      await ai.close();
      await owner.close();
    }
    // The body attack is still being held (its deadline is 30 s), so the clients above were served under it.
    expect(slowBodies.open().length).toBeGreaterThan(150);

    // Every attacking connection is cut by the daemon, with a 408, before it could finish its request.
    await waitFor(() => attack.every((c) => c.closed), 'the daemon to cut every slow connection', 60_000);
    for (const c of attack) {
      expect(c.finished).toBe(false);
      expect(c.received).toMatch(/^HTTP\/1\.1 408 /);
    }
    // The slow-but-in-time clients were answered normally.
    await waitFor(
      () => [...inTimeHeaders.connections, ...inTimeBody.connections].every((c) => c.closed),
      'the in-time clients to be answered',
      30_000,
    );
    for (const c of inTimeHeaders.connections) {
      expect(c.finished).toBe(true);
      expect(c.received).toMatch(/^HTTP\/1\.1 200 /);
    }
    for (const c of inTimeBody.connections) {
      expect(c.finished).toBe(true);
      expect(c.received).toMatch(/^HTTP\/1\.1 200 /);
      expect(c.received.toLowerCase()).toContain('mcp-session-id:');
    }
    // A client cut at its deadline is the client's failure, not an error of ours worth a log line each.
    expect(d.stderr()).not.toContain('"event":"http_error"');
    expect(d.child.exitCode).toBeNull();
  }, 120_000);
});

describe('[c5.http-connections] the connection cap keeps room for new clients and the owner', () => {
  it('[c5.http-connections] at the cap, the oldest connection still sending is dropped for a new one: MCP and the owner get in', async () => {
    d = await startDaemon({ config: echoConfig(), env: { OGF_BROKER_MAX_CONNECTIONS: '100' } });
    const port = portOf(d);
    const baseline = openFds(d.info.pid);
    // 300 connections, three times the cap, each dribbling headers (they would take 50 s).
    const flood = slowGroup({
      port,
      count: 300,
      drip: `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Pad: ${'p'.repeat(200)}\r\n\r\n`,
      tickMs: 250,
    });
    stops.push(flood.stop);
    // 200 of them are dropped to stay at the cap: without an answer (evicted), not by a deadline (408).
    await waitFor(() => flood.cutEarly().length >= 200, 'the daemon to shed connections past its cap');
    const shed = flood.cutEarly();
    expect(shed.filter((c) => c.received === '').length).toBeGreaterThanOrEqual(200);
    expect(openFds(d.info.pid)).toBeLessThanOrEqual(baseline + 100 + 10);

    // The daemon is full of slow connections; a new MCP client and the owner still get in.
    const ai = await httpClient(d.info.mcp_url, d.mcpToken);
    const owner = await OwnerSocket.open(d);
    try {
      const id = await queue(ai, 'echo', { word: 'room' });
      expect(await approveAndFinish(owner, id)).toMatchObject({ status: 'SUCCEEDED' });
    } finally {
      await ai.close();
      await owner.close();
    }
    expect(openFds(d.info.pid)).toBeLessThanOrEqual(baseline + 100 + 10);
    expect(d.stderr()).toContain('http_connections_shed');
    expect(d.child.exitCode).toBeNull();
  }, 90_000);

  it('[c5.http-connections] an AI holding its whole share with waiting tool calls gets 503 past it; the owner still gets in and its approval answers them', async () => {
    // 64 connections: 56 for /mcp, 8 kept for the owner's panel, login and socket.
    d = await startDaemon({ config: echoConfig(), env: { OGF_BROKER_MAX_CONNECTIONS: '64' } });
    const { id, settled, answered } = await holdAiShare(d, 70);
    // Those past the share are refused at once; the rest are held open, waiting.
    await waitFor(() => answered.length >= 14, 'the calls past the share to be refused');
    expect(answered.every((r) => r.status === 503 || r.status === 0)).toBe(true);

    // The owner still gets the panel and a socket, and its approval answers every held call.
    const page = await fetch(`${d.url}/login`);
    expect(page.status).toBe(200);
    await page.text();
    const owner = await OwnerSocket.open(d);
    try {
      expect(await approveAndFinish(owner, id)).toMatchObject({ status: 'SUCCEEDED' });
    } finally {
      await owner.close();
    }
    const all = await Promise.all(settled);
    const held = all.filter((r) => r.status === 200);
    expect(held.length).toBeGreaterThanOrEqual(40);
    expect(held.length + all.filter((r) => r.status === 503 || r.status === 0).length).toBe(70);
    for (const r of held) expect(r.body).toContain('said held');
    expect(d.child.exitCode).toBeNull();
  }, 90_000);

  it('[c5.http-connections] [c5.login-throttle] login attempts waiting in the gate never fill the owner’s share: with the AI’s share held and a login flood, the owner’s panel still gets in', async () => {
    // 64 connections: 56 for /mcp, 8 for the rest — of which waiting login attempts may hold at most half.
    d = await startDaemon({ config: echoConfig(), env: { OGF_BROKER_MAX_CONNECTIONS: '64' } });
    const login = await panelLogin(d);
    const { id, settled, answered } = await holdAiShare(d, 70);
    await waitFor(() => answered.length >= 14, 'the calls past the share to be refused');
    // 24 wrong logins at a time, each sent again the moment it ends (answered, refused or dropped).
    const flood = loginFlood(d, 24);
    stops.push(flood.stop);
    await waitFor(() => flood.refused() >= 4, 'the first wrong logins to be checked');
    const owner = await openPanelSocket(d, login);
    try {
      expect(await approveAndFinish(owner, id)).toMatchObject({ status: 'SUCCEEDED' });
    } finally {
      await owner.close();
      flood.stop();
    }
    expect((await Promise.all(settled)).filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(40);
    expect(d.child.exitCode).toBeNull();
  }, 90_000);
});
