/**
 * Fuzzing the owner WebSocket (issue 6 item 4, contract 5) over a real socket: generated frames with
 * wrong types, stray and prototype keys, huge strings, deep nesting, binary frames, invalid UTF-8 and
 * oversized frames. Each gets the contract's answer — a `reply` with `BadMessage` (its `req_id` when
 * one could be read) and the socket stays open; over 64 KiB closes with 1009 — and none changes the
 * queued command, reaches another owner, or stops the daemon.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { deep, type FieldOracle, FUZZ_SEED, mutated, offending } from './helpers/fuzz.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue, wsUrl } from './helpers/owner.js';

const RUNS_PER_TYPE = 120;
const MAX_FRAME = 64 * 1024;

const str = (min: number, max: number) => (v: unknown) =>
  typeof v === 'string' && v.length >= min && v.length <= max;
// JSON numbers past 2^53 are not exact, so a version (an equality check) must be a safe integer.
const intAtLeast1 = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 1;
const common: FieldOracle = { type: () => true, req_id: str(0, 64), id: str(1, 128) };
/** What each owner frame accepts (contract 5), written from the contract, not from the product. */
const ORACLES: Record<string, FieldOracle> = {
  approve: { ...common, version: intAtLeast1 },
  deny: { ...common, version: intAtLeast1, note: (v) => v === undefined || str(0, 2000)(v) },
  reconcile: {
    ...common,
    outcome: (v) => v === 'delivered' || v === 'not_delivered',
    note: (v) => v === undefined || str(0, 2000)(v),
  },
  history: {
    type: () => true,
    req_id: str(0, 64),
    before: (v) => v === undefined || str(1, 128)(v),
    limit: (v) => v === undefined || (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 500),
  },
};
// Valid shapes aimed at a command that does not exist, so a frame that happens to be valid changes nothing.
const BASES: Record<string, Record<string, unknown>> = {
  approve: { type: 'approve', req_id: 'q1', id: 'c_doesnotexist00', version: 1 },
  deny: { type: 'deny', req_id: 'q1', id: 'c_doesnotexist00', version: 1, note: 'no' },
  reconcile: { type: 'reconcile', req_id: 'q1', id: 'c_doesnotexist00', outcome: 'delivered', note: 'ok' },
  history: { type: 'history', req_id: 'q1', limit: 5 },
};

type Answer = { frame: Frame } | { closed: number };

/** A raw owner connection: send anything, get the next frame or the close code. */
class RawOwner {
  #ws: WebSocket;
  #inbox: Frame[] = [];
  #closed: number | undefined;
  #wake: (() => void) | undefined;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (d) => {
      this.#inbox.push(JSON.parse(String(d)) as Frame);
      this.#wake?.();
    });
    ws.on('close', (code) => {
      this.#closed = code;
      this.#wake?.();
    });
    ws.on('error', () => {});
  }

  static async open(d: RunningDaemon): Promise<RawOwner> {
    const ws = new WebSocket(wsUrl(d), { headers: { Authorization: `Bearer ${d.ownerToken}` } });
    const o = new RawOwner(ws);
    await new Promise<void>((res, rej) => {
      ws.once('open', () => res());
      ws.once('error', rej);
    });
    while (!o.#inbox.some((f) => f.type === 'snapshot')) await o.#next();
    o.#inbox.length = 0;
    return o;
  }

  get open(): boolean {
    return this.#closed === undefined;
  }

  #next(): Promise<void> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no answer from the owner socket')), 10_000);
      this.#wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  async send(data: string | Buffer, binary = false): Promise<Answer> {
    this.#ws.send(data, { binary });
    for (;;) {
      const f = this.#inbox.shift();
      if (f) return { frame: f };
      if (this.#closed !== undefined) return { closed: this.#closed };
      await this.#next();
    }
  }

  close(): void {
    this.#ws.close();
  }
}

describe('[c3.2.bad-input] owner WebSocket frames', () => {
  let d: RunningDaemon;
  let observer: OwnerSocket;
  let raw: RawOwner;
  let target: Frame;
  let sent = 0;
  let reconnects = 0;

  async function exchange(text: string | Buffer, binary = false): Promise<Answer> {
    if (!raw.open) {
      raw = await RawOwner.open(d);
      reconnects++;
    }
    sent++;
    return raw.send(text, binary);
  }

  beforeAll(async () => {
    const dir = makeDataDir('ogf-fuzz-owner-');
    d = await startDaemon({ dataDir: dir, config: ownerCatalog(`${dir}/marks.txt`) });
    const ai = await mcpClient(d);
    const id = await queue(ai, 'mark', { word: 'fuzz' });
    await ai.close();
    observer = await OwnerSocket.open(d);
    target = observer.snapshotView(id)!;
    expect(target.state).toBe('awaiting_review');
    raw = await RawOwner.open(d);
  });
  afterAll(async () => {
    raw?.close();
    await observer?.close();
    await d?.stop();
  });

  for (const type of Object.keys(BASES)) {
    it(`${type}: ${RUNS_PER_TYPE} generated frames get BadMessage exactly when the contract refuses them`, async () => {
      const oracle = ORACLES[type]!;
      const frames = fc.sample(mutated(BASES[type]!, oracle), {
        numRuns: RUNS_PER_TYPE,
        seed: FUZZ_SEED + type.length * 7919,
      });
      for (const frame of frames) {
        const text = JSON.stringify(frame);
        const a = await exchange(text);
        if (Buffer.byteLength(text) > MAX_FRAME) {
          expect(a, 'a frame over 64 KiB closes with 1009').toEqual({ closed: 1009 });
          continue;
        }
        expect('frame' in a, `${text.slice(0, 200)} closed the socket`).toBe(true);
        const reply = (a as { frame: Frame }).frame;
        const bad = offending(frame, oracle).concat(frame.type === type ? [] : ['type']);
        const reqId = typeof frame.req_id === 'string' && frame.req_id.length <= 64 ? frame.req_id : null;
        if (bad.length > 0) {
          expect(reply.type, text.slice(0, 200)).toBe('reply');
          expect(reply.ok).toBe(false);
          expect(reply.error.code).toBe('BadMessage');
          expect(reply.req_id).toBe(reqId);
          const message = String(reply.error.message);
          expect(message).not.toContain('\n');
          expect(message.length).toBeLessThan(600);
          expect(
            bad.some((f) => message.includes(f)),
            `${message} should name one of ${bad.join(', ')}`,
          ).toBe(true);
        } else if (type === 'history') {
          expect(reply.type).toBe('history');
        } else {
          expect(reply.error?.code, text).toBe('NotFound');
        }
      }
    });
  }

  it('non-JSON, non-objects, unknown types, deep nesting and binary frames get BadMessage; the socket stays open', async () => {
    const cases: Array<[string | Buffer, boolean, string | null]> = [
      ['', false, null],
      ['not json', false, null],
      ['{"type":"approve"', false, null],
      ['null', false, null],
      ['[]', false, null],
      ['42', false, null],
      ['"approve"', false, null],
      ['{"type":"snapshot","req_id":"a"}', false, 'a'],
      ['{"type":"__proto__","req_id":"b"}', false, 'b'],
      ['{"__proto__":{"type":"approve"},"req_id":"c","id":"x","version":1}', false, 'c'],
      ['{"type":"constructor","req_id":"d"}', false, 'd'],
      [`{"type":"approve","req_id":"e","id":${'['.repeat(5000)}${']'.repeat(5000)},"version":1}`, false, 'e'],
      [
        `{"type":"deny","req_id":"g","id":"x","version":1,"note":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
        false,
        'g',
      ],
      [JSON.stringify({ type: 'approve', req_id: 'h', id: deep(200, 'object'), version: 1 }), false, 'h'],
      [`${'['.repeat(30_000)}${']'.repeat(30_000)}`, false, null],
      [JSON.stringify({ type: 'history', req_id: 'f'.repeat(65), limit: 1 }), false, null],
      [Buffer.from(JSON.stringify(BASES.history)), true, null],
    ];
    for (const [data, binary, reqId] of cases) {
      const a = await exchange(data, binary);
      expect('frame' in a, `${String(data).slice(0, 60)} closed the socket`).toBe(true);
      const reply = (a as { frame: Frame }).frame;
      expect(reply).toMatchObject({ type: 'reply', ok: false, req_id: reqId, error: { code: 'BadMessage' } });
      expect(raw.open).toBe(true);
    }
    expect(({} as Record<string, unknown>).type).toBeUndefined();
  });

  it('invalid UTF-8 in a text frame closes with 1007 (RFC 6455 requires it); a frame over 64 KiB with 1009', async () => {
    const invalid = Buffer.from([0x7b, 0x22, 0x74, 0xff, 0xfe, 0x22, 0x7d]);
    expect(await exchange(invalid, false)).toEqual({ closed: 1007 });
    expect(await exchange(`{"type":"history","req_id":"${'x'.repeat(MAX_FRAME)}"}`)).toEqual({
      closed: 1009,
    });
    // A fresh connection works normally afterwards.
    const a = await exchange(JSON.stringify({ type: 'history', req_id: 'after', limit: 1 }));
    expect(a).toMatchObject({ frame: { type: 'history', req_id: 'after' } });
  });

  it('after all of it: the command is unchanged, no owner saw a change, the daemon answers', async () => {
    expect(sent).toBeGreaterThan(RUNS_PER_TYPE * 4);
    expect(observer.frames.filter((f) => f.type === 'upsert')).toEqual([]);
    expect(observer.closeCode).toBeUndefined();
    const fresh = await OwnerSocket.open(d);
    const now = fresh.snapshotView(target.id);
    await fresh.close();
    expect(now).toEqual(target);
    expect(d.child.exitCode).toBeNull();
    process.stdout.write(
      `fuzz-owner: ${sent} frames sent, ${reconnects} reconnects after 1007/1009 closes\n`,
    );
  });
});
