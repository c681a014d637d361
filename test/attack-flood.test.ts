/**
 * The AI floods the queue (contracts.md 1.3, 3.2, 5, all v2). Before the PENDING caps one client's
 * JSON-RPC batches queued thousands of commands a second; every snapshot carried every one, the terminal
 * client died at 100 MiB ("Max payload size exceeded"), and past V8's string limit the owner hub's
 * snapshot threw `RangeError: Invalid string length` out of the upgrade callback: the daemon exited, and
 * since pending commands survive restarts, every later owner connection killed it again.
 *
 * Driven as an attacker would: raw POSTs of JSON-RPC arrays to /mcp from several clients at once, then
 * the owner over the real /owner/ws and the real `ogf-broker list` process, across a real restart.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { OWNER_CLIENT_MAX_PAYLOAD } from '../daemon/owner-terminal/index.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { commandCount, makeClientToken } from './helpers/mcp.js';
import { type Frame, OwnerSocket, wsUrl } from './helpers/owner.js';
import { queuedId, RawMcp, type RpcResponse, refusalText } from './helpers/raw-mcp.js';

/** A catalog command whose one param takes any 4096 characters: the largest View an AI can make. */
const NOTE = {
  description: 'Print a note',
  argv: ['/bin/echo', '{text}'],
  params: { text: { type: 'string', max_length: 4096 } },
  timeout_s: 30,
};

const call = (text: string, extra: Record<string, unknown> = {}) => ({
  command: 'note',
  args: { text },
  wait_seconds: 0,
  ...extra,
});

function split(responses: RpcResponse[]): { queued: string[]; refused: string[] } {
  const queued: string[] = [];
  const refused: string[] = [];
  for (const r of responses) {
    const id = queuedId(r);
    if (id !== undefined) queued.push(id);
    else refused.push(refusalText(r) ?? `neither queued nor refused: ${JSON.stringify(r).slice(0, 300)}`);
  }
  return { queued, refused };
}

const PER_CLIENT =
  /^TooManyPending: max_pending_per_client is (\d+) and this client already has \1 PENDING commands, so nothing was queued; wait for your pending commands to be decided/;
const GLOBAL = (n: number) =>
  new RegExp(
    `^TooManyPending: max_pending is ${n} and all clients together already have ${n} PENDING commands, so nothing was queued; wait for pending commands`,
  );

/** A bare owner connection that only records how it was closed. */
class BareOwner {
  readonly closed: Promise<number>;
  constructor(d: RunningDaemon) {
    const ws = new WebSocket(wsUrl(d), { headers: { Authorization: `Bearer ${d.ownerToken}` } });
    ws.on('error', () => {});
    this.closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
  }
}

describe('a flood of JSON-RPC batches against small caps', () => {
  const PER = 20;
  const ALL = 30;
  let d: RunningDaemon;
  let watcher: OwnerSocket;
  let a: RawMcp;
  let b: RawMcp;
  let bToken: string;
  let first: string;
  const ids = { a: [] as string[], b: [] as string[] };

  beforeAll(async () => {
    d = await startDaemon({
      dataDir: makeDataDir('ogf-flood-'),
      config: {
        review_timeout_s: 3600,
        max_pending_per_client: PER,
        max_pending: ALL,
        commands: { note: NOTE },
      },
    });
    // Watches every upsert from before the flood: what the owner sees of it.
    watcher = await OwnerSocket.open(d);
    a = await RawMcp.open(d, d.mcpToken);
    bToken = await makeClientToken(d, 'second');
    b = await RawMcp.open(d, bToken);
  });

  afterAll(async () => {
    await watcher?.close();
    await d?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('[c1.3.pending-caps] ten batches of 100 at once queue exactly max_pending_per_client; every other call is TooManyPending', async () => {
    const [one] = await a.batch([call('the first', { request_id: 'first' })]);
    first = queuedId(one!)!;
    expect(first).toBeDefined();
    const batches = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        a.batch(Array.from({ length: 100 }, (_, i) => call(`flood ${n}-${i}`))),
      ),
    );
    const { queued, refused } = split(batches.flat());
    expect(new Set(queued).size).toBe(PER - 1);
    expect(refused).toHaveLength(1000 - (PER - 1));
    for (const text of refused) {
      expect(text).toMatch(PER_CLIENT);
      expect(text).toContain(`max_pending_per_client is ${PER}`);
    }
    ids.a.push(first, ...queued);
    expect(commandCount(d)).toBe(PER);
    // The request_id rule comes first: a repeat is the existing command, not a new one past the cap...
    const [again] = await a.batch([call('the first', { request_id: 'first' })]);
    expect(queuedId(again!)).toBe(first);
    // ...and a new request_id is a new command, refused.
    const [fresh] = await a.batch([call('the second', { request_id: 'second' })]);
    expect(refusalText(fresh!)).toMatch(PER_CLIENT);
    expect(commandCount(d)).toBe(PER);
  });

  it('[c1.3.pending-caps] a second client still queues until max_pending, then the broker-wide cap refuses it', async () => {
    const { queued, refused } = split(await b.batch(Array.from({ length: 100 }, (_, i) => call(`b ${i}`))));
    expect(new Set(queued).size).toBe(ALL - PER);
    expect(refused).toHaveLength(100 - (ALL - PER));
    for (const text of refused) expect(text).toMatch(GLOBAL(ALL));
    ids.b.push(...queued);
    expect(commandCount(d)).toBe(ALL);
  });

  it('[c1.3.pending-caps] the owner saw exactly the queued commands, and a decided one frees its place', async () => {
    const denied = ids.b[0]!;
    const reply = await watcher.request({ type: 'deny', id: denied, version: 1 });
    expect(reply).toMatchObject({ ok: true });
    // The reply follows every upsert committed before it on this socket: the flood's are all in.
    const waiting = new Set(
      watcher.frames
        .filter((f) => f.type === 'upsert' && f.command.state === 'awaiting_review')
        .map((f) => f.command.id as string),
    );
    expect([...waiting].sort()).toEqual([...ids.a, ...ids.b].sort());
    expect(
      watcher.frames.filter((f) => f.type === 'upsert' && f.command.state === 'awaiting_review'),
    ).toHaveLength(ALL);
    // One place is free again: b queues one, and the next is refused once more.
    const [one, two] = await b.batch([call('b again 1'), call('b again 2')]);
    const id = queuedId(one!);
    expect(id).toBeDefined();
    ids.b.push(id!);
    ids.b.splice(0, 1);
    expect(refusalText(two!)).toMatch(GLOBAL(ALL));
  });

  /** A new owner's snapshot holds every queued command, and the real `ogf-broker list` prints each one. */
  async function expectOwnerSeesWholeQueue(): Promise<void> {
    const owner = await OwnerSocket.open(d);
    try {
      const snapshot = owner.frames.find((f) => f.type === 'snapshot')!;
      const pending = (snapshot.commands as Frame[]).filter((v) => v.status === 'PENDING').map((v) => v.id);
      expect(pending.sort()).toEqual([...ids.a, ...ids.b].sort());
    } finally {
      await owner.close();
    }
    const list = await runCli(['list', '--data-dir', d.dataDir]);
    expect(list.code, list.stderr).toBe(0);
    for (const id of [...ids.a, ...ids.b]) expect(list.stdout).toContain(id);
  }

  it('[c5.daemon-survives] the owner connects, gets the whole queue in the snapshot, and ogf-broker list works', async () => {
    await expectOwnerSeesWholeQueue();
    expect(d.child.exitCode).toBeNull();
  });

  it('[c5.daemon-survives] after a restart with the full queue the owner connects and lists, and the caps still hold', async () => {
    expect(await d.stop()).toBe(0);
    await watcher.close();
    const dataDir = d.dataDir;
    d = await startDaemon({ dataDir });
    await expectOwnerSeesWholeQueue();
    // The counts were rebuilt from the store: a is at its own cap, b at the broker's.
    a = await RawMcp.open(d, d.mcpToken);
    b = await RawMcp.open(d, bToken);
    expect(refusalText((await a.batch([call('after restart')]))[0]!)).toMatch(PER_CLIENT);
    expect(refusalText((await b.batch([call('after restart')]))[0]!)).toMatch(GLOBAL(ALL));
    expect(commandCount(d)).toBe(ALL + 1);
    expect(d.child.exitCode).toBeNull();
  });

  it('[c5.daemon-survives] an error while serving one owner closes that socket with 1011; the others and the daemon stay', async () => {
    const steady = await OwnerSocket.open(d);
    // A damaged row (disk corruption, a hand edit) makes the store throw while building a snapshot. (Its body
    // stays JSON: broker.db indexes the command name read from it, so SQLite refuses to store malformed JSON.)
    const db = new Database(join(d.dataDir, 'broker.db'));
    const denied = db.prepare("SELECT id, body FROM commands WHERE state = 'denied'").get() as {
      id: string;
      body: string;
    };
    try {
      db.prepare('UPDATE commands SET body = ? WHERE id = ?').run('{"phase":"not a phase"}', denied.id);
      const victim = new BareOwner(d);
      expect(await victim.closed).toBe(1011);
      expect(d.child.exitCode).toBeNull();
      await waitFor(() => d.stderr().includes('"owner_join_failed"'), 'the failure logged');
    } finally {
      db.prepare('UPDATE commands SET body = ? WHERE id = ?').run(denied.body, denied.id);
      db.close();
    }
    // The steady owner still follows changes: a decision reaches it.
    const target = ids.a[1]!;
    expect(await steady.request({ type: 'deny', id: target, version: 1 })).toMatchObject({ ok: true });
    await steady.upsert(target, (v) => v.state === 'denied', 'the deny upsert');
    await steady.close();
    const again = await OwnerSocket.open(d);
    await again.close();
    expect(d.child.exitCode).toBeNull();
  });
});

describe('a flood at the default caps with worst-case Views', () => {
  const CLIENTS = 20; // 20 x max_pending_per_client 100 = max_pending 2000
  const FINAL = 200; // the snapshot's final commands (contract 5)
  // Lone surrogates: JSON-escaped to 6 bytes each (7 in the summary, which quotes the value): the most
  // JSON a code point can become, and allowed in params and justifications (control characters are not).
  const TEXT = '\ud800'.repeat(4096);
  const WHY = '\udfff'.repeat(500);
  // Final commands carry output: 17,000 control characters on each stream, so each View holds 16 KiB of
  // each, escaped to 96 KiB.
  const NOISY = {
    description: 'Noisy note',
    argv: [
      process.execPath,
      '-e',
      'const b = Buffer.alloc(17000, 1); process.stdout.write(b); process.stderr.write(b)',
      '{text}',
    ],
    params: { text: { type: 'string', max_length: 4096 } },
    timeout_s: 60,
  };
  let d: RunningDaemon;

  beforeAll(async () => {
    d = await startDaemon({
      dataDir: makeDataDir('ogf-flood-default-'),
      config: { review_timeout_s: 3600, commands: { note: NOTE, noisy: NOISY } },
    });
  });

  afterAll(async () => {
    await d?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('[c5.daemon-survives] 2000 PENDING and 200 final worst-case Views: the terminal client takes the snapshot and ogf-broker list works', async () => {
    // 200 final commands with output, in waves (each is a real node process).
    const owner = await OwnerSocket.open(d);
    const local = await RawMcp.open(d, d.mcpToken);
    for (let wave = 0; wave < FINAL / 20; wave++) {
      const rs = await local.batch(
        Array.from({ length: 20 }, () => ({
          command: 'noisy',
          args: { text: TEXT },
          justification: WHY,
          wait_seconds: 0,
        })),
      );
      const wave_ids = rs.map((r) => queuedId(r)!);
      for (const id of wave_ids)
        expect(await owner.request({ type: 'approve', id, version: 1 })).toMatchObject({ ok: true });
      for (const id of wave_ids) await owner.upsert(id, (v) => v.state === 'succeeded', `${id} succeeded`);
    }
    await owner.close();

    // 20 clients fill max_pending, 25 calls per POST (a call is ~28 KB of JSON; a POST may hold 1 MiB).
    const tokens = [d.mcpToken];
    for (let i = 1; i <= CLIENTS; i++) tokens.push(await makeClientToken(d, `c${i}`));
    const sessions = await Promise.all(tokens.map((t) => RawMcp.open(d, t)));
    const pending: string[] = [];
    for (const s of sessions.slice(0, CLIENTS)) {
      const rs = await Promise.all(
        Array.from({ length: 4 }, () =>
          s.batch(Array.from({ length: 25 }, () => call(TEXT, { justification: WHY }))),
        ),
      );
      const { queued, refused } = split(rs.flat());
      expect(refused).toEqual([]);
      pending.push(...queued);
    }
    expect(pending).toHaveLength(2000);
    // Full: any client gets TooManyPending — its own cap first, then the broker's.
    expect(refusalText((await sessions[0]!.batch([call('one more')]))[0]!)).toMatch(PER_CLIENT);
    expect(refusalText((await sessions[CLIENTS]!.batch([call('one more')]))[0]!)).toMatch(GLOBAL(2000));
    // The snapshot as the terminal client (same maxPayload) receives it.
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const ws = new WebSocket(wsUrl(d), {
        headers: { Authorization: `Bearer ${d.ownerToken}` },
        maxPayload: OWNER_CLIENT_MAX_PAYLOAD,
      });
      ws.on('message', (data: Buffer) => {
        if (data.subarray(0, 20).toString().startsWith('{"type":"snapshot"')) {
          ws.close();
          resolve(data);
        }
      });
      ws.on('error', reject);
      ws.on('close', (code) => reject(new Error(`closed ${code} before the snapshot`)));
    });
    const snapshot = JSON.parse(raw.toString()) as { commands: Frame[] };
    expect(snapshot.commands).toHaveLength(2000 + FINAL);
    expect(
      snapshot.commands
        .filter((v) => v.status === 'PENDING')
        .map((v) => v.id)
        .sort(),
    ).toEqual(pending.sort());
    for (const v of snapshot.commands.filter((c) => c.status === 'SUCCEEDED')) {
      expect(Buffer.byteLength(v.result.stdout)).toBe(16 * 1024);
      expect(v.result.output_truncated).toBe(true);
    }
    // The workload really is the worst case: past ws's 100 MiB default, at which `list` used to die, and
    // about half the longest string V8 can make (the terminal's limit): 272,760,932 bytes.
    console.info(`worst-case snapshot: ${raw.length} bytes (${(raw.length / 2 ** 20).toFixed(1)} MiB)`);
    expect(raw.length).toBeGreaterThan(100 * 2 ** 20);
    expect(raw.length).toBeLessThan(0.55 * OWNER_CLIENT_MAX_PAYLOAD);
    const list = await runCli(['list', '--all', '--data-dir', d.dataDir]);
    expect(list.code, list.stderr).toBe(0);
    const listed = new Set(list.stdout.match(/^c_[A-Za-z0-9_-]{21}(?= )/gm));
    expect(listed.size).toBe(2000 + FINAL);
    for (const id of pending) expect(listed.has(id), id).toBe(true);
    expect(d.child.exitCode).toBeNull();
  }, 600_000);
});
