/**
 * Quorum through the real daemon (contracts.md 9, 2 rules 1 and 5): two named owners (`owner` and `bob`,
 * made with the real `token owner --name`) on real owner sockets, a real MCP client, a catalog command
 * needing both, counted by the file it appends to. Either order, both at once (many rounds), a repeat, a
 * deny, and a kill -9 between the two approvals.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows } from './helpers/mcp.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, readMarks } from './helpers/owner.js';

const ROUNDS = 15;
let dataDir: string;
let markFile: string;
let d: RunningDaemon;
let ai: Client;
let alice: OwnerSocket;
let bob: OwnerSocket;
let bobToken: string;

function config() {
  const base = ownerCatalog(markFile) as { commands: Record<string, Record<string, unknown>> };
  return { ...base, commands: { ...base.commands, deploy: { ...base.commands.mark, approvals: 2 } } };
}

async function connect(): Promise<void> {
  ai = await mcpClient(d);
  alice = await OwnerSocket.open(d);
  bob = await OwnerSocket.open(d, { Authorization: `Bearer ${bobToken}` });
}

async function queue(word: string): Promise<Frame> {
  const r = (await ai.callTool({
    name: 'run_command_wait',
    arguments: { command: 'deploy', args: { word }, wait_seconds: 0 },
  })) as CallToolResult;
  return r.structuredContent as Frame;
}

async function status(id: string): Promise<Frame> {
  const r = (await ai.callTool({
    name: 'await_command_result',
    arguments: { pending_id: id, wait_seconds: 0 },
  })) as CallToolResult;
  return r.structuredContent as Frame;
}

/** Approves `id` as this owner at the version it last saw; retries once on VersionConflict (a concurrent approval). */
async function approve(o: OwnerSocket, id: string): Promise<Frame> {
  for (;;) {
    await o.view(id, () => true, `${id} seen`);
    const latest = o.latest(id)!;
    const r = await o.request({ type: 'approve', id, version: latest.version });
    if (r.ok || r.error.code !== 'VersionConflict') return r;
    await o.view(id, (x) => x.version > latest.version, 'a newer version');
  }
}

beforeAll(async () => {
  dataDir = makeDataDir('ogf-quorum-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: config() });
  const made = await runCli(['token', 'owner', '--name', 'bob', '--data-dir', dataDir]);
  expect(made.code, made.stderr).toBe(0);
  bobToken = new URL(made.stdout.trim().split('\n').at(-1)!).hash.replace(/^#token=/, '');
  await connect();
});

afterAll(async () => {
  await alice?.close();
  await bob?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(dataDir, { recursive: true, force: true });
});

describe('[c2.rule-5] quorum: two named owners must approve', () => {
  it('each hello names its owner', () => {
    expect(alice.frames[0]).toMatchObject({ type: 'hello', owner: 'owner' });
    expect(bob.frames[0]).toMatchObject({ type: 'hello', owner: 'bob' });
  });

  for (const order of [
    ['owner', 'bob'],
    ['bob', 'owner'],
  ] as const) {
    it(`${order[0]} then ${order[1]}: PENDING until the second, a repeat is AlreadyApproved, it runs once`, async () => {
      const word = `${order[0]}first`;
      const q = await queue(word);
      expect(q).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
      const [first, second] = order.map((n) => (n === 'owner' ? alice : bob)) as [OwnerSocket, OwnerSocket];
      expect(await approve(first, q.pending_id)).toMatchObject({ ok: true });
      const half = await second.view(q.pending_id, (v) => (v.approvals ?? []).length === 1, 'one approval');
      expect(half).toMatchObject({
        state: 'awaiting_review',
        approvals_needed: 2,
        approvals: [{ by: order[0] }],
      });
      expect(half.approvals[0].at).toMatch(/Z$/);
      expect(await status(q.pending_id)).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
      const again = await first.request({ type: 'approve', id: q.pending_id, version: 1 });
      expect(again).toMatchObject({ ok: false, error: { code: 'AlreadyApproved' } });
      expect(await approve(second, q.pending_id)).toMatchObject({ ok: true });
      const done = await first.view(q.pending_id, (v) => v.status !== 'PENDING', 'the end');
      expect(done).toMatchObject({ status: 'SUCCEEDED', decided_by: order[1] });
      expect(done.approvals.map((a: Frame) => a.by)).toEqual([...order]);
      expect(readMarks(markFile).filter((m) => m === word)).toHaveLength(1);
    });
  }

  it(`both click at the same moment, ${ROUNDS} rounds: it runs exactly once each time`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const word = `both${round}`;
      const q = await queue(word);
      await Promise.all([alice, bob].map((o) => o.view(q.pending_id, () => true, 'seen')));
      const replies = await Promise.all([approve(alice, q.pending_id), approve(bob, q.pending_id)]);
      expect(
        replies.map((r) => r.ok),
        `round ${round}`,
      ).toEqual([true, true]);
      const done = await alice.view(q.pending_id, (v) => v.status !== 'PENDING', 'the end');
      expect(done.status, `round ${round}`).toBe('SUCCEEDED');
      expect(
        readMarks(markFile).filter((m) => m === word),
        `round ${round}`,
      ).toHaveLength(1);
    }
  });

  it('either owner’s deny denies, after the other approved too', async () => {
    const q = await queue('denied');
    expect(await approve(alice, q.pending_id)).toMatchObject({ ok: true });
    const v = await bob.view(q.pending_id, (x) => (x.approvals ?? []).length === 1, 'one approval');
    expect(
      await bob.request({ type: 'deny', id: q.pending_id, version: v.version, note: 'not today' }),
    ).toMatchObject({
      ok: true,
    });
    expect(await status(q.pending_id)).toMatchObject({
      status: 'DENIED',
      reason: 'OwnerDenied',
      owner_note: 'not today',
    });
    expect(readMarks(markFile)).not.toContain('denied');
  });

  it('grants refuse a quorum command: NotGrantable, nothing approved', async () => {
    const grant = await alice.request({ type: 'grant', command: 'deploy', client: '*', ttl_s: 600 });
    expect(grant).toMatchObject({ ok: false, error: { code: 'NotGrantable' } });
    const q = await queue('nogrant');
    const v = await alice.view(q.pending_id, () => true, 'seen');
    const r = await alice.request({
      type: 'approve',
      id: q.pending_id,
      version: v.version,
      grant: { same_args: true, ttl_s: 600 },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'NotGrantable' } });
    expect((await status(q.pending_id)).phase).toBe('awaiting_review');
    await alice.request({ type: 'deny', id: q.pending_id, version: v.version });
  });

  it('kill -9 between the first and the second approval: after the restart the first still counts', async () => {
    const q = await queue('survives');
    expect(await approve(bob, q.pending_id)).toMatchObject({ ok: true });
    await d.kill();
    await Promise.all([alice.close(), bob.close(), ai.close().catch(() => {})]);
    d = await startDaemon({ dataDir, config: config() });
    await connect();
    const v = await alice.view(q.pending_id, () => true, 'after the restart');
    expect(v).toMatchObject({ state: 'awaiting_review', approvals: [{ by: 'bob' }] });
    expect(await bob.request({ type: 'approve', id: q.pending_id, version: v.version })).toMatchObject({
      ok: false,
      error: { code: 'AlreadyApproved' },
    });
    expect(await approve(alice, q.pending_id)).toMatchObject({ ok: true });
    await waitFor(() => readMarks(markFile).includes('survives'), 'it ran');
    expect(readMarks(markFile).filter((m) => m === 'survives')).toHaveLength(1);
  });

  it('the audit log names the owner of every decision, and ogf-broker list shows them', async () => {
    const decisions = auditRows(d).filter((r) => r.action === 'approve' || r.action === 'deny');
    expect(decisions.length).toBeGreaterThan(ROUNDS * 2);
    for (const r of decisions) expect(['owner', 'bob']).toContain(r.actor);
    const list = await runCli(['list', '--all'], { OGF_BROKER_DATA_DIR: dataDir });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/approvals \(2 needed\): bob at \S+Z, owner at \S+Z/);
    expect(list.stdout).toMatch(/decided by owner/);
    expect(list.stdout).toMatch(/decided by bob/);
  });
});
