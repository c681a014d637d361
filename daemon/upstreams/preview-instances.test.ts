/**
 * The preview instance of a stdio upstream (./preview-instances.ts, contract 12 (v4)): started on demand with
 * the upstream's own argv, stopped after 60 s without a preview call (a fake clock: no waiting), at once a
 * new one after it, 2 s after its last call when a call timed out, and all of them when the daemon stops.
 * The server is our real test upstream over the real stdio transport (transport.ts, `instance: "preview"`).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import type { Logger } from '../base/log.js';
import type { UpstreamConfig } from '../config/index.js';
import { Confiner } from '../sandbox/index.js';
import { PREVIEW_IDLE_MS, PreviewInstances, RETIRED_GRACE_MS } from './preview-instances.js';
import type { StdioUpstreamTransport } from './stdio.js';
import { openTransport } from './transport.js';

const TEST_UPSTREAM = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'test-upstream.mjs');
const config = (mode: string): UpstreamConfig => ({
  argv: [process.execPath, TEST_UPSTREAM, mode],
  timeout_s: 60,
  trust_read_only_hint: false,
  bind_previews: true,
  approvals: 1,
  wait_seconds: 50,
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, pred: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (pred()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function world() {
  const clock = new FakeClock();
  const lines: Array<{ event: string; fields: Record<string, unknown> }> = [];
  const log: Logger = { log: (_level, event, fields) => lines.push({ event, fields: fields ?? {} }) };
  const pids: number[] = [];
  const previews = new PreviewInstances({
    version: 'test',
    log,
    clock,
    handshakeMs: 30_000,
    open: (name, c) => {
      // Confined as in the daemon (contract 21: bubblewrap, nothing writable).
      const t = openTransport(
        name,
        c,
        log,
        process.env,
        'preview',
        new Confiner(process.env, []),
      ) as StdioUpstreamTransport;
      const start = t.start.bind(t);
      t.start = async () => {
        await start();
        pids.push(t.pid!);
      };
      return t;
    },
  });
  return { clock, lines, pids, previews };
}

async function echo(previews: PreviewInstances, text: string): Promise<unknown> {
  const r = await previews.lease('u', config('ok'));
  if (!r.ok) throw new Error(r.why);
  try {
    return await r.lease.client.request({
      method: 'tools/call',
      params: { name: 'echo', arguments: { text } },
    });
  } finally {
    r.lease.release();
  }
}

describe('[c12.idle] preview instances', () => {
  it('[c12.idle] one is started on demand, shared, and stopped after 60 s without a preview call', async () => {
    const { clock, lines, pids, previews } = world();
    expect(previews.running).toBe(0);
    expect(JSON.stringify(await echo(previews, 'one'))).toContain('one');
    expect(JSON.stringify(await echo(previews, 'two'))).toContain('two');
    // The second lease went to the same instance.
    expect(pids).toHaveLength(1);
    const pid = pids[0]!;
    clock.advance(PREVIEW_IDLE_MS - 1);
    expect(previews.running).toBe(1);
    // A call meanwhile starts the idle time again.
    expect(JSON.stringify(await echo(previews, 'three'))).toContain('three');
    clock.advance(PREVIEW_IDLE_MS - 1);
    expect(previews.running).toBe(1);
    expect(alive(pid)).toBe(true);
    clock.advance(1);
    expect(previews.running).toBe(0);
    await until('the idle instance gone', () => !alive(pid));
    expect(lines).toContainEqual({
      event: 'upstream_preview_stopped',
      fields: { upstream: 'u', why: 'idle' },
    });
    // The next preview starts a new one.
    expect(JSON.stringify(await echo(previews, 'four'))).toContain('four');
    expect(pids).toHaveLength(2);
    await previews.close();
    await until('the instance stopped with the daemon', () => !alive(pids[1]!));
    expect(await previews.lease('u', config('ok'))).toEqual({ ok: false, why: 'the daemon is stopping' });
    await previews.close();
  });

  it('[c12.idle] after a call that got no answer in time, new calls go to a fresh instance; the stuck one stops 2 s after its last call', async () => {
    const { clock, pids, previews } = world();
    const first = await previews.lease('u', config('ok'));
    if (!first.ok) throw new Error(first.why);
    // Held by another computation: the stuck instance stays while it is in use.
    const other = await previews.lease('u', config('ok'));
    if (!other.ok) throw new Error(other.why);
    first.lease.release(true);
    expect(JSON.stringify(await echo(previews, 'fresh'))).toContain('fresh');
    expect(pids).toHaveLength(2);
    clock.advance(RETIRED_GRACE_MS);
    expect(alive(pids[0]!)).toBe(true);
    other.lease.release();
    clock.advance(RETIRED_GRACE_MS - 1);
    expect(previews.running).toBe(2);
    clock.advance(1);
    expect(previews.running).toBe(1);
    await until('the stuck instance gone', () => !alive(pids[0]!));
    expect(alive(pids[1]!)).toBe(true);
    await previews.close();
  });

  it('[c12.idle] an instance that dies fails its lease; stderr is logged as the preview instance', async () => {
    const { lines, previews } = world();
    const r = await previews.lease('u', config('exit-at-start'));
    expect(r.ok).toBe(false);
    await until('its stderr logged', () => lines.some((l) => l.event === 'upstream_stderr'));
    expect(lines.find((l) => l.event === 'upstream_stderr')?.fields).toEqual({
      upstream: 'u',
      instance: 'preview',
      line: 'test-upstream: exiting at start on purpose',
    });
    expect(previews.running).toBe(0);
    await previews.close();
  });
});
