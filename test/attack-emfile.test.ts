/**
 * Descriptor exhaustion against the real daemon (contracts.md 4: "spawn error → failed/LaunchFailed"; the
 * AI must not stop the daemon). The daemon runs under a real descriptor limit (`prlimit`, util-linux) and
 * the AI holds connections open until none is left; the owner then approves a command. Its spawn fails
 * with EMFILE: the command must end `failed`/`LaunchFailed` — not stay `running`, not take the daemon down —
 * and once the AI lets go, the same daemon serves and launches again.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';
import { openFds, type SlowGroup, slowGroup } from './helpers/slow-client.js';

let d: RunningDaemon | undefined;
const groups: SlowGroup[] = [];

afterAll(async () => {
  for (const g of groups) g.stop();
  await d?.stop();
});

/** The AI keeps `count` connections open: each sends a body a byte a second, and is reopened when cut. */
function holdConnections(port: number, count: number): { stop(): void } {
  let running = true;
  const holdOne = () => {
    const g = slowGroup({
      port,
      count: 1,
      head: `POST /login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n`,
      drip: `{"token":"${'x'.repeat(3987)}"}`,
      tickMs: 1000,
    });
    groups.push(g);
    // Reopened a little later when cut, like a persistent attacker that does not spin.
    g.connections[0]!.socket.once('close', () => {
      if (running) setTimeout(() => running && holdOne(), 200);
    });
  };
  for (let i = 0; i < count; i++) holdOne();
  return {
    stop() {
      running = false;
      for (const g of groups.splice(0)) g.stop();
    },
  };
}

describe('[c4.spawn-error] a launch that cannot get descriptors', () => {
  it('[c4.spawn-error] ends failed/LaunchFailed with the daemon alive, and the daemon serves again once the AI lets go', async () => {
    const dataDir = makeDataDir('ogf-emfile-');
    const markFile = join(dataDir, 'marks.txt');
    d = await startDaemon({ dataDir, config: ownerCatalog(markFile) });
    const pid = d.info.pid;
    const owner = await OwnerSocket.open(d);
    const ai = await mcpClient(d);
    const id = await queue(ai, 'mark', { word: 'exhausted' });
    await ai.close();
    await owner.waitFor((f) => f.type === 'upsert' && f.command.id === id, 'the owner to see the command');

    // A real descriptor limit: what the daemon holds now, plus room for 60 more.
    const limit = openFds(pid) + 60;
    const set = spawnSync('prlimit', ['--pid', String(pid), `--nofile=${limit}:${limit}`], {
      encoding: 'utf8',
    });
    expect(set.status, set.stderr).toBe(0);

    // The AI holds more connections than there is room for: the daemon runs out of descriptors.
    const attack = holdConnections(Number(new URL(d.url).port), 100);
    try {
      await waitFor(() => openFds(pid) >= limit - 1, 'the daemon to run out of descriptors');

      const view = await owner.upsert(id, () => true, 'the command');
      const reply = await owner.request({ type: 'approve', id, version: view.version });
      expect(reply).toMatchObject({ ok: true });
      const final = await owner.upsert(id, (c) => c.status !== 'PENDING', 'the launch to end');
      expect(final).toMatchObject({ state: 'failed', status: 'ERROR', reason: 'LaunchFailed' });
      expect(final.result.detail).toMatch(/EMFILE|ENFILE/);
      expect(d.child.exitCode).toBeNull();
      expect(readMarks(markFile)).toEqual([]);
    } finally {
      attack.stop();
    }

    // Once the connections are gone the same daemon accepts, queues and launches again.
    await waitFor(() => openFds(pid) < limit - 30, 'the descriptors to free up', 30_000);
    const again = await mcpClient(d);
    try {
      const next = await queue(again, 'mark', { word: 'after' });
      await owner.waitFor((f) => f.type === 'upsert' && f.command.id === next, 'the owner to see it');
      const v = await owner.upsert(next, () => true, 'the next command');
      expect(await owner.request({ type: 'approve', id: next, version: v.version })).toMatchObject({
        ok: true,
      });
      expect(await owner.upsert(next, (c) => c.status !== 'PENDING', 'it to finish')).toMatchObject({
        status: 'SUCCEEDED',
      });
    } finally {
      await again.close();
    }
    expect(readMarks(markFile)).toEqual(['after']);
    // The first command stays failed: it is never retried (rule 2).
    const history = await owner.request({ type: 'history', limit: 10 });
    expect(history.commands.find((c: { id: string }) => c.id === id)).toMatchObject({
      reason: 'LaunchFailed',
    });
    await owner.close();
    expect(d.child.exitCode).toBeNull();
  }, 120_000);

  it('[c4.spawn-error] a program that cannot be started (ENOENT) is failed/LaunchFailed too, and nothing stays running', async () => {
    const other = await startDaemon({
      config: {
        commands: {
          missing: {
            description: 'A program that is not installed',
            argv: ['/nonexistent/ogf-no-such-program'],
          },
        },
      },
    });
    try {
      const owner = await OwnerSocket.open(other);
      const ai = await mcpClient(other);
      const id = await queue(ai, 'missing', {});
      await ai.close();
      const v = await owner.upsert(id, () => true, 'the command');
      expect(await owner.request({ type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
      const final = await owner.upsert(id, (c) => c.status !== 'PENDING', 'the launch to end');
      expect(final).toMatchObject({ state: 'failed', reason: 'LaunchFailed' });
      expect(final.result.detail).toMatch(/ENOENT/);
      await owner.close();
      expect(other.child.exitCode).toBeNull();
    } finally {
      await other.stop();
    }
  });
});
