/**
 * The per-client bound on requests in flight holds for the 2026-07-28 generation too ([c3.2.sessions-per-client];
 * contract 3.2: one client cannot evict or starve another; contract 10: both generations see the same rules).
 * A 2026-07-28 client has no session, so the 2025 path's count of a session's busy requests never saw its
 * calls: client `evil` (a second real token from the real CLI) sent 300 parallel 2026-07-28 waits and took
 * every connection the daemon gives /mcp (the share is 280 here), so `local`'s calls were refused (503) until
 * evil's waits ended (up to 90 s, and it could send them again). Now one count per client covers both generations: evil's calls past 128 are refused with an error naming
 * the cap, its 2025 session is refused too while the 128 are held, and `local` (both generations) and the
 * owner are served throughout.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import {
  call,
  echoConfig,
  httpClient,
  type McpClient,
  makeClientToken,
  structured,
  TestOwner,
} from './helpers/mcp.js';
import { initializeBody, postMcp, type RawPostAnswer } from './helpers/raw-mcp.js';
import { MODERN } from './helpers/wire.js';

/** The daemon's bound on one client's requests in flight (daemon/mcp/sessions.ts). */
const IN_FLIGHT_CAP = 128;
const FLOOD = 300;
/**
 * 320 connections: 280 for /mcp, 40 kept for the owner (http/connections.ts). 300 waits are more than the
 * whole /mcp share, so without a per-client bound one client holds all of it; and fewer than the cap, so
 * the gate never drops a connection of the flood (or local's) to admit another.
 */
const MAX_CONNECTIONS = '320';
const MCP_SHARE = 280;

let d: RunningDaemon;
let local: Client;
let localModern: McpClient;
let evilToken: string;

beforeAll(async () => {
  d = await startDaemon({ config: echoConfig(), env: { OGF_BROKER_MAX_CONNECTIONS: MAX_CONNECTIONS } });
  local = await httpClient(d.info.mcp_url, d.mcpToken);
  localModern = await httpClient(d.info.mcp_url, d.mcpToken, 'modern');
  evilToken = await makeClientToken(d, 'evil');
});

afterAll(async () => {
  await local?.close();
  await localModern?.close();
  await d?.stop();
});

let nextId = 1;

/** A raw 2026-07-28 tools/call as `evil`, on its own connection: the per-request envelope, no session. */
function evilModernCall(name: string, args: Record<string, unknown>): Promise<RawPostAnswer> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: nextId++,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientInfo': { name: 'evil', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  return postMcp(d.info.mcp_url, evilToken, body, {
    'mcp-protocol-version': MODERN,
    'mcp-method': 'tools/call',
    'mcp-name': name,
  });
}

/** Whatever a flood call ended as: its answer, or 0 for a connection dropped before one. */
function settle(p: Promise<RawPostAnswer>): Promise<RawPostAnswer> {
  return p.catch(() => ({ status: 0, headers: {}, body: '' }));
}

describe('[c3.2.sessions-per-client] the 2026-07-28 generation is bound per client too', () => {
  it(`[c3.2.sessions-per-client] evil's ${FLOOD} parallel 2026-07-28 waits: past ${IN_FLIGHT_CAP} refused naming the cap, its 2025 session too, local and the owner served`, async () => {
    // evil's 2025 session, opened before the flood (an initialize is not a call in flight).
    const init = await postMcp(d.info.mcp_url, evilToken, initializeBody('evil'));
    expect(init.status).toBe(200);
    const session = {
      'mcp-session-id': String(init.headers['mcp-session-id']),
      'mcp-protocol-version': '2025-06-18',
    };
    await postMcp(
      d.info.mcp_url,
      evilToken,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      session,
    );

    const queued = await evilModernCall('run_command_wait', {
      command: 'echo',
      args: { word: 'flood' },
      wait_seconds: 0,
    });
    expect(queued.status).toBe(200);
    const id = /"pending_id\\?":\s*\\?"([A-Za-z0-9_-]+)/.exec(queued.body)?.[1];
    expect(id).toBeDefined();

    const waits = Array.from({ length: FLOOD }, () =>
      settle(evilModernCall('await_command_result', { pending_id: id, wait_seconds: 90 })),
    );
    const answered: RawPostAnswer[] = [];
    for (const w of waits) void w.then((r) => answered.push(r));
    // At least this many are refused by one bound or the other: then evil holds everything it will hold.
    await waitFor(() => answered.length >= FLOOD - MCP_SHARE, 'the first calls past a bound to be refused');

    // local, meanwhile, is served in both generations: a call on its session, a new session, a 2026-07-28 call.
    const r = await call(local, 'run_command_wait', {
      command: 'echo',
      args: { word: 'stillhere' },
      wait_seconds: 0,
    });
    expect(structured(r)).toMatchObject({ status: 'PENDING' });
    const fresh = await httpClient(d.info.mcp_url, d.mcpToken);
    try {
      expect((await fresh.listTools()).tools).toHaveLength(5);
    } finally {
      await fresh.close();
    }
    expect(structured(await call(localModern, 'list_commands', {})).commands).toHaveLength(1);

    // Every call past evil's share is refused at once, with an error naming the cap.
    await waitFor(() => answered.length >= FLOOD - IN_FLIGHT_CAP, 'every call past the cap to be refused');
    expect(answered).toHaveLength(FLOOD - IN_FLIGHT_CAP);
    for (const a of answered) {
      expect(a.status).toBe(503);
      expect(a.headers['retry-after']).toBe('5');
      expect(a.body).toContain(`at most ${IN_FLIGHT_CAP} requests in flight`);
    }
    // One count per client for both generations: evil's 2025 session is refused while the 128 are held.
    const legacy = await postMcp(
      d.info.mcp_url,
      evilToken,
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      session,
    );
    expect(legacy.status).toBe(503);
    expect(legacy.body).toContain(`at most ${IN_FLIGHT_CAP} requests in flight`);

    // The owner approves: every held call gets its answer.
    const owner = await TestOwner.connect(d);
    try {
      expect(await owner.approve(id!)).toMatchObject({ ok: true });
    } finally {
      owner.close();
    }
    const all = await Promise.all(waits);
    const held = all.filter((a) => a.status === 200);
    expect(held).toHaveLength(IN_FLIGHT_CAP);
    for (const a of held) expect(a.body).toContain('said flood');
    expect(d.child.exitCode).toBeNull();
  }, 120_000);
});
