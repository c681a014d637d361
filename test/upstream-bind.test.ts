/**
 * Contract 20, binding: approving a command whose preview is ready approves that preview. The real
 * @modelcontextprotocol/server-filesystem behind the gate (`preset: "filesystem"`); the file is changed from
 * outside between the preview and the approval, and the write must never land — whichever door approved it
 * (the owner frame for a call from either MCP generation, the terminal's `approve`, an approve that also
 * makes a grant). Two approved writes of one file launch one at a time, the second re-checking after the
 * first ran. A grant-approved call's preview is the one made at launch; `bind_previews: false` turns it off.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, type RunningDaemon, runCli, waitFor } from './helpers/daemon.js';
import {
  auditRows,
  call,
  GENERATIONS,
  type Generation,
  httpClient,
  type McpClient,
  structured,
} from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { HttpReceiver } from './helpers/receivers.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = mkdtempSync(join(tmpdir(), 'ogf-bind-'));
let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;
let hook: HttpReceiver;
const clients: Partial<Record<Generation, McpClient>> = {};

beforeAll(async () => {
  hook = await HttpReceiver.start();
  ({ d, ai } = await notesBehindGate(
    files,
    { preset: 'filesystem', wait_seconds: 0 },
    { notify: [{ id: 'hook', type: 'webhook', url: hook.url(), format: 'json' }] },
  ));
  owner = await OwnerSocket.open(d);
  clients.legacy = ai;
  clients.modern = await httpClient(`${d.url}/mcp`, d.mcpToken, 'modern');
});

afterAll(async () => {
  await clients.modern?.close();
  await owner?.close();
  await ai?.close();
  await d?.stop();
  await hook?.close();
});

async function queued(client: McpClient, tool: string, args: Record<string, unknown>): Promise<string> {
  const r = structured(await call(client, tool, args));
  expect(r.status).toBe('PENDING');
  return String(r.pending_id);
}

function ready(id: string): Promise<Frame> {
  return owner.view(id, (v) => v.preview?.status === 'ready', `${id}'s preview ready`);
}

/** Waits until `id` came back to the owners (awaiting review again after an approval). */
function cameBack(id: string, after: number): Promise<Frame> {
  return owner.view(
    id,
    (v) => v.state === 'awaiting_review' && v.version > after && v.rebound_at !== undefined,
    `${id} back to awaiting review`,
  );
}

function auditOf(id: string): Array<{ action: unknown; detail: Frame }> {
  return auditRows(d)
    .filter((r) => r.command_id === id)
    .map((r) => ({ action: r.action, detail: JSON.parse(String(r.detail)) }));
}

describe('the effect the owner approved, or nothing (contract 20)', () => {
  for (const generation of GENERATIONS) {
    it(`[c20.bound] a file changed after its preview is not written (${generation} client, owner frame)`, async () => {
      const path = join(files, `plan-${generation}.md`);
      writeFileSync(path, 'one\ntwo\n');
      const id = await queued(clients[generation]!, 'notes__write_file', { path, content: 'one\nTWO\n' });
      const seen = await ready(id);
      expect(seen.preview.basis_sha256).toMatch(/^[0-9a-f]{64}$/);
      // Someone else edits the file after the owner saw the diff.
      writeFileSync(path, 'one\ntwo\nthree (added meanwhile)\n');
      expect(await owner.request({ type: 'approve', id, version: seen.version })).toMatchObject({ ok: true });
      const back = await cameBack(id, seen.version);
      // Nothing was sent: the outside edit stands.
      expect(readFileSync(path, 'utf8')).toBe('one\ntwo\nthree (added meanwhile)\n');
      expect(back.decided_by).toBeUndefined();
      expect(back.approvals).toBeUndefined();
      expect(back.preview.status).toBe('ready');
      expect(back.preview.diff).toContain('-three (added meanwhile)');
      expect(back.preview.basis_sha256).not.toBe(seen.preview.basis_sha256);
      // The AI still sees PENDING.
      const r = structured(
        await call(clients[generation]!, 'await_command_result', { pending_id: id, wait_seconds: 0 }),
      );
      expect(r.status).toBe('PENDING');
      expect(r.phase).toBe('awaiting_review');
      // Both hashes in the audit.
      const changed = auditOf(id).find((e) => e.action === 'rebind');
      expect(changed?.detail).toMatchObject({
        approved_sha256: seen.preview.basis_sha256,
        current_sha256: back.preview.basis_sha256,
        state: 'awaiting_review',
      });
      // The owners are told again, and why.
      const told = await waitFor(() => {
        const w = hook.json().filter((m) => m.event === 'waiting' && m.pending_id === id);
        return w.length === 2 ? w : undefined;
      }, 'waiting told twice');
      expect(String(told[1]!.summary)).toContain('the file changed since you approved');
      expect(told[1]!.rebound_at).toBe(back.rebound_at);
      // Approving the new preview writes it.
      expect(await owner.request({ type: 'approve', id, version: back.version })).toMatchObject({ ok: true });
      await owner.view(id, (v) => v.status === 'SUCCEEDED', `${id} succeeded`);
      expect(readFileSync(path, 'utf8')).toBe('one\nTWO\n');
      const launch = auditOf(id).find((e) => e.action === 'start');
      expect(launch?.detail.preview_checked).toMatchObject({
        bound: true,
        approved_sha256: back.preview.basis_sha256,
      });
    });
  }

  it('[c20.bound] the terminal approve of a changed file writes nothing', async () => {
    const path = join(files, 'terminal.md');
    writeFileSync(path, 'a\n');
    const id = await queued(ai, 'notes__write_file', { path, content: 'b\n' });
    const seen = await ready(id);
    writeFileSync(path, 'c\n');
    const r = spawnSync(process.execPath, [CLI, 'approve', id, '--data-dir', d.dataDir], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    await cameBack(id, seen.version);
    expect(readFileSync(path, 'utf8')).toBe('c\n');
    expect(await owner.request({ type: 'deny', id, version: owner.latest(id)!.version })).toMatchObject({
      ok: true,
    });
    expect(readFileSync(path, 'utf8')).toBe('c\n');
  });

  it('[c20.bound] [c20.granted] an approve that also makes a grant is bound; the grant approves what it sees at launch', async () => {
    const path = join(files, 'granted.md');
    writeFileSync(path, 'x\n');
    const id = await queued(ai, 'notes__write_file', { path, content: 'y\n' });
    const seen = await ready(id);
    writeFileSync(path, 'z\n');
    const reply = await owner.request({
      type: 'approve',
      id,
      version: seen.version,
      grant: { ttl_s: 600, same_args: false },
    });
    if (reply.ok !== true) throw new Error(JSON.stringify(reply));
    expect(reply).toMatchObject({ ok: true });
    await cameBack(id, seen.version);
    expect(readFileSync(path, 'utf8')).toBe('z\n');
    // The grant approves the next call at submit: it never awaited review, so the preview it gets is the one
    // made at launch, recorded with `running`.
    const next = structured(
      await call(ai, 'notes__write_file', { path: join(files, 'granted-2.md'), content: 'g\n' }),
    );
    const nextId = String(next.pending_id);
    const done = await owner.view(nextId, (v) => v.status === 'SUCCEEDED', `${nextId} succeeded`);
    expect(done.decided_by).toMatch(/^grant:/);
    expect(done.preview).toMatchObject({ kind: 'file_diff', status: 'ready', new_file: true });
    expect(readFileSync(join(files, 'granted-2.md'), 'utf8')).toBe('g\n');
    const launch = auditOf(nextId).find((e) => e.action === 'start');
    expect(launch?.detail.preview_checked).toMatchObject({ bound: false, approved_sha256: null });
    await owner.request({ type: 'deny', id, version: owner.latest(id)!.version });
    expect(await owner.request({ type: 'revoke', grant_id: reply.grant.id })).toMatchObject({ ok: true });
  });

  it('[c20.lane] two approved writes of one file: the second re-checks after the first ran and comes back', async () => {
    const path = join(files, 'twice.md');
    writeFileSync(path, 'start\n');
    const first = await queued(ai, 'notes__write_file', { path, content: 'first\n' });
    const second = await queued(ai, 'notes__write_file', { path, content: 'second\n' });
    const [v1, v2] = await Promise.all([ready(first), ready(second)]);
    // Both approved in one go: both previews were made from "start".
    await Promise.all([
      owner.request({ type: 'approve', id: first, version: v1.version }),
      owner.request({ type: 'approve', id: second, version: v2.version }),
    ]);
    await owner.view(first, (v) => v.status === 'SUCCEEDED', 'first written');
    const back = await cameBack(second, v2.version);
    expect(readFileSync(path, 'utf8')).toBe('first\n');
    expect(back.preview.diff).toContain('-first');
    expect(back.preview.diff).toContain('+second');
    expect(await owner.request({ type: 'approve', id: second, version: back.version })).toMatchObject({
      ok: true,
    });
    await owner.view(second, (v) => v.status === 'SUCCEEDED', 'second written');
    expect(readFileSync(path, 'utf8')).toBe('second\n');
  });

  it('[c20.bound] `audit verify` agrees with the history of commands that came back', async () => {
    const r = await runCli(['audit', 'verify', '--data-dir', d.dataDir]);
    expect(r.stdout + r.stderr).toMatch(/^ok: \d+ entries/m);
    expect(r.code).toBe(0);
  });
});
