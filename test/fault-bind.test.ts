/**
 * Contract 20 with rules 3 and 4: kill -9 between the launch-time check of an approved write and its
 * `running` (the test-only crash point `before_mark_running`, daemon/core/runtime/fault-points.ts, is reached
 * after the check). The approval was durable; `running` was not, so nothing was sent. After the restart the
 * approved command launches (rule 4) — checked again first: a file unchanged is written once, a file changed
 * while the daemon was down is not written and the command comes back to the owners. Real daemon processes,
 * real @modelcontextprotocol/server-filesystem.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows, call, httpClient, type McpClient, structured } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';
import { FILESYSTEM } from './helpers/upstreams.js';

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
  // The check runs after the approval's commit; the crash comes before `running`.
  await owner.request({ type: 'approve', id, version: v.version }).catch(() => undefined);
  await exited(d.child);
  expect(d.child.signalCode).toBe('SIGKILL');
  return id;
}

const launchesOf = (d: RunningDaemon, id: string) =>
  auditRows(d).filter((r) => r.command_id === id && r.action === 'start').length;

describe('kill -9 between the launch-time check and running (contract 20, rules 3–4)', () => {
  it('[c20.crash] the file unchanged: after the restart it is checked again and written once', async () => {
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
    await owner.view(id, (v) => v.status === 'SUCCEEDED', 'written after the restart');
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
});
