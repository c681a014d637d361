/**
 * The cue executor inside the real daemon (contracts.md 4): outcomes other than success reach the AI with the
 * right status and reason, the app receives the session UUID lower-cased, nothing is written or launched for
 * a denied cue (rule 1), and `run/` is empty after every run (the file never survives).
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, structured, TestOwner, textOf } from './helpers/mcp.js';

type Mode = 'no-ack' | 'not-ready' | 'down' | 'freeze';
let mode: Mode = 'no-ack';
const hellos: Array<{ session_id: string; protocol: string; client: string }> = [];
const server = createServer();
const wss = new WebSocketServer({ noServer: true });
let d: RunningDaemon;
let mcp: Client;
let owner: TestOwner;

beforeAll(async () => {
  server.on('upgrade', (req, socket, head) => {
    if (mode === 'down') {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (data) => {
        const f = JSON.parse(String(data));
        if (f.type === 'hello') {
          hellos.push(f);
          if (mode === 'freeze') {
            // Freeze the bridge client mid-handshake: only the daemon's deadline can end it now.
            for (const pid of bridgeClientPids()) process.kill(pid, 'SIGSTOP');
            return;
          }
          ws.send(JSON.stringify({ type: 'welcome', instance_id: 'raw', ready: mode !== 'not-ready' }));
        }
        // 'no-ack': the cue is received and never acknowledged.
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ogf-bridge`;
  d = await startDaemon({ config: { ogf_bridge: { url, delivery_timeout_ms: 500 } } });
  mcp = await httpClient(d.info.mcp_url, d.mcpToken);
  owner = await TestOwner.connect(d);
});

afterAll(async () => {
  owner?.close();
  await mcp?.close();
  await d?.stop();
  for (const c of wss.clients) c.terminate();
  server.close();
});

beforeEach(() => {
  hellos.length = 0;
});

async function approvedCue(session: string, action: string) {
  const q = await call(mcp, 'ogf_cue', {
    session_id: session,
    action,
    emotion: 'sad',
    intensity: 0.2,
    gaze: 'away',
    wait_seconds: 0,
  });
  expect(q.isError, textOf(q)).toBeFalsy();
  const id = String(structured(q).pending_id);
  expect((await owner.approve(id)).ok).toBe(true);
  const r = await call(
    mcp,
    'await_command_result',
    { pending_id: id, wait_seconds: 60 },
    { timeout: 90_000 },
  );
  return { id, result: structured(r) };
}

/** Pids of bridge clients launched by this test's daemon (their argv names a file in its run/). */
function bridgeClientPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (
        argv.some((a) => a.endsWith('bridge-client/cli.js')) &&
        argv.some((a) => a.startsWith(join(d.dataDir, 'run')))
      ) {
        pids.push(Number(name));
      }
    } catch {
      // gone
    }
  }
  return pids;
}

const runDir = () => readdirSync(join(d.dataDir, 'run'));

describe('cue outcomes through the daemon', () => {
  it('no ack: UNKNOWN/DeliveryUnconfirmed; the app got the UUID lower-cased; run/ is empty', async () => {
    mode = 'no-ack';
    const session = randomUUID();
    const { result } = await approvedCue(session.toUpperCase(), 'wave');
    expect(result).toMatchObject({ status: 'UNKNOWN', reason: 'DeliveryUnconfirmed', exit_code: 3 });
    expect(hellos).toEqual([
      {
        type: 'hello',
        protocol: 'ogf-bridge/1',
        session_id: session,
        client: expect.stringMatching(/^ogf-broker\//),
      },
    ]);
    expect(JSON.stringify(result).toLowerCase()).not.toContain(session);
    expect(runDir()).toEqual([]);
  });

  it('ready:false: ERROR/AvatarNotReady', async () => {
    mode = 'not-ready';
    const { result } = await approvedCue(randomUUID(), 'nod');
    expect(result).toMatchObject({ status: 'ERROR', reason: 'AvatarNotReady', exit_code: 2 });
    expect(runDir()).toEqual([]);
  });

  it('the app is down: ERROR/BridgeUnreachable', async () => {
    mode = 'down';
    const { result } = await approvedCue(randomUUID(), 'celebrate');
    expect(result).toMatchObject({
      status: 'ERROR',
      reason: 'BridgeUnreachable',
    });
    expect(hellos).toEqual([]);
    expect(runDir()).toEqual([]);
  });

  it('a client that hangs is stopped at delivery_timeout_ms + 10 s: UNKNOWN/KilledAtDeadline', async () => {
    mode = 'freeze';
    const { result } = await approvedCue(randomUUID(), 'wave');
    expect(result).toMatchObject({ status: 'UNKNOWN', reason: 'KilledAtDeadline', signal: 'SIGKILL' });
    expect(hellos).toHaveLength(1);
    expect(bridgeClientPids()).toEqual([]);
    expect(runDir()).toEqual([]);
  });

  it('[c2.rule-1] [c4.session-file] a denied cue writes no session file and never reaches the app (rule 1)', async () => {
    mode = 'no-ack';
    const q = await call(mcp, 'ogf_cue', {
      session_id: randomUUID(),
      action: 'shake_head',
      emotion: 'concerned',
      intensity: 1,
      gaze: 'user',
      wait_seconds: 0,
    });
    const id = String(structured(q).pending_id);
    const path = (structured(q).display as string[])[3]!;
    expect(path.startsWith(join(d.dataDir, 'run', 'cue-'))).toBe(true);
    expect(runDir()).toEqual([]);
    const v = await waitFor(() => owner.views.get(id), 'the owner sees the cue');
    const ws = new WebSocket(`${d.url.replace(/^http/, 'ws')}/owner/ws`, {
      headers: { authorization: `Bearer ${d.ownerToken}` },
    });
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'deny', req_id: 'd1', id, version: v.version }));
    const r = await call(mcp, 'await_command_result', { pending_id: id, wait_seconds: 30 });
    ws.close();
    expect(structured(r)).toMatchObject({ status: 'DENIED', reason: 'OwnerDenied' });
    expect(hellos).toEqual([]);
    expect(runDir()).toEqual([]);
  });
});
