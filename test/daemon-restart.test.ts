/**
 * Rules 3 and 4 against a real daemon process: SIGKILL it while a command runs, restart it on the same
 * data dir, and check what every party is told — and that the program ran exactly once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { callTool, mcpClient, OwnerSocket, queue } from './helpers/owner.js';

const daemons: RunningDaemon[] = [];
const orphans: number[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  for (const pid of orphans.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

function config(marker: string) {
  return {
    commands: {
      // Appends its pid, then lingers: the daemon will be killed while it runs.
      linger: {
        description: 'Mark and linger',
        argv: [
          process.execPath,
          '-e',
          'require("fs").appendFileSync(process.argv[1], process.pid + "\\n"); setTimeout(() => {}, 20000)',
          marker,
        ],
        timeout_s: 60,
      },
      // Takes a moment, then exits 0: a clean shutdown lets it finish.
      brief: {
        description: 'Mark after a moment',
        argv: [
          process.execPath,
          '-e',
          'setTimeout(() => require("fs").appendFileSync(process.argv[1], "brief\\n"), 1500)',
          marker,
        ],
        timeout_s: 30,
      },
      quick: { description: 'Exit 0', argv: [process.execPath, '-e', 'process.exit(0)'], timeout_s: 10 },
    },
  };
}

describe('a daemon killed with SIGKILL while a command runs (rule 3)', () => {
  it('[c2.rule-3] [c2.rule-4] marks it unknown/DaemonRestarted at the next start and never launches it again; pending ones keep their deadline', async () => {
    const dataDir = makeDataDir();
    const marker = join(dataDir, 'marker');
    const first = await startDaemon({ dataDir, config: config(marker) });
    const ai = await mcpClient(first);
    const owner = await OwnerSocket.open(first);
    const runningId = await queue(ai, 'linger', {});
    const waitingId = await queue(ai, 'quick', {}, 'should survive the restart');
    const waitingBefore =
      owner.snapshotView(waitingId) ?? (await owner.upsert(waitingId, () => true, 'waiting upsert'));
    expect((await owner.request({ type: 'approve', id: runningId, version: 1 })).ok).toBe(true);
    await owner.upsert(runningId, (v) => v.state === 'running', 'running');
    const pid = Number(
      await waitFor(() => existsSync(marker) && readFileSync(marker, 'utf8').trim(), 'the child to start'),
    );
    orphans.push(pid);
    await ai.close().catch(() => {});
    await first.kill();

    const second = await startDaemon({ dataDir });
    daemons.push(second);
    const ai2 = await mcpClient(second);
    const result = await callTool(ai2, 'await_command_result', { pending_id: runningId, wait_seconds: 0 });
    expect(result).toMatchObject({ pending_id: runningId, status: 'UNKNOWN', reason: 'DaemonRestarted' });
    const waiting = await callTool(ai2, 'await_command_result', { pending_id: waitingId, wait_seconds: 0 });
    expect(waiting).toMatchObject({
      status: 'PENDING',
      phase: 'awaiting_review',
      review_expires_at: waitingBefore.review_expires_at,
    });

    // The owner sees both truthfully after the restart, and the unknown one can be reconciled, not retried.
    const owner2 = await OwnerSocket.open(second);
    expect(owner2.snapshotView(runningId)).toMatchObject({
      state: 'unknown',
      status: 'UNKNOWN',
      reason: 'DaemonRestarted',
    });
    expect(owner2.snapshotView(waitingId)).toMatchObject({ state: 'awaiting_review', version: 1 });
    expect(
      (
        await owner2.request({
          type: 'approve',
          id: runningId,
          version: owner2.snapshotView(runningId)!.version,
        })
      ).error.code,
    ).toBe('AlreadyDecided');
    // Approving the survivor still works after the restart.
    expect((await owner2.request({ type: 'approve', id: waitingId, version: 1 })).ok).toBe(true);
    await owner2.upsert(waitingId, (v) => v.state === 'succeeded', 'survivor succeeded');

    await new Promise((r) => setTimeout(r, 500));
    expect(readFileSync(marker, 'utf8').trim().split('\n')).toEqual([String(pid)]); // ran exactly once
    await ai2.close();
    await owner2.close();
  });
});

describe('a clean shutdown (SIGTERM)', () => {
  it('stops accepting, lets a running child finish, records its outcome, and removes daemon.json', async () => {
    const dataDir = makeDataDir();
    const marker = join(dataDir, 'marker');
    const d = await startDaemon({ dataDir, config: config(marker) });
    const ai = await mcpClient(d);
    const owner = await OwnerSocket.open(d);
    const id = await queue(ai, 'brief', {});
    expect((await owner.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
    await owner.upsert(id, (v) => v.state === 'running', 'running');
    await ai.close().catch(() => {});
    expect(await d.stop()).toBe(0);
    expect(readFileSync(marker, 'utf8')).toBe('brief\n');
    expect(existsSync(join(dataDir, 'daemon.json'))).toBe(false);

    const again = await startDaemon({ dataDir });
    daemons.push(again);
    const ai2 = await mcpClient(again);
    expect(await callTool(ai2, 'await_command_result', { pending_id: id, wait_seconds: 0 })).toMatchObject({
      status: 'SUCCEEDED',
    });
    await ai2.close();
  });
});
