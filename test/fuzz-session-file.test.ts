/**
 * Fuzzing the one-time session file (issue 6 item 4, contracts.md 4): the real
 * `ogf-bridge-client deliver` against generated files — fields of the wrong type, stray and prototype
 * keys, huge and deeply nested content, invalid UTF-8, truncation, a FIFO, a large file. Every refused
 * file gives exit 2 and exactly one line `not_delivered`/`SessionFileRejected`; nothing connects to the
 * app; the UUID never appears in the output.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { runDeliver } from './helpers/deliver.js';
import { CUE_FIELDS, type FieldOracle, FUZZ_SEED, mutated, offending } from './helpers/fuzz.js';

const RUNS = 24;
const SESSION = randomUUID();
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('[c3.2.bad-input] [c4.session-file] the real bridge client against generated session files', () => {
  let dir: string;
  let app: WebSocketServer;
  let url: string;
  let connections = 0;
  let n = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ogf-fuzz-sf-'));
    // An app that counts connections: a refused file must never reach it.
    app = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((r) => app.once('listening', () => r()));
    app.on('connection', (ws) => {
      connections++;
      ws.close();
    });
    url = `ws://127.0.0.1:${(app.address() as AddressInfo).port}/ogf-bridge`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => app.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  function file(content: string | Buffer, mode = 0o600): string {
    const path = join(dir, `cue-${n++}.json`);
    writeFileSync(path, content, { mode });
    chmodSync(path, mode);
    return path;
  }

  async function expectRejected(path: string, what: string): Promise<void> {
    const before = connections;
    const r = await runDeliver(path);
    expect(r.lines, `${what}: one line`).toHaveLength(1);
    const line = JSON.parse(r.lines[0]!) as Record<string, unknown>;
    expect(line, what).toMatchObject({ outcome: 'not_delivered', code: 'SessionFileRejected' });
    expect(r.code, what).toBe(2);
    expect(typeof line.detail).toBe('string');
    expect(r.lines[0]!.toLowerCase()).not.toContain(SESSION);
    expect(r.stderr.toLowerCase()).not.toContain(SESSION);
    expect(connections, `${what}: connected to the app`).toBe(before);
  }

  const base = () => ({
    v: 1,
    pending_id: 'c_fuzz_session_1',
    bridge_url: url,
    session_id: SESSION,
    cue: { action: 'wave', emotion: 'happy', intensity: 0.5, gaze: 'user', ttl_ms: 1000, message: 'hi' },
    deliver_by: new Date(Date.now() + 60_000).toISOString(),
    delivery_timeout_ms: 1000,
  });
  /** Contract 4's fields (delivery_timeout_ms bounded as the product documents it). */
  const FILE: FieldOracle = {
    v: (v) => v === 1,
    pending_id: (v) => typeof v === 'string' && [...v].length >= 1 && [...v].length <= 64,
    bridge_url: (v) => typeof v === 'string' && /^wss?:\/\//.test(v),
    session_id: CUE_FIELDS.session_id!,
    cue: (v) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
      const c = v as Record<string, unknown>;
      const known = ['action', 'emotion', 'intensity', 'gaze', 'ttl_ms', 'message'];
      return (
        Object.keys(c).every((k) => known.includes(k)) &&
        known.every((k) => CUE_FIELDS[k]!(Object.hasOwn(c, k) ? c[k] : undefined)) &&
        c.ttl_ms !== undefined
      );
    },
    deliver_by: (v) => typeof v === 'string' && ISO_MS.test(v) && new Date(v).toISOString() === v,
    delivery_timeout_ms: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 600_000,
  };

  it(`${RUNS} generated invalid session files are refused with SessionFileRejected and never connect`, async () => {
    const cueMut = mutated(base().cue, {
      action: CUE_FIELDS.action!,
      emotion: CUE_FIELDS.emotion!,
      intensity: CUE_FIELDS.intensity!,
      gaze: CUE_FIELDS.gaze!,
      ttl_ms: (v) => Number.isInteger(v) && (v as number) >= 100 && (v as number) <= 10_000,
      message: CUE_FIELDS.message!,
    });
    const arb = fc.oneof(
      mutated(base(), FILE),
      cueMut.map((cue) => ({ ...base(), cue })),
    );
    const files = fc
      .sample(arb, { numRuns: RUNS * 3, seed: FUZZ_SEED + 99 })
      .filter((f) => offending(f, FILE).length > 0)
      .slice(0, RUNS);
    expect(files.length).toBe(RUNS);
    for (const f of files) {
      const text = JSON.stringify(f);
      await expectRejected(file(text), `${offending(f, FILE).join(',')}: ${text.slice(0, 160)}`);
    }
  });

  it('garbage bytes, truncation, BOM, deep nesting, prototype keys, a FIFO and an oversized file are refused', async () => {
    const good = JSON.stringify(base());
    const cases: Array<[string, string | Buffer]> = [
      ['empty', ''],
      ['truncated', good.slice(0, good.length - 5)],
      [
        'invalid UTF-8',
        Buffer.concat([
          Buffer.from(good.slice(0, 20)),
          Buffer.from([0xff, 0xfe, 0xc0]),
          Buffer.from(good.slice(20)),
        ]),
      ],
      ['UTF-8 BOM', `\ufeff${good}`],
      ['NUL bytes', Buffer.alloc(100)],
      ['deep nesting', `${'['.repeat(7000)}${']'.repeat(7000)}`],
      ['a JSON string', JSON.stringify(good)],
      ['an array', `[${good}]`],
      ['__proto__ key', good.replace('{', '{"__proto__":{"v":1},')],
      ['constructor key', good.replace('{', '{"constructor":{"prototype":{}},')],
      // JSON keeps the last of duplicate keys: a bad one placed last must be what is judged.
      ['duplicate session_id key', good.replace(/}$/, ',"session_id":"not-a-uuid"}')],
      ['too large', JSON.stringify({ ...base(), pad: 'x'.repeat(20_000) })],
    ];
    for (const [what, content] of cases) await expectRejected(file(content), what);
    // A FIFO planted at the path must not hang the client (O_NONBLOCK) and is refused.
    const fifo = join(dir, 'cue-fifo.json');
    const mk = spawn('mkfifo', ['-m', '600', fifo]);
    const made = await new Promise<number | null>((r) => mk.on('close', r)).catch(() => null);
    if (made === 0) {
      await expectRejected(fifo, 'a FIFO');
      expect(existsSync(fifo)).toBe(true); // refused, not ours to delete
    } else {
      process.stdout.write('fuzz-session-file: mkfifo unavailable, FIFO case skipped\n');
    }
    expect(({} as Record<string, unknown>).v).toBeUndefined();
  });

  it('control: the same valid file is accepted and reaches the app (so the refusals above are real)', async () => {
    const before = connections;
    const r = await runDeliver(file(JSON.stringify(base())));
    const line = JSON.parse(r.lines[0]!) as Record<string, unknown>;
    expect(line.code).not.toBe('SessionFileRejected');
    expect(connections).toBe(before + 1);
  });
});
