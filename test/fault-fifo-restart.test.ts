/**
 * Rule 6 across a crash: the daemon is SIGKILLed while a cue's bridge client is mid-delivery. That client
 * is its own process group, so it outlives the daemon (an orphan) and keeps talking to the avatar app.
 * A cue for the same session approved right after the restart must not overlap it: the new daemon
 * cannot see the orphan, so it holds that session's launches until the orphan's delivery deadline
 * (the time the dead daemon would have killed it) has passed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { callTool, mcpClient, OwnerSocket } from './helpers/owner.js';

/** An avatar app that never acks its first cue (so that delivery stays in flight) and records overlaps. */
class HoldingApp {
  readonly #server: Server = createServer();
  readonly #wss = new WebSocketServer({ server: this.#server });
  open = 0;
  maxOpen = 0;
  /** [cue_id, event] in arrival order. */
  readonly log: Array<[string, string]> = [];
  url = '';

  async start(): Promise<void> {
    this.#wss.on('connection', (ws: WebSocket) => {
      this.open++;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      let cue = '?';
      ws.on('message', (data) => {
        const f = JSON.parse(String(data)) as { type: string; cue_id?: string };
        if (f.type === 'hello')
          ws.send(JSON.stringify({ type: 'welcome', instance_id: 'hold', ready: true }));
        if (f.type === 'cue') {
          cue = f.cue_id!;
          this.log.push([cue, 'cue']);
          // Only the first cue is held without an ack (the one orphaned by the crash).
          if (this.log.filter(([, e]) => e === 'cue').length > 1)
            ws.send(
              JSON.stringify({
                type: 'cue_ack',
                cue_id: cue,
                applied_at: new Date().toISOString(),
                duplicate: false,
              }),
            );
        }
      });
      ws.on('close', () => {
        this.open--;
        this.log.push([cue, 'closed']);
      });
    });
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.url = `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}/ogf-bridge`;
  }

  async close(): Promise<void> {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise((r) => this.#server.close(r));
  }
}

const SESSION = '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d';
let app: HoldingApp;
const daemons: RunningDaemon[] = [];

beforeAll(async () => {
  app = new HoldingApp();
  await app.start();
});

afterAll(async () => {
  for (const d of daemons) await d.stop();
  await app?.close();
});

async function approvedCue(d: RunningDaemon, action: string): Promise<string> {
  const ai = await mcpClient(d);
  const r = await callTool(ai, 'ogf_cue', {
    session_id: SESSION,
    action,
    emotion: 'neutral',
    intensity: 0.3,
    gaze: 'user',
    ttl_ms: 300,
    wait_seconds: 0,
  });
  const id = r.pending_id as string;
  const owner = await OwnerSocket.open(d);
  expect((await owner.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
  await owner.close();
  await ai.close();
  return id;
}

describe('[c2.rule-6] cues of one session never overlap, even across a crash', () => {
  it('a cue approved after the restart waits for the orphaned delivery of the killed daemon', async () => {
    const dataDir = makeDataDir('ogf-fault-fifo-');
    const config = { ogf_bridge: { url: app.url, delivery_timeout_ms: 8000 } };
    const first = await startDaemon({ dataDir, config });
    const a = await approvedCue(first, 'wave');
    await waitFor(() => app.log.some(([id, e]) => id === a && e === 'cue'), 'the first cue to reach the app');
    await first.kill(); // its bridge client lives on, waiting for an ack that never comes

    const second = await startDaemon({ dataDir });
    daemons.push(second);
    const b = await approvedCue(second, 'nod');
    await waitFor(
      () => app.log.some(([id, e]) => id === b && e === 'closed'),
      'the second cue to finish',
      40_000,
    );
    const order = app.log.map(([id, e]) => `${id === a ? 'A' : id === b ? 'B' : '?'}:${e}`);
    console.log(
      `fault-fifo-restart: app saw ${order.join(' ')}; at most ${app.maxOpen} connection(s) at once`,
    );
    expect(app.maxOpen, 'two deliveries to one session at once (rule 6)').toBe(1);
    expect(order.indexOf('A:closed')).toBeLessThan(order.indexOf('B:cue'));
    // Held, not refused: the later cue is delivered once the orphan's window has passed.
    const ai = await mcpClient(second);
    const rb = await callTool(ai, 'await_command_result', { pending_id: b, wait_seconds: 10 });
    await ai.close();
    expect(rb).toMatchObject({ status: 'SUCCEEDED', delivery: { cue_id: b } });
  }, 60_000);
});
