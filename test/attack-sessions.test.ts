/**
 * One MCP client must not lock out another (contract 3.2: "One client has at most 64 open MCP sessions: its
 * 65th evicts its own least recently used one, never another client's"). Client `evil` (a second real
 * token, from the real CLI) opens more than a thousand sessions over real HTTP, then floods one session
 * with waiting calls; `local`'s SDK client, connected first and idle all along, keeps its session and is
 * served throughout.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, echoConfig, httpClient, makeClientToken, structured, TestOwner } from './helpers/mcp.js';
import { initializeBody, postMcp, type RawPostAnswer } from './helpers/raw-mcp.js';

const PROTOCOL = '2025-06-18';
const INIT = initializeBody('evil');

let d: RunningDaemon;
let local: Client;
let evilToken: string;

beforeAll(async () => {
  d = await startDaemon({ config: echoConfig() });
  local = await httpClient(d.info.mcp_url, d.mcpToken);
  evilToken = await makeClientToken(d, 'evil');
});

afterAll(async () => {
  await local?.close();
  await d?.stop();
});

/** A raw POST /mcp as `evil` on its own connection. */
function post(body: string, headers: Record<string, string> = {}): Promise<RawPostAnswer> {
  return postMcp(d.info.mcp_url, evilToken, body, headers);
}

/** Opens one session as `evil` (initialize, then initialized); resolves its id, or the refusal status. */
async function openEvilSession(): Promise<string | number> {
  const r = await post(INIT);
  if (r.status !== 200) return r.status;
  const sid = String(r.headers['mcp-session-id']);
  await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
    'mcp-session-id': sid,
    'mcp-protocol-version': PROTOCOL,
  });
  return sid;
}

/** The status of a tools/list on an `evil` session: 200 while it is open, 404 once evicted. */
async function evilListStatus(sid: string): Promise<number> {
  const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }), {
    'mcp-session-id': sid,
    'mcp-protocol-version': PROTOCOL,
  });
  return r.status;
}

describe('[c3.2.sessions-per-client] one client cannot evict or starve another', () => {
  it("[c3.2.sessions-per-client] evil's 1,001 sessions evict only its own: at most 64 stay open, local's idle session keeps working", async () => {
    const localSession = (local as unknown as { transport: StreamableHTTPClientTransport }).transport
      .sessionId;
    expect(localSession).toBeTruthy();
    expect(structured(await call(local, 'list_commands', {})).commands).toHaveLength(1);

    // More than the old shared cap of 1,000, in batches of 25 parallel initializes.
    const evil: string[] = [];
    for (let batch = 0; batch < 41; batch++) {
      const got = await Promise.all(Array.from({ length: batch === 40 ? 1 : 25 }, openEvilSession));
      for (const g of got) {
        // Every initialize finds room: each of evil's sessions is idle, so its own oldest makes way.
        expect(g).toEqual(expect.any(String));
        evil.push(g as string);
      }
    }
    expect(evil).toHaveLength(1001);

    // local's session, the least recently used of all, is untouched and serves the same SDK client.
    const r = await call(local, 'run_command_wait', {
      command: 'echo',
      args: { word: 'stillhere' },
      wait_seconds: 0,
    });
    expect(structured(r)).toMatchObject({ status: 'PENDING' });
    expect((local as unknown as { transport: StreamableHTTPClientTransport }).transport.sessionId).toBe(
      localSession,
    );

    // evil keeps its 64 most recent sessions; every older one was evicted (404 like an unknown session).
    const recent = await Promise.all(evil.slice(-64).map(evilListStatus));
    expect(recent.every((s) => s === 200)).toBe(true);
    const older = await Promise.all(evil.slice(0, 100).map(evilListStatus));
    expect(older.every((s) => s === 404)).toBe(true);
    expect(d.stderr()).not.toMatch(/"event":"mcp_session_evicted","client":"local"/);
  }, 120_000);

  it("[c3.2.sessions-per-client] evil's flood of waiting calls is refused past its share (503) while local is served", async () => {
    const sid = await openEvilSession();
    expect(sid).toEqual(expect.any(String));
    const headers = { 'mcp-session-id': String(sid), 'mcp-protocol-version': PROTOCOL };
    const queued = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'run_command_wait',
          arguments: { command: 'echo', args: { word: 'flood' }, wait_seconds: 0 },
        },
      }),
      headers,
    );
    const id = /"pending_id\\?":\s*\\?"([A-Za-z0-9_-]+)/.exec(queued.body)?.[1];
    expect(id).toBeDefined();

    // 140 calls that each wait 90 s: more than one client may have in flight (128).
    const waits = Array.from({ length: 140 }, (_, i) =>
      post(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 100 + i,
          method: 'tools/call',
          params: { name: 'await_command_result', arguments: { pending_id: id, wait_seconds: 90 } },
        }),
        headers,
      ),
    );
    const answered: Array<{ status: number }> = [];
    for (const w of waits) void w.then((r) => answered.push(r));
    await waitFor(() => answered.length >= 12, 'the calls past the share to be refused');
    expect(answered.every((r) => r.status === 503)).toBe(true);

    // local, meanwhile, is served as usual: a new call and a new client alike.
    expect(structured(await call(local, 'list_commands', {})).commands).toHaveLength(1);
    const fresh = await httpClient(d.info.mcp_url, d.mcpToken);
    try {
      expect((await fresh.listTools()).tools).toHaveLength(5);
    } finally {
      await fresh.close();
    }

    // The owner approves: every held call gets its answer.
    const owner = await TestOwner.connect(d);
    try {
      expect(await owner.approve(id!)).toMatchObject({ ok: true });
    } finally {
      owner.close();
    }
    const all = await Promise.all(waits);
    const held = all.filter((r) => r.status === 200);
    expect(held).toHaveLength(128);
    expect(all.filter((r) => r.status === 503)).toHaveLength(12);
    for (const r of held) expect(r.body).toContain('said flood');
  }, 120_000);
});
