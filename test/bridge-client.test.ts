/**
 * The real `ogf-bridge-client deliver` process against the real app-side endpoint (and, where an app
 * must misbehave, a small raw `ws` server): every outcome of contracts.md 4 and 6, its exit code, its one
 * line, that the session file never survives an accepted run, and that the UUID is never printed.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import type { AppliedCue } from '../bridge-client/avatar-state.js';
import { BridgeEndpoint } from '../bridge-client/endpoint.js';
import { runDeliver } from './helpers/deliver.js';

interface Run {
  code: number | null;
  line: {
    outcome: string;
    code: string;
    detail: string;
    ack?: { cue_id: string; applied_at: string; duplicate: boolean };
  };
  stdout: string;
  stderr: string;
}

async function runClient(path: string): Promise<Run> {
  const { code, lines, stdout, stderr } = await runDeliver(path);
  expect(lines, `exactly one line on stdout, got ${JSON.stringify(stdout)}`).toHaveLength(1);
  return { code, line: JSON.parse(lines[0]!), stdout, stderr };
}

let dir: string;
const SESSION = randomUUID();

interface FileOpts {
  url: string;
  session?: string;
  pendingId?: string;
  deliverByMs?: number;
  timeoutMs?: number;
  mode?: number;
}

function writeSession(name: string, o: FileOpts): string {
  const path = join(dir, `cue-${name}.json`);
  const content = {
    v: 1,
    pending_id: o.pendingId ?? `c_${name}`,
    bridge_url: o.url,
    session_id: o.session ?? SESSION,
    cue: { action: 'wave', emotion: 'happy', intensity: 0.8, gaze: 'user', ttl_ms: 1500, message: 'hi' },
    deliver_by: new Date(Date.now() + (o.deliverByMs ?? 20_000)).toISOString(),
    delivery_timeout_ms: o.timeoutMs ?? 3000,
  };
  writeFileSync(path, JSON.stringify(content), { mode: o.mode ?? 0o600 });
  chmodSync(path, o.mode ?? 0o600);
  return path;
}

/** Checks what every run must hold: exit code matches the outcome, and no UUID is printed. */
function expectLine(r: Run, outcome: string, code: string, exit: number): void {
  expect(r.line.outcome).toBe(outcome);
  expect(r.line.code).toBe(code);
  expect(r.code).toBe(exit);
  expect(r.stdout + r.stderr).not.toContain(SESSION);
  expect(typeof r.line.detail).toBe('string');
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** The real endpoint on an HTTP server, with a record of what it applied. */
async function startEndpoint(opts: ConstructorParameters<typeof BridgeEndpoint>[0] = {}) {
  const applied: AppliedCue[] = [];
  const endpoint = new BridgeEndpoint({ sessionId: SESSION, apply: (c) => void applied.push(c), ...opts });
  const server = createServer((_q, s) => s.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => endpoint.handleUpgrade(req, socket, head));
  const port = await listen(server);
  return {
    url: `ws://127.0.0.1:${port}/ogf-bridge`,
    endpoint,
    applied,
    close: async () => {
      await endpoint.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A raw ws server playing a misbehaving app: `onFrame` decides what to do with each client frame. */
async function startRawApp(onFrame: (ws: WebSocket, frame: { type: string; [k: string]: unknown }) => void) {
  const server = createServer();
  const wss = new WebSocketServer({ server });
  const frames: string[] = [];
  wss.on('connection', (ws) => {
    ws.on('message', (d) => {
      const frame = JSON.parse(String(d));
      frames.push(frame.type);
      onFrame(ws, frame);
    });
  });
  const port = await listen(server);
  return {
    url: `ws://127.0.0.1:${port}/ogf-bridge`,
    frames,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => wss.close(r));
      await new Promise((r) => server.close(r));
    },
  };
}

const welcome = (ws: WebSocket) =>
  ws.send(JSON.stringify({ type: 'welcome', instance_id: 'raw', ready: true }));
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-bridge-client-'));
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ogf-bridge-client deliver against the real endpoint', () => {
  it('[c4.session-file] delivers: exit 0, the ack for this cue, the avatar shows it, the file is gone', async () => {
    const app = await startEndpoint();
    cleanups.push(app.close);
    const path = writeSession('ok', { url: app.url });
    const r = await runClient(path);
    expectLine(r, 'delivered', 'Delivered', 0);
    expect(r.line.ack).toMatchObject({ cue_id: 'c_ok', duplicate: false });
    expect(r.line.ack!.applied_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(existsSync(path)).toBe(false);
    expect(app.applied.map((c) => c.cue_id)).toEqual(['c_ok']);
    expect(app.endpoint.state).toMatchObject({
      action: 'wave',
      emotion: 'happy',
      gaze: 'user',
      message: 'hi',
    });
  });

  it('a repeated cue_id is applied once; the repeat gets the first ack with duplicate:true', async () => {
    const app = await startEndpoint();
    cleanups.push(app.close);
    const first = await runClient(writeSession('dup1', { url: app.url, pendingId: 'c_same' }));
    const second = await runClient(writeSession('dup2', { url: app.url, pendingId: 'c_same' }));
    expectLine(first, 'delivered', 'Delivered', 0);
    expectLine(second, 'delivered', 'Delivered', 0);
    expect(second.line.ack).toEqual({ ...first.line.ack, duplicate: true });
    expect(app.applied).toHaveLength(1);
  });

  it('nothing listening: BridgeUnreachable, exit 2, file consumed', async () => {
    const server = createServer();
    const port = await listen(server);
    await new Promise((r) => server.close(r));
    const path = writeSession('unreachable', { url: `ws://127.0.0.1:${port}/ogf-bridge` });
    const r = await runClient(path);
    expectLine(r, 'not_delivered', 'BridgeUnreachable', 2);
    expect(existsSync(path)).toBe(false);
  });

  it('an unknown session: BridgeRejected naming SessionUnknown, nothing applied', async () => {
    const app = await startEndpoint();
    cleanups.push(app.close);
    const other = randomUUID();
    const r = await runClient(writeSession('unknown-session', { url: app.url, session: other }));
    expectLine(r, 'not_delivered', 'BridgeRejected', 2);
    expect(r.line.detail).toContain('SessionUnknown');
    expect(r.stdout + r.stderr).not.toContain(other);
    expect(app.applied).toHaveLength(0);
  });

  it('the session UUID is compared lower-cased: an upper-case file still matches', async () => {
    const app = await startEndpoint();
    cleanups.push(app.close);
    const r = await runClient(writeSession('upper', { url: app.url, session: SESSION.toUpperCase() }));
    expectLine(r, 'delivered', 'Delivered', 0);
  });

  it('an app that does not speak ogf-bridge/1: BridgeRejected naming ProtocolUnsupported', async () => {
    const app = await startRawApp((ws) => {
      ws.send(JSON.stringify({ type: 'error', code: 'ProtocolUnsupported', message: 'only ogf-bridge/2' }));
      ws.close();
    });
    cleanups.push(app.close);
    const r = await runClient(writeSession('protocol', { url: app.url }));
    expectLine(r, 'not_delivered', 'BridgeRejected', 2);
    expect(r.line.detail).toContain('ProtocolUnsupported');
  });

  it('ready:false: AvatarNotReady, and the cue frame is never sent', async () => {
    const app = await startEndpoint({ ready: false });
    cleanups.push(app.close);
    const r = await runClient(writeSession('not-ready', { url: app.url }));
    expectLine(r, 'not_delivered', 'AvatarNotReady', 2);
    expect(app.applied).toHaveLength(0);
  });

  it('a nack (Busy): BridgeRejected carrying the app code', async () => {
    const app = await startEndpoint({ queueLimit: 0 });
    cleanups.push(app.close);
    const r = await runClient(writeSession('busy', { url: app.url }));
    expectLine(r, 'not_delivered', 'BridgeRejected', 2);
    expect(r.line.detail).toContain('Busy');
    expect(app.applied).toHaveLength(0);
  });

  it('past deliver_by: CueExpired without connecting; the file is consumed', async () => {
    const app = await startRawApp(() => {});
    cleanups.push(app.close);
    const path = writeSession('expired', { url: app.url, deliverByMs: -1000 });
    const r = await runClient(path);
    expectLine(r, 'not_delivered', 'CueExpired', 2);
    expect(app.frames).toEqual([]);
    expect(existsSync(path)).toBe(false);
  });

  it('a socket closed before welcome: BridgeUnreachable (the cue was never written)', async () => {
    const app = await startRawApp((ws) => ws.terminate());
    cleanups.push(app.close);
    const r = await runClient(writeSession('closed-early', { url: app.url }));
    expectLine(r, 'not_delivered', 'BridgeUnreachable', 2);
    expect(app.frames).toEqual(['hello']);
  });

  it('no welcome within delivery_timeout_ms: BridgeUnreachable', async () => {
    const app = await startRawApp(() => {});
    cleanups.push(app.close);
    const r = await runClient(writeSession('silent', { url: app.url, timeoutMs: 400 }));
    expectLine(r, 'not_delivered', 'BridgeUnreachable', 2);
    expect(app.frames).toEqual(['hello']);
  });

  it('no ack after the cue: DeliveryUnconfirmed, exit 3', async () => {
    const app = await startRawApp((ws, f) => {
      if (f.type === 'hello') welcome(ws);
    });
    cleanups.push(app.close);
    const path = writeSession('no-ack', { url: app.url, timeoutMs: 400 });
    const r = await runClient(path);
    expectLine(r, 'unknown', 'DeliveryUnconfirmed', 3);
    expect(app.frames).toEqual(['hello', 'cue']);
    expect(existsSync(path)).toBe(false);
  });

  it('the socket closed after the cue was received: DeliveryUnconfirmed, exit 3', async () => {
    const app = await startRawApp((ws, f) => {
      if (f.type === 'hello') welcome(ws);
      else ws.terminate();
    });
    cleanups.push(app.close);
    const r = await runClient(writeSession('closed-after', { url: app.url }));
    expectLine(r, 'unknown', 'DeliveryUnconfirmed', 3);
    expect(app.frames).toEqual(['hello', 'cue']);
  });

  it('an ack for another cue: DeliveryUnconfirmed, exit 3', async () => {
    const app = await startRawApp((ws, f) => {
      if (f.type === 'hello') welcome(ws);
      else
        ws.send(
          JSON.stringify({
            type: 'cue_ack',
            cue_id: 'other',
            applied_at: new Date().toISOString(),
            duplicate: false,
          }),
        );
    });
    cleanups.push(app.close);
    const r = await runClient(writeSession('wrong-ack', { url: app.url }));
    expectLine(r, 'unknown', 'DeliveryUnconfirmed', 3);
  });
});

describe('[c4.session-file] ogf-bridge-client refuses unsafe session files (SessionFileRejected, exit 2)', () => {
  it('a symbolic link: refused, nothing connects, the target is untouched', async () => {
    const app = await startRawApp(() => {});
    cleanups.push(app.close);
    const target = writeSession('target', { url: app.url });
    const link = join(dir, 'cue-link.json');
    symlinkSync(target, link);
    const r = await runClient(link);
    expectLine(r, 'not_delivered', 'SessionFileRejected', 2);
    expect(r.line.detail).toContain('symbolic link');
    expect(existsSync(target)).toBe(true);
    expect(app.frames).toEqual([]);
  });

  it('a group-readable file (0640): refused, nothing connects', async () => {
    const app = await startRawApp(() => {});
    cleanups.push(app.close);
    const r = await runClient(writeSession('group', { url: app.url, mode: 0o640 }));
    expectLine(r, 'not_delivered', 'SessionFileRejected', 2);
    expect(r.line.detail).toContain('0640');
    expect(app.frames).toEqual([]);
  });

  it.runIf(process.getuid?.() === 0)("another user's file: refused, nothing connects", async () => {
    const app = await startRawApp(() => {});
    cleanups.push(app.close);
    const path = writeSession('nobody', { url: app.url });
    chownSync(path, 65534, 65534);
    const r = await runClient(path);
    expectLine(r, 'not_delivered', 'SessionFileRejected', 2);
    expect(r.line.detail).toContain('uid 65534');
    expect(app.frames).toEqual([]);
  });

  it('a directory, a missing file and a file that is not a session file are refused', async () => {
    const sub = mkdtempSync(join(dir, 'd-'));
    chmodSync(sub, 0o600);
    expectLine(await runClient(sub), 'not_delivered', 'SessionFileRejected', 2);
    expectLine(await runClient(join(dir, 'missing.json')), 'not_delivered', 'SessionFileRejected', 2);
    const bad = join(dir, 'cue-bad.json');
    writeFileSync(bad, JSON.stringify({ v: 1, session_id: SESSION }), { mode: 0o600 });
    const r = await runClient(bad);
    expectLine(r, 'not_delivered', 'SessionFileRejected', 2);
    expect(existsSync(bad)).toBe(false);
  });
});
