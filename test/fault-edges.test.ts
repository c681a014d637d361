/**
 * Faults at the edges of one running daemon (issue 6 item 2; rules 1, 2, 5):
 * - the bridge client SIGKILLed mid-delivery → the cue ends unknown (or failed) truthfully, never
 *   succeeded, never relaunched, and its session file does not survive;
 * - the avatar app dying after it received a cue → unknown/DeliveryUnconfirmed; dying before its
 *   `welcome` → failed/BridgeUnreachable (certainly not shown);
 * - the owner socket dropping mid-approve → exactly one decision or none; a reconnecting owner sees
 *   the truth, and the command runs once.
 * Timings are randomised; each group prints how many trials it ran.
 */
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { launches, markCatalog, readRows, sessionFiles, sleep } from './helpers/fault-daemon.js';
import { callTool, mcpClient, OwnerSocket } from './helpers/owner.js';

type Mode = 'hold' | 'die_before_welcome' | 'die_after_cue';

/** A raw avatar app that misbehaves on purpose; records every cue frame it received, by cue_id. */
class RawApp {
  mode: Mode = 'hold';
  welcomeDelayMs = 0;
  readonly cues: string[] = [];
  readonly #server: Server = createServer();
  readonly #wss = new WebSocketServer({ server: this.#server });
  url = '';

  async start(): Promise<void> {
    this.#wss.on('connection', (ws: WebSocket) => {
      const mode = this.mode;
      ws.on('message', (data) => {
        const f = JSON.parse(String(data)) as { type: string; cue_id?: string };
        if (f.type === 'hello') {
          if (mode === 'die_before_welcome') ws.terminate();
          else
            setTimeout(
              () => ws.send(JSON.stringify({ type: 'welcome', instance_id: 'raw', ready: true })),
              this.welcomeDelayMs,
            );
        } else if (f.type === 'cue') {
          this.cues.push(f.cue_id!);
          // The app "dies" right after taking the cue: the socket goes away without an ack.
          if (mode === 'die_after_cue') ws.terminate();
        }
      });
    });
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.url = `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}/ogf-bridge`;
  }

  count(id: string): number {
    return this.cues.filter((c) => c === id).length;
  }

  async close(): Promise<void> {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise((r) => this.#server.close(r));
  }
}

const SESSION = '3d7c5b1a-9e8f-4a6b-8c2d-1e0f9a8b7c6d';
let app: RawApp;
let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let mark: string;

beforeAll(async () => {
  app = new RawApp();
  await app.start();
  const dataDir = makeDataDir('ogf-fault-edges-');
  mark = join(dataDir, 'marks');
  d = await startDaemon({
    dataDir,
    config: markCatalog(mark, { ogf_bridge: { url: app.url, delivery_timeout_ms: 4000 } }),
  });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
  await app?.close();
});

let cueSeq = 0;
async function queueCue(): Promise<{ id: string; file: string }> {
  cueSeq++;
  const r = await callTool(ai, 'ogf_cue', {
    session_id: SESSION,
    action: 'wave',
    emotion: 'curious',
    intensity: (cueSeq % 100) / 100,
    gaze: 'content',
    ttl_ms: 500,
    wait_seconds: 0,
  });
  expect(r.pending_id, JSON.stringify(r)).toBeTypeOf('string');
  return { id: r.pending_id as string, file: (r.display as string[])[3]! };
}

/** The pid of the bridge client working on `file` (its argv names the session file; no secret in it). */
function clientPid(file: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes('deliver') && argv.includes(file)) return Number(name);
    } catch {
      // gone
    }
  }
  return undefined;
}

async function finalResult(id: string): Promise<Record<string, unknown>> {
  return waitFor(async () => {
    const r = await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 5 });
    return r.status !== 'PENDING' ? r : undefined;
  }, `a final result for ${id}`);
}

describe('[c2.rule-2] [c2.crash-safety] the bridge client killed mid-delivery', () => {
  const TRIALS = 5;
  it(`ends unknown or failed truthfully, never succeeded, never relaunched (${TRIALS} trials)`, async () => {
    const seen: string[] = [];
    for (let i = 0; i < TRIALS; i++) {
      app.mode = 'hold';
      app.welcomeDelayMs = randomInt(0, 200);
      const { id, file } = await queueCue();
      expect((await owner.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
      const pid = await waitFor(() => clientPid(file), 'the bridge client process');
      await sleep(randomInt(0, 350)); // before welcome, after it, or after the cue went out
      process.kill(pid, 'SIGKILL');
      const r = await finalResult(id);
      seen.push(`${r.status}/${r.reason}${app.count(id) ? '+sent' : ''}`);
      expect(r.status, JSON.stringify(r)).not.toBe('SUCCEEDED');
      expect(['UNKNOWN', 'ERROR']).toContain(r.status);
      if (app.count(id) > 0) expect(r.status, 'the cue went out: only unknown is true').toBe('UNKNOWN');
      await sleep(200);
      expect(app.count(id), 'never relaunched').toBeLessThanOrEqual(1);
      expect(sessionFiles(d.dataDir), 'no session file left').toEqual([]);
    }
    console.log(`fault-edges: bridge client SIGKILLed mid-delivery ${TRIALS} times: ${seen.join(', ')}`);
  }, 90_000);
});

describe('[c2.rule-2] the avatar app dying', () => {
  const TRIALS = 6;
  it(`after receiving a cue → unknown/DeliveryUnconfirmed; before welcome → failed/BridgeUnreachable (${TRIALS} trials)`, async () => {
    for (let i = 0; i < TRIALS; i++) {
      const mode: Mode = i % 2 === 0 ? 'die_after_cue' : 'die_before_welcome';
      app.mode = mode;
      app.welcomeDelayMs = randomInt(0, 100);
      const { id } = await queueCue();
      expect((await owner.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
      const r = await finalResult(id);
      if (mode === 'die_after_cue') {
        expect(r, mode).toMatchObject({ status: 'UNKNOWN', reason: 'DeliveryUnconfirmed' });
        expect(app.count(id)).toBe(1);
      } else {
        expect(r, mode).toMatchObject({ status: 'ERROR', reason: 'BridgeUnreachable' });
        expect(app.count(id)).toBe(0);
      }
      expect(sessionFiles(d.dataDir)).toEqual([]);
    }
    await sleep(300);
    expect(new Set(app.cues).size, 'no cue delivered twice').toBe(app.cues.length);
    console.log(`fault-edges: avatar app died ${TRIALS} times (half after the cue, half before welcome)`);
  }, 90_000);
});

/** A client→server WebSocket text frame (masked, as RFC 6455 requires of clients), payload < 126 bytes. */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  if (payload.length >= 126) throw new Error('frame too long for the short form');
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

describe('[c2.rule-5] the owner socket dropping mid-approve', () => {
  const TRIALS = 10;
  it(`gives exactly one decision or none; a reconnect sees the truth; the command runs once (${TRIALS} trials)`, async () => {
    let decided = 0;
    for (let i = 0; i < TRIALS; i++) {
      const word = `drop${i}x${randomInt(1e9)}`;
      const r = await callTool(ai, 'run_command_wait', {
        command: 'mark',
        args: { word, ms: 0 },
        wait_seconds: 0,
      });
      const id = r.pending_id as string;
      const o = await OwnerSocket.open(d);
      const frame = JSON.stringify({ type: 'approve', req_id: 'x', id, version: 1 });
      if (i % 2 === 0) {
        // The socket dies in the middle of the approve frame: only a random prefix of its bytes leaves.
        const bytes = maskedTextFrame(frame);
        const cut = randomInt(0, 3) === 0 ? bytes.length : randomInt(1, bytes.length);
        const sock = (o.ws as unknown as { _socket: import('node:net').Socket })._socket;
        sock.write(bytes.subarray(0, cut), () => sock.destroy());
      } else {
        o.ws.send(frame);
        // Drop at a random moment: while the frame is read, or after the decision.
        if (randomInt(0, 2) === 0) setImmediate(() => o.ws.terminate());
        else await sleep(randomInt(0, 20)).then(() => o.ws.terminate());
      }
      await sleep(100);
      const again = await OwnerSocket.open(d);
      const view = again.snapshotView(id)!;
      expect(view, 'the reconnecting owner sees the command').toBeDefined();
      const approvals = () =>
        (() => {
          const db = new Database(join(d.dataDir, 'broker.db'), { readonly: true });
          try {
            return (
              db
                .prepare("SELECT COUNT(*) AS n FROM audit WHERE command_id = ? AND action = 'approve'")
                .get(id) as {
                n: number;
              }
            ).n;
          } finally {
            db.close();
          }
        })();
      if (view.state === 'awaiting_review') {
        // No decision was made: the truth is "still waiting", at version 1; approving now works once.
        expect(view.version).toBe(1);
        expect(approvals()).toBe(0);
        expect((await again.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
      } else {
        decided++;
        expect(['approved', 'running', 'succeeded']).toContain(view.state);
        expect((await again.request({ type: 'approve', id, version: 1 })).error.code).toBe('AlreadyDecided');
      }
      // The run may have finished before this socket connected: then its snapshot already says so.
      await again.view(id, (v) => v.state === 'succeeded', 'succeeded');
      expect(approvals(), 'exactly one decision').toBe(1);
      expect(launches(mark).get(word), 'ran once').toBe(1);
      expect(readRows(d.dataDir, [id]).get(id)).toMatchObject({ state: 'succeeded', version: 4 });
      await again.close();
    }
    console.log(
      `fault-edges: owner socket dropped mid-approve ${TRIALS} times (${decided} decided before the drop, ${TRIALS - decided} not)`,
    );
  }, 90_000);
});
