/**
 * Heartbeats on the owner WebSocket (issue 4: "heartbeats so a dead tab is noticed"): an owner that stops
 * answering pings is dropped, one that answers stays. The interval is shortened with the daemon's
 * OGF_BROKER_OWNER_HEARTBEAT_MS knob so the test need not wait the default 15 s twice.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { OwnerSocket, wsUrl } from './helpers/owner.js';

let d: RunningDaemon;

beforeAll(async () => {
  d = await startDaemon({ env: { OGF_BROKER_OWNER_HEARTBEAT_MS: '200' } });
});

afterAll(async () => {
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

it('drops an owner that stops answering pings and keeps one that answers', async () => {
  const alive = await OwnerSocket.open(d);
  let pings = 0;
  let closed: number | undefined;
  const silent = new WebSocket(wsUrl(d), {
    headers: { Authorization: `Bearer ${d.ownerToken}` },
    autoPong: false,
  });
  silent.on('ping', () => pings++);
  silent.on('close', (code) => {
    closed = code;
  });
  silent.on('error', () => {});
  await waitFor(() => closed !== undefined, 'the silent owner to be dropped', 10_000);
  expect(pings).toBeGreaterThanOrEqual(1);
  // Terminated without a closing handshake: the peer sees an abnormal closure.
  expect(closed).toBe(1006);
  // The daemon writes a turn's log lines at the turn's end: wait for the line, not for the close before it.
  await waitFor(() => d.stderr().includes('owner_heartbeat_lost'), 'the drop to be logged');
  expect(alive.closeCode).toBeUndefined();
  expect((await alive.request({ type: 'history', limit: 1 })).type).toBe('history');
  await alive.close();
});
