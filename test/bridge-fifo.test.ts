/**
 * Rule 6 through the real daemon: three cues for one session, approved in an order different from the
 * order they were queued, reach the app one connection at a time, in approval order. The app is the real
 * endpoint with a slow renderer (each cue takes 300 ms to apply), so overlapping launches would show as
 * overlapping connections. A cue for a session the app does not know fails for sure.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BridgeEndpoint, type EndpointEvent } from '../bridge-client/endpoint.js';
import type { RunningDaemon } from './helpers/daemon.js';
import { startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, structured, TestOwner, textOf } from './helpers/mcp.js';

const SESSION = randomUUID();
const events: EndpointEvent[] = [];
let endpoint: BridgeEndpoint;
let server: ReturnType<typeof createServer>;
let d: RunningDaemon;
let mcp: Client;
let owner: TestOwner;

beforeAll(async () => {
  endpoint = new BridgeEndpoint({
    sessionId: SESSION,
    onEvent: (e) => void events.push(e),
    apply: () => new Promise((r) => setTimeout(r, 300)),
  });
  server = createServer();
  server.on('upgrade', (req, socket, head) => endpoint.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ogf-bridge`;
  d = await startDaemon({ config: { ogf_bridge: { url, delivery_timeout_ms: 5000 } } });
  mcp = await httpClient(d.info.mcp_url, d.mcpToken);
  owner = await TestOwner.connect(d);
});

afterAll(async () => {
  owner?.close();
  await mcp?.close();
  await d?.stop();
  await endpoint?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

async function queue(action: string, session = SESSION): Promise<string> {
  const r = await call(mcp, 'ogf_cue', {
    session_id: session,
    action,
    emotion: 'happy',
    intensity: 0.5,
    gaze: 'user',
    wait_seconds: 0,
  });
  expect(r.isError, textOf(r)).toBeFalsy();
  return String(structured(r).pending_id);
}

it('[c2.rule-6] three approved cues for one session reach the app one connection at a time, in approval order', async () => {
  const [a, b, c] = [await queue('wave'), await queue('nod'), await queue('celebrate')];
  // Approve C, A, B back to back: without rule 6 all three would launch at once.
  for (const id of [c, a, b]) expect((await owner.approve(id)).ok).toBe(true);
  const results = await Promise.all(
    [a, b, c].map((id) =>
      call(mcp, 'await_command_result', { pending_id: id, wait_seconds: 60 }, { timeout: 90_000 }),
    ),
  );
  for (const r of results) {
    expect(structured(r)).toMatchObject({
      status: 'SUCCEEDED',
      delivery: { applied_at: expect.any(String) },
    });
  }

  // The app's own record: each connection opens, is welcomed, applies one cue and closes before the next opens.
  const cues = events.filter((e) => e.type === 'cue');
  expect(cues.map((e) => (e as { cue_id: string }).cue_id)).toEqual([c, a, b]);
  let open: number | undefined;
  for (const e of events) {
    if (e.type === 'open') {
      expect(open, `connection ${e.conn} opened while ${open} was still open`).toBeUndefined();
      open = e.conn;
    } else if (e.type === 'close') {
      expect(e.conn).toBe(open);
      open = undefined;
    } else {
      expect(e.conn).toBe(open);
    }
  }
  // Approval order is also the order of the ack times.
  const applied = [c, a, b].map((id) =>
    Date.parse(
      String((structured(results[[a, b, c].indexOf(id)]!).delivery as { applied_at: string }).applied_at),
    ),
  );
  expect([...applied].sort((x, y) => x - y)).toEqual(applied);
});

it('a cue for a session the app does not know ends ERROR/BridgeRejected, naming SessionUnknown', async () => {
  const other = randomUUID();
  const id = await queue('wave', other);
  expect((await owner.approve(id)).ok).toBe(true);
  const r = await call(
    mcp,
    'await_command_result',
    { pending_id: id, wait_seconds: 60 },
    { timeout: 90_000 },
  );
  expect(structured(r)).toMatchObject({ status: 'ERROR', reason: 'BridgeRejected' });
  expect(String(structured(r).detail)).toContain('SessionUnknown');
  await waitFor(() => events.some((e) => e.type === 'refused' && e.code === 'SessionUnknown'), 'the refusal');
});
