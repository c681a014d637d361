/**
 * Contract 20 with rules 3 and 4: kill -9 between the launch-time check of an approved write and its
 * `running` (the test-only crash point `before_mark_running`, daemon/core/runtime/fault-points.ts, is reached
 * after the check). Two windows, both real daemon processes:
 *
 * - the usual one: the approval's commit waits for the check (GroupCommit.hold), so the crash comes before
 *   anything of the approval is durable — the owner was never told "ok"; after the restart the command
 *   awaits review, nothing was sent, and an approval then writes once (or, the file changed meanwhile,
 *   brings it back to the owners). The real @modelcontextprotocol/server-filesystem;
 * - a check slower than the hold's bound: the approval commits alone (the owner is told), the check ends,
 *   the crash comes before `running`. After the restart the approved command launches (rule 4), is checked
 *   again and sent exactly once. Our test upstream, whose `gate…` read waits for a file the test creates.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows, call, httpClient, type McpClient, structured } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';
import { FILESYSTEM, TEST_UPSTREAM } from './helpers/upstreams.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function start(
  dataDir: string,
  files: string,
  env: Record<string, string> = {},
): Promise<RunningDaemon> {
  const d = await startDaemon({
    dataDir,
    env,
    config: {
      upstreams: {
        notes: { argv: [process.execPath, FILESYSTEM, files], preset: 'filesystem', wait_seconds: 0 },
      },
    },
  });
  cleanup.push(() => d.stop());
  return d;
}

async function client(d: RunningDaemon): Promise<McpClient> {
  const ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
  cleanup.push(() => ai.close());
  await waitFor(
    async () => (await ai.listTools()).tools.some((t) => t.name === 'notes__write_file'),
    'notes__write_file listed',
    30_000,
  );
  return ai;
}

/** Queues a write, approves its ready preview on a daemon that dies at `running`; returns its id. */
async function approvedThenKilled(d: RunningDaemon, path: string, content: string): Promise<string> {
  const ai = await client(d);
  const owner = await OwnerSocket.open(d);
  cleanup.push(() => owner.close());
  const id = String(structured(await call(ai, 'notes__write_file', { path, content })).pending_id);
  const v = await owner.view(id, (x) => x.preview?.status === 'ready', 'previewed');
  // The approval's commit waits for the check; the crash comes before either is durable.
  await owner.request({ type: 'approve', id, version: v.version }).catch(() => undefined);
  await exited(d.child);
  expect(d.child.signalCode).toBe('SIGKILL');
  return id;
}

const launchesOf = (d: RunningDaemon, id: string) =>
  auditRows(d).filter((r) => r.command_id === id && r.action === 'start').length;

describe('kill -9 between the launch-time check and running (contract 20, rules 3–4)', () => {
  it('[c20.crash] the file unchanged: the approval was never durable; after the restart it awaits review, and an approval writes once', async () => {
    const files = mkdtempSync(join(tmpdir(), 'ogf-bind-crash-'));
    const path = join(files, 'same.md');
    writeFileSync(path, 'before\n');
    const dataDir = makeDataDir();
    const d = await start(dataDir, files, { OGF_BROKER_FAULT: 'before_mark_running' });
    const id = await approvedThenKilled(d, path, 'after\n');
    expect(readFileSync(path, 'utf8')).toBe('before\n');
    const d2 = await start(dataDir, files);
    const owner = await OwnerSocket.open(d2);
    cleanup.push(() => owner.close());
    // Never acknowledged, never durable: the command awaits review as before the approval.
    const again = await owner.view(id, (v) => v.state === 'awaiting_review', 'awaiting after the restart');
    expect(again.approvals ?? []).toEqual([]);
    expect(readFileSync(path, 'utf8')).toBe('before\n');
    expect(await owner.request({ type: 'approve', id, version: again.version })).toMatchObject({ ok: true });
    await owner.view(id, (v) => v.status === 'SUCCEEDED', 'written once approved');
    expect(readFileSync(path, 'utf8')).toBe('after\n');
    expect(launchesOf(d2, id)).toBe(1);
  });

  it('[c20.crash] the file changed while the daemon was down: not written, back to the owners', async () => {
    const files = mkdtempSync(join(tmpdir(), 'ogf-bind-crash-'));
    const path = join(files, 'changed.md');
    writeFileSync(path, 'before\n');
    const dataDir = makeDataDir();
    const d = await start(dataDir, files, { OGF_BROKER_FAULT: 'before_mark_running' });
    const id = await approvedThenKilled(d, path, 'after\n');
    writeFileSync(path, 'edited while the daemon was down\n');
    const d2 = await start(dataDir, files);
    const owner = await OwnerSocket.open(d2);
    cleanup.push(() => owner.close());
    // The owner approves what the card still shows (the file as it was): the check at launch sees the change.
    const stale = await owner.view(id, (v) => v.state === 'awaiting_review', 'awaiting after the restart');
    expect(await owner.request({ type: 'approve', id, version: stale.version })).toMatchObject({ ok: true });
    const back = await owner.view(
      id,
      (v) => v.state === 'awaiting_review' && v.rebound_at !== undefined,
      'back',
    );
    expect(readFileSync(path, 'utf8')).toBe('edited while the daemon was down\n');
    expect(launchesOf(d2, id)).toBe(0);
    expect(await owner.request({ type: 'approve', id, version: back.version })).toMatchObject({ ok: true });
    await owner.view(id, (v) => v.status === 'SUCCEEDED', 'written once approved again');
    expect(readFileSync(path, 'utf8')).toBe('after\n');
    expect(launchesOf(d2, id)).toBe(1);
  });

  it('[c20.crash] a check slower than the hold: the approval commits alone; after the crash it is checked again and sent once', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'ogf-bind-gate-'));
    const logFile = join(logDir, 'upstream.log');
    const release = `${logFile}.release`;
    const dataDir = makeDataDir();
    const gated = (env: Record<string, string> = {}) =>
      startDaemon({
        dataDir,
        env,
        config: {
          upstreams: {
            g: {
              argv: [process.execPath, TEST_UPSTREAM, 'previews', logFile],
              wait_seconds: 0,
              previews: {
                put: { kind: 'file_diff', read: 'peek', path_arg: 'path', content_arg: 'content' },
              },
            },
          },
        },
      });
    const puts = () =>
      existsSync(logFile)
        ? readFileSync(logFile, 'utf8')
            .split('\n')
            .filter((l) => l.includes('"call":"put"')).length
        : 0;
    writeFileSync(release, '');
    const d = await gated({ OGF_BROKER_FAULT: 'before_mark_running' });
    cleanup.push(() => d.stop());
    const ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
    cleanup.push(() => ai.close());
    await waitFor(
      async () => (await ai.listTools()).tools.some((t) => t.name === 'g__put'),
      'g__put',
      30_000,
    );
    const owner = await OwnerSocket.open(d);
    cleanup.push(() => owner.close());
    const id = String(
      structured(await call(ai, 'g__put', { path: 'gate.txt', content: 'mine\n' })).pending_id,
    );
    const v = await owner.view(id, (x) => x.preview?.status === 'ready', 'previewed');
    // The launch-time read now waits: the approval's commit goes without it once the hold's bound passed.
    rmSync(release);
    expect(await owner.request({ type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
    writeFileSync(release, '');
    await exited(d.child);
    expect(d.child.signalCode).toBe('SIGKILL');
    expect(puts()).toBe(0);
    const d2 = await gated();
    cleanup.push(() => d2.stop());
    const owner2 = await OwnerSocket.open(d2);
    cleanup.push(() => owner2.close());
    await owner2.view(id, (x) => x.status === 'SUCCEEDED', 'sent after the restart');
    expect(puts()).toBe(1);
    expect(launchesOf(d2, id)).toBe(1);
  }, 90_000);
});
