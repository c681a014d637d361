/** The app-side endpoint over real sockets, spoken to by a raw `ws` client (contract 6). */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { AppliedCue } from './avatar-state.js';
import { BridgeEndpoint, type BridgeEndpointOptions } from './endpoint.js';

const SESSION: string = randomUUID();
let server: Server | undefined;
let endpoint: BridgeEndpoint | undefined;

afterEach(async () => {
  await endpoint?.close();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
  endpoint = undefined;
});

async function start(opts: BridgeEndpointOptions = {}): Promise<string> {
  endpoint = new BridgeEndpoint({ sessionId: SESSION, ...opts });
  const ep = endpoint;
  server = createServer();
  server.on('upgrade', (req, socket, head) => ep.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** A raw client that collects frames; `next()` resolves with the next one. */
async function connect(url: string) {
  const ws = new WebSocket(url);
  const inbox: unknown[] = [];
  const waiters: Array<(f: unknown) => void> = [];
  let closed = false;
  ws.on('message', (d) => {
    const f = JSON.parse(String(d));
    const w = waiters.shift();
    if (w) w(f);
    else inbox.push(f);
  });
  ws.on('close', () => {
    closed = true;
    for (const w of waiters.splice(0)) w({ closed: true });
  });
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  return {
    ws,
    send: (f: object) => ws.send(JSON.stringify(f)),
    next: () =>
      new Promise<Record<string, unknown>>((r) => {
        if (inbox.length) r(inbox.shift() as Record<string, unknown>);
        else if (closed) r({ closed: true });
        else waiters.push(r as (f: unknown) => void);
      }),
    closed: () => (closed ? Promise.resolve() : new Promise((r) => ws.once('close', r))),
  };
}

async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setTimeout(r, 5));
}

const hello = (session: string = SESSION, protocol = 'ogf-bridge/1') => ({
  type: 'hello',
  protocol,
  session_id: session,
  client: 'test/1',
});
const cueFrame = (cue_id: string, over: Record<string, unknown> = {}) => ({
  type: 'cue',
  cue_id,
  action: 'nod',
  emotion: 'curious',
  intensity: 0.4,
  gaze: 'content',
  ttl_ms: 2000,
  deliver_by: new Date(Date.now() + 10_000).toISOString(),
  ...over,
});

async function welcomed(url: string) {
  const c = await connect(url);
  c.send(hello());
  expect(await c.next()).toMatchObject({ type: 'welcome', ready: true });
  return c;
}

describe('BridgeEndpoint handshake', () => {
  it('refuses another protocol with ProtocolUnsupported and closes', async () => {
    const c = await connect(await start());
    c.send(hello(SESSION, 'ogf-bridge/2'));
    expect(await c.next()).toMatchObject({ type: 'error', code: 'ProtocolUnsupported' });
    await c.closed();
  });

  it('refuses a first frame that is not a hello with ProtocolUnsupported', async () => {
    const c = await connect(await start());
    c.send(cueFrame('c1'));
    expect(await c.next()).toMatchObject({ type: 'error', code: 'ProtocolUnsupported' });
    await c.closed();
  });

  it('refuses another session with SessionUnknown; an upper-case form of its own is accepted', async () => {
    const url = await start({ instanceId: 'inst-1' });
    const c = await connect(url);
    c.send(hello(randomUUID()));
    expect(await c.next()).toMatchObject({ type: 'error', code: 'SessionUnknown' });
    await c.closed();
    const d = await connect(url);
    d.send(hello(SESSION.toUpperCase()));
    expect(await d.next()).toEqual({ type: 'welcome', instance_id: 'inst-1', ready: true });
  });

  it('rotate: the old session stops working at once and open connections close', async () => {
    const url = await start();
    const open = await welcomed(url);
    const fresh = endpoint!.rotate();
    expect(fresh).not.toBe(SESSION);
    await open.closed();
    const c = await connect(url);
    c.send(hello(SESSION));
    expect(await c.next()).toMatchObject({ type: 'error', code: 'SessionUnknown' });
    const d = await connect(url);
    d.send(hello(fresh));
    expect(await d.next()).toMatchObject({ type: 'welcome' });
  });
});

describe('BridgeEndpoint cues', () => {
  it('applies at most once per cue_id, even when the repeat arrives while the first is being applied', async () => {
    const applied: AppliedCue[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const url = await start({
      apply: async (c) => {
        applied.push(c);
        await gate;
      },
    });
    const a = await welcomed(url);
    const b = await welcomed(url);
    a.send(cueFrame('c_once'));
    await until(() => applied.length === 1);
    b.send(cueFrame('c_once'));
    await new Promise((r) => setTimeout(r, 50));
    release();
    const first = await a.next();
    const second = await b.next();
    expect(first).toMatchObject({ type: 'cue_ack', cue_id: 'c_once', duplicate: false });
    expect(second).toEqual({ ...first, duplicate: true });
    expect(applied).toHaveLength(1);
  });

  it('refuses a cue past deliver_by with Expired and applies nothing', async () => {
    const applied: AppliedCue[] = [];
    const c = await welcomed(await start({ apply: (cue) => void applied.push(cue) }));
    c.send(cueFrame('c_old', { deliver_by: new Date(Date.now() - 1).toISOString() }));
    expect(await c.next()).toMatchObject({ type: 'cue_nack', cue_id: 'c_old', code: 'Expired' });
    expect(applied).toHaveLength(0);
  });

  it('answers Busy when its queue is full', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const url = await start({ queueLimit: 1, apply: () => gate });
    const [a, b, c] = [await welcomed(url), await welcomed(url), await welcomed(url)];
    a.send(cueFrame('c_a'));
    await until(() => endpoint!.state.cue_id === 'c_a');
    b.send(cueFrame('c_b'));
    // b waits in the queue (no answer yet); give its frame time to arrive before c.
    await new Promise((r) => setTimeout(r, 50));
    c.send(cueFrame('c_c'));
    expect(await c.next()).toMatchObject({ type: 'cue_nack', cue_id: 'c_c', code: 'Busy' });
    release();
    expect(await a.next()).toMatchObject({ type: 'cue_ack', cue_id: 'c_a' });
    expect(await b.next()).toMatchObject({ type: 'cue_ack', cue_id: 'c_b' });
  });

  it('answers an invalid cue with Invalid, naming the field', async () => {
    const c = await welcomed(await start());
    c.send(cueFrame('c_bad', { intensity: 'high' }));
    const nack = await c.next();
    expect(nack).toMatchObject({ type: 'cue_nack', cue_id: 'c_bad', code: 'Invalid' });
    expect(String(nack.message)).toContain('intensity');
  });

  it('shows the cue, then returns to neutral after ttl_ms and tells its listeners', async () => {
    const c = await welcomed(await start());
    let changes = 0;
    endpoint!.onChange(() => changes++);
    c.send(cueFrame('c_ttl', { ttl_ms: 150, message: 'brb' }));
    expect(await c.next()).toMatchObject({ type: 'cue_ack' });
    expect(endpoint!.state).toMatchObject({
      action: 'nod',
      emotion: 'curious',
      gaze: 'content',
      message: 'brb',
    });
    await new Promise<void>((r) => {
      const off = endpoint!.onChange(() => {
        if (endpoint!.state.action === 'none') {
          off();
          r();
        }
      });
    });
    expect(endpoint!.state).toMatchObject({
      action: 'none',
      emotion: 'neutral',
      gaze: 'neutral',
      message: null,
    });
    expect(changes).toBeGreaterThanOrEqual(2);
  });
});
