/**
 * Fuzzing `ogf-bridge/1` from both ends (issue 6 item 4, contracts.md 4 and 6):
 *  - a fake client sends generated hostile frames to the real app-side endpoint (bridge-client/endpoint.ts):
 *    a bad hello is refused with an `error` frame and a close, a bad cue gets `cue_nack Invalid` on a socket
 *    that stays open, and the avatar never changes;
 *  - a fake app answers the real `ogf-bridge-client deliver` with generated hostile frames: the client always
 *    prints exactly one line, picks the outcome the contract gives for where the garbage came (before the
 *    cue was written → not_delivered/BridgeRejected, after → unknown/DeliveryUnconfirmed) and never prints
 *    the session UUID, even when the app echoes it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { BridgeEndpoint } from '../bridge-client/endpoint.js';
import { type DeliverRun, runDeliver } from './helpers/deliver.js';
import { CUE_FIELDS, type FieldOracle, FUZZ_SEED, hostileValue, mutated, offending } from './helpers/fuzz.js';

const ENDPOINT_RUNS = 200;
const CLIENT_RUNS = 14;
const SESSION = randomUUID();
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isIso = (v: unknown) => typeof v === 'string' && ISO_MS.test(v) && new Date(v).toISOString() === v;

/** What a cue frame accepts (contract 6 step 3 and 3.3), from the contract. */
const CUE_FRAME: FieldOracle = {
  type: (v) => v === 'cue',
  cue_id: (v) => typeof v === 'string' && [...v].length >= 1 && [...v].length <= 64,
  action: (v) => ['none', 'wave', 'nod', 'shake_head', 'small_guts_pose', 'celebrate'].includes(v as string),
  emotion: (v) =>
    ['neutral', 'happy', 'excited', 'curious', 'surprised', 'concerned', 'sad', 'proud'].includes(
      v as string,
    ),
  intensity: (v) => typeof v === 'number' && v >= 0 && v <= 1,
  gaze: (v) => ['neutral', 'user', 'content', 'away'].includes(v as string),
  ttl_ms: (v) => Number.isInteger(v) && (v as number) >= 100 && (v as number) <= 10_000,
  message: CUE_FIELDS.message!,
  deliver_by: isIso,
};
// A valid cue whose deliver_by has passed: a frame the generator leaves valid gets `Expired`, changing nothing.
const PAST_CUE = {
  type: 'cue',
  cue_id: 'c_fuzz_cue_0001',
  action: 'wave',
  emotion: 'happy',
  intensity: 0.5,
  gaze: 'user',
  ttl_ms: 1000,
  message: 'hi',
  deliver_by: '2020-01-01T00:00:00.000Z',
};

type Msg = { frame: Record<string, unknown> } | { closed: number };

/** Opens a fake client; `next()` yields the next frame or the close. */
async function fakeClient(url: string) {
  const ws = new WebSocket(url);
  const inbox: Msg[] = [];
  let wake: (() => void) | undefined;
  ws.on('message', (d) => {
    inbox.push({ frame: JSON.parse(String(d)) as Record<string, unknown> });
    wake?.();
  });
  ws.on('close', (code) => {
    inbox.push({ closed: code });
    wake?.();
  });
  ws.on('error', () => {});
  await new Promise<void>((res, rej) => {
    ws.once('open', () => res());
    ws.once('error', rej);
  });
  return {
    ws,
    async next(): Promise<Msg> {
      for (;;) {
        const m = inbox.shift();
        if (m) return m;
        await new Promise<void>((res, rej) => {
          const t = setTimeout(() => rej(new Error('endpoint did not answer')), 15_000);
          wake = () => {
            clearTimeout(t);
            res();
          };
        });
      }
    },
  };
}

describe('[c3.2.bad-input] a fake client against the real app-side endpoint', () => {
  let server: Server;
  let endpoint: BridgeEndpoint;
  let url: string;
  let applied = 0;

  beforeAll(async () => {
    endpoint = new BridgeEndpoint({ sessionId: SESSION, apply: () => void applied++ });
    server = createServer((_q, r) => r.writeHead(404).end());
    server.on('upgrade', (req, socket, head) => endpoint.handleUpgrade(req, socket, head));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ogf-bridge`;
  });
  afterAll(async () => {
    await endpoint.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it(`${ENDPOINT_RUNS} hostile hellos are refused with an error frame and a close; none is welcomed`, async () => {
    const hello = { type: 'hello', protocol: 'ogf-bridge/1', session_id: SESSION, client: 'fuzz/1' };
    const frames = fc
      .sample(
        fc.oneof(
          mutated(hello, {
            type: () => false,
            protocol: () => false,
            session_id: () => false,
            client: () => true,
          }),
          hostileValue,
        ),
        { numRuns: ENDPOINT_RUNS, seed: FUZZ_SEED + 42 },
      )
      .filter((f) => {
        // Drop the few generated frames that are still a correct hello: those are rightly welcomed.
        const o = f as Record<string, unknown>;
        return !(
          o &&
          o.type === 'hello' &&
          o.protocol === 'ogf-bridge/1' &&
          // Only a string can be the session UUID (and String() throws on a null-prototype object).
          typeof o.session_id === 'string' &&
          o.session_id.toLowerCase() === SESSION
        );
      });
    for (const f of frames) {
      const text = JSON.stringify(f) ?? 'null';
      const c = await fakeClient(url);
      c.ws.send(text);
      const first = await c.next();
      if (Buffer.byteLength(text) > 64 * 1024) {
        expect(first).toEqual({ closed: 1009 });
        continue;
      }
      expect('frame' in first, text.slice(0, 100)).toBe(true);
      const frame = (first as { frame: Record<string, unknown> }).frame;
      expect(frame.type).toBe('error');
      expect(['SessionUnknown', 'ProtocolUnsupported']).toContain(frame.code);
      expect(JSON.stringify(frame)).not.toContain(SESSION);
      expect(await c.next()).toMatchObject({ closed: 1008 });
    }
    expect(applied).toBe(0);
  });

  it(`${ENDPOINT_RUNS} hostile cue frames after a good hello get cue_nack; the socket stays open; the avatar never moves`, async () => {
    const c = await fakeClient(url);
    c.ws.send(
      JSON.stringify({ type: 'hello', protocol: 'ogf-bridge/1', session_id: SESSION, client: 'fuzz/1' }),
    );
    expect(await c.next()).toMatchObject({ frame: { type: 'welcome', ready: true } });
    const frames = fc.sample(mutated(PAST_CUE, CUE_FRAME), { numRuns: ENDPOINT_RUNS, seed: FUZZ_SEED + 7 });
    let invalid = 0;
    for (const f of frames) {
      const text = JSON.stringify(f);
      if (Buffer.byteLength(text) > 64 * 1024) continue; // the size cap is checked in the hello test
      c.ws.send(text);
      const m = await c.next();
      expect('frame' in m, `${text.slice(0, 120)} closed the socket`).toBe(true);
      const nack = (m as { frame: Record<string, unknown> }).frame;
      expect(nack.type).toBe('cue_nack');
      const bad = offending(f, CUE_FRAME);
      expect(nack.code, text.slice(0, 200)).toBe(bad.length > 0 ? 'Invalid' : 'Expired');
      if (bad.length > 0) invalid++;
    }
    for (const raw of [
      'not json',
      '[]',
      'null',
      '{"__proto__":{"type":"cue"}}',
      `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
    ]) {
      c.ws.send(raw);
      expect(await c.next()).toMatchObject({ frame: { type: 'cue_nack', code: 'Invalid' } });
    }
    expect(invalid).toBeGreaterThan(ENDPOINT_RUNS / 2);
    expect(applied).toBe(0);
    expect(endpoint.state).toMatchObject({ action: 'none', emotion: 'neutral', gaze: 'neutral' });
    c.ws.close();
  });
});

// ---- the real bridge client against a fake app --------------------------------------------------------

describe('[c3.2.bad-input] the real bridge client against a fake app sending hostile frames', () => {
  let dir: string;
  let wss: WebSocketServer;
  let url: string;
  /** What the fake app answers: to the hello, and (after a good welcome) to the cue. */
  let script: { hello: string | Buffer; cue?: string | Buffer } = { hello: '' };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ogf-fuzz-bridge-'));
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ogf-bridge`;
    wss.on('connection', (ws) => {
      let step = 0;
      ws.on('message', () => {
        const reply = step++ === 0 ? script.hello : script.cue;
        if (reply !== undefined) ws.send(reply, { binary: Buffer.isBuffer(reply) });
      });
      ws.on('error', () => {});
    });
  });
  afterAll(async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((r) => wss.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  let n = 0;
  function sessionFile(): string {
    const path = join(dir, `cue-${n++}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        v: 1,
        pending_id: 'c_fuzz_pending_1',
        bridge_url: url,
        session_id: SESSION,
        cue: { action: 'nod', emotion: 'curious', intensity: 0.3, gaze: 'user', ttl_ms: 800 },
        deliver_by: new Date(Date.now() + 8000).toISOString(),
        delivery_timeout_ms: 600,
      }),
      { mode: 0o600 },
    );
    return path;
  }

  function checkRun(r: DeliverRun, context: string): Record<string, unknown> {
    expect(r.lines, `${context}: exactly one line`).toHaveLength(1);
    const line = JSON.parse(r.lines[0]!) as Record<string, unknown>;
    expect(r.code, context).toBe({ delivered: 0, not_delivered: 2, unknown: 3 }[line.outcome as string]);
    expect(r.lines[0]!.toLowerCase(), `${context}: the UUID reached stdout`).not.toContain(SESSION);
    expect(r.stderr.toLowerCase()).not.toContain(SESSION);
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
    return line;
  }

  // Hostile app frames, with some that echo the session UUID back in every string field.
  const appGarbage = fc.oneof(
    hostileValue.map((v) => JSON.stringify(v) ?? 'null'),
    fc
      .record({
        type: fc.constantFrom('welcome', 'error', 'cue_ack', 'cue_nack', 'hello', 'cue', '__proto__'),
        instance_id: fc.oneof(hostileValue, fc.constant(SESSION)),
        ready: hostileValue,
        code: fc.oneof(hostileValue, fc.constant(SESSION), fc.constantFrom('Busy', 'Expired', 'Invalid')),
        message: fc.oneof(hostileValue, fc.constant(`session ${SESSION} unknown`)),
        cue_id: fc.oneof(hostileValue, fc.constant('c_fuzz_pending_1')),
        applied_at: fc.oneof(hostileValue, fc.constant(SESSION), fc.constant(new Date().toISOString())),
        duplicate: hostileValue,
      })
      .map((f) => JSON.stringify(f)),
    fc.constant(Buffer.from([0xff, 0x00, 0xfe])),
  );

  it(`${CLIENT_RUNS} hostile handshake answers: one line, not_delivered (exit 2), no UUID printed`, async () => {
    for (const hello of fc.sample(appGarbage, { numRuns: CLIENT_RUNS, seed: FUZZ_SEED + 1 })) {
      script = { hello };
      const r = await runDeliver(sessionFile());
      const line = checkRun(r, `hello answered with ${String(hello).slice(0, 120)}`);
      // A well-formed welcome or error may sneak through the generator; anything else is a rejection.
      expect(['not_delivered', 'unknown']).toContain(line.outcome);
      if (line.outcome === 'not_delivered')
        expect(['BridgeRejected', 'BridgeUnreachable', 'AvatarNotReady']).toContain(line.code);
    }
  });

  it(`${CLIENT_RUNS} hostile answers to the cue: one line, delivered only on a real ack, never the UUID`, async () => {
    const welcome = JSON.stringify({ type: 'welcome', instance_id: 'fake', ready: true });
    const cases = fc.sample(appGarbage, { numRuns: CLIENT_RUNS, seed: FUZZ_SEED + 2 });
    // The sharpest case first: a perfect ack whose applied_at is the session UUID itself.
    cases.unshift(
      JSON.stringify({ type: 'cue_ack', cue_id: 'c_fuzz_pending_1', applied_at: SESSION, duplicate: false }),
    );
    for (const cue of cases) {
      script = { hello: welcome, cue };
      const r = await runDeliver(sessionFile());
      const line = checkRun(r, `cue answered with ${String(cue).slice(0, 160)}`);
      if (line.outcome === 'delivered') {
        const ack = line.ack as Record<string, unknown>;
        expect(ack.cue_id).toBe('c_fuzz_pending_1');
        expect(isIso(ack.applied_at), `applied_at ${String(ack.applied_at)}`).toBe(true);
      } else if (line.outcome === 'not_delivered') {
        expect(line.code).toBe('BridgeRejected'); // a cue_nack for this cue
      } else {
        expect(line.code).toBe('DeliveryUnconfirmed');
      }
    }
  });
});
