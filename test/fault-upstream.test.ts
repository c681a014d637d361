/**
 * Fault trials for upstream calls (contract 7, rules 2–4): kill -9 the daemon while an upstream call is in
 * flight, at the launch of an approval that shares `running`'s transaction, and between a durable approval
 * and `running`; restart on the same data dir; check what the AI is told and what the upstream saw (our
 * test server logs every tools/call it receives, with its pid).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { exited, makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, structured, TestOwner } from './helpers/mcp.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

function seen(log: string): Array<{ pid: number; call?: string; started?: boolean }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

/** Every upstream pid the log names is stopped (an orphan of a killed daemon included). */
function killUpstreams(log: string): void {
  for (const e of seen(log)) {
    try {
      process.kill(e.pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
}

async function start(
  dataDir: string,
  log: string,
  env: Record<string, string> = {},
  mode: 'ok' | 'slow-start' = 'ok',
): Promise<RunningDaemon> {
  const d = await startDaemon({
    dataDir,
    env,
    config: {
      upstreams: {
        ours: { argv: [process.execPath, TEST_UPSTREAM, mode, log], timeout_s: 600, wait_seconds: 0 },
      },
    },
  });
  cleanup.push(() => d.kill());
  return d;
}

async function listed(d: RunningDaemon, name: string) {
  const mcp = await httpClient(`${d.url}/mcp`, d.mcpToken);
  cleanup.push(() => mcp.close());
  await waitFor(
    async () => (await mcp.listTools()).tools.some((t) => t.name === name),
    `${name} listed`,
    30_000,
  );
  return mcp;
}

it('[c2.rule-3] [c7.once] kill -9 with an upstream call in flight: UNKNOWN/DaemonRestarted after the restart, and the upstream saw it once', async () => {
  const dataDir = makeDataDir();
  const log = join(mkdtempSync(join(tmpdir(), 'ogf-up-fault-')), 'calls.jsonl');
  cleanup.push(() => killUpstreams(log));
  const d = await start(dataDir, log);
  const mcp = await listed(d, 'ours__hang');
  const owner = await TestOwner.connect(d);
  cleanup.push(() => owner.close());
  const pending = structured(await call(mcp, 'ours__hang', { text: 'in flight' }));
  expect((await owner.approve(String(pending.pending_id))).ok).toBe(true);
  await waitFor(() => seen(log).some((e) => e.call === 'hang'), 'the upstream to receive the call');
  await d.kill();
  expect(d.child.signalCode).toBe('SIGKILL');

  const d2 = await start(dataDir, log);
  const mcp2 = await httpClient(`${d2.url}/mcp`, d2.mcpToken);
  cleanup.push(() => mcp2.close());
  const after = structured(
    await call(mcp2, 'await_command_result', { pending_id: pending.pending_id, wait_seconds: 0 }),
  );
  expect(after).toMatchObject({ status: 'UNKNOWN', reason: 'DaemonRestarted' });
  // The new daemon connected its own upstream and never sent the call again.
  await waitFor(
    () => seen(log).filter((e) => e.started).length === 2,
    'the second daemon’s upstream started',
  );
  await listed(d2, 'ours__hang');
  expect(seen(log).filter((e) => e.call === 'hang')).toHaveLength(1);
});

it('[c2.rule-4] [c7.once] [c2.one-commit] kill -9 at the launch of an approval whose upstream is connected: the approval was never answered nor durable (it shares `running`’s transaction), so the call awaits review after the restart, unsent, and is sent once when approved again', async () => {
  const dataDir = makeDataDir();
  const log = join(mkdtempSync(join(tmpdir(), 'ogf-up-fault-')), 'calls.jsonl');
  cleanup.push(() => killUpstreams(log));
  const d = await start(dataDir, log, { OGF_BROKER_FAULT: 'before_mark_running' });
  const mcp = await listed(d, 'ours__echo');
  const owner = await TestOwner.connect(d);
  cleanup.push(() => owner.close());
  const pending = structured(await call(mcp, 'ours__echo', { text: 'approved, never durable' }));
  // Issue 19 finding 6: approved and running commit together, so the crash lands before either.
  const reply = await owner.approve(String(pending.pending_id)).catch(() => undefined);
  expect(reply, 'the owner got no answer: the daemon died before the commit').toBeUndefined();
  await exited(d.child);
  expect(d.child.signalCode).toBe('SIGKILL');
  expect(seen(log).filter((e) => e.call !== undefined)).toEqual([]);

  const d2 = await start(dataDir, log);
  const mcp2 = await listed(d2, 'ours__echo');
  const waiting = structured(
    await call(mcp2, 'await_command_result', { pending_id: pending.pending_id, wait_seconds: 0 }),
  );
  expect(waiting).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
  expect(waiting.review_expires_at).toBe(pending.review_expires_at);
  const owner2 = await TestOwner.connect(d2);
  cleanup.push(() => owner2.close());
  expect((await owner2.approve(String(pending.pending_id))).ok).toBe(true);
  const after = structured(
    await call(mcp2, 'await_command_result', { pending_id: pending.pending_id, wait_seconds: 60 }),
  );
  expect(after).toMatchObject({ status: 'SUCCEEDED' });
  expect(seen(log).filter((e) => e.call === 'echo')).toEqual([
    expect.objectContaining({ call: 'echo', arguments: { text: 'approved, never durable' } }),
  ]);
});

it('[c2.rule-4] [c7.once] kill -9 between a durable approval and `running` (its upstream still connecting): the call is sent once, after the restart', async () => {
  const dataDir = makeDataDir();
  const log = join(mkdtempSync(join(tmpdir(), 'ogf-up-fault-')), 'calls.jsonl');
  cleanup.push(() => killUpstreams(log));
  // The call waits for review through a first restart, so the second daemon sees its upstream
  // `connecting` (slow-start: 5 s) when the owner approves: the launch waits for the link and the
  // approval commits alone, answered, before the crash point at `running`.
  const d = await start(dataDir, log, {}, 'slow-start');
  const mcp = await listed(d, 'ours__echo');
  const pending = structured(await call(mcp, 'ours__echo', { text: 'approved, never sent' }));
  await d.kill();
  const d2 = await start(dataDir, log, { OGF_BROKER_FAULT: 'before_mark_running' }, 'slow-start');
  const owner = await TestOwner.connect(d2);
  cleanup.push(() => owner.close());
  const reply = await owner.approve(String(pending.pending_id));
  expect(reply.ok, 'the approval was answered, so it was durable before the crash').toBe(true);
  await exited(d2.child);
  expect(d2.child.signalCode).toBe('SIGKILL');
  expect(seen(log).filter((e) => e.call !== undefined)).toEqual([]);

  const d3 = await start(dataDir, log);
  const mcp3 = await httpClient(`${d3.url}/mcp`, d3.mcpToken);
  cleanup.push(() => mcp3.close());
  const after = structured(
    await call(mcp3, 'await_command_result', { pending_id: pending.pending_id, wait_seconds: 60 }),
  );
  expect(after).toMatchObject({ status: 'SUCCEEDED' });
  expect(seen(log).filter((e) => e.call === 'echo')).toEqual([
    expect.objectContaining({ call: 'echo', arguments: { text: 'approved, never sent' } }),
  ]);
});

it('[c7.outcomes] kill -9 the upstream mid-call: UNKNOWN/DeliveryUnconfirmed; it is restarted and later calls work', async () => {
  const dataDir = makeDataDir();
  const log = join(mkdtempSync(join(tmpdir(), 'ogf-up-fault-')), 'calls.jsonl');
  cleanup.push(() => killUpstreams(log));
  const d = await start(dataDir, log);
  const mcp = await listed(d, 'ours__hang');
  const owner = await TestOwner.connect(d);
  cleanup.push(() => owner.close());
  const pending = structured(await call(mcp, 'ours__hang', { text: 'killed under it' }));
  expect((await owner.approve(String(pending.pending_id))).ok).toBe(true);
  const received = await waitFor(
    () => seen(log).find((e) => e.call === 'hang'),
    'the upstream to receive the call',
  );
  process.kill(received.pid, 'SIGKILL');
  const done = structured(
    await call(mcp, 'await_command_result', { pending_id: pending.pending_id, wait_seconds: 60 }),
  );
  expect(done).toMatchObject({ status: 'UNKNOWN', reason: 'DeliveryUnconfirmed' });
  await waitFor(() => seen(log).filter((e) => e.started).length === 2, 'the upstream started again', 20_000);
  // Wait for the state (connected again), then a new call goes through.
  await waitFor(async () => {
    const list = structured(await call(mcp, 'list_commands', {}));
    return (list.upstreams as Array<{ name: string; connected: boolean }>).find((u) => u.name === 'ours')
      ?.connected;
  }, 'ours connected again');
  const echo = structured(await call(mcp, 'ours__echo', { text: 'after' }));
  expect((await owner.approve(String(echo.pending_id))).ok).toBe(true);
  const after = structured(
    await call(mcp, 'await_command_result', { pending_id: echo.pending_id, wait_seconds: 60 }),
  );
  expect(after.status).toBe('SUCCEEDED');
  expect(seen(log).filter((e) => e.call === 'hang')).toHaveLength(1);
});
