/**
 * Descriptor exhaustion against the real daemon (contracts.md 4: "spawn error → failed/LaunchFailed"; the
 * AI must not stop the daemon). The daemon runs under a real descriptor limit (`prlimit`, util-linux) and
 * the AI holds connections open until none is left; the owner then approves a command: it runs, because
 * the daemon's launcher process (daemon/launch/spawner.ts) forks it with descriptors of its own. A launcher
 * at its own limit cannot start the program: the command ends `failed`/`LaunchFailed` — not `running`, not
 * the daemon down — and the next launch runs once there is room. A launcher killed while a command runs
 * leaves that command `UNKNOWN` (stopped), and the next launch starts a new launcher.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';
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

/** The owner approves `id` as last seen; its view once it left PENDING. */
async function approvedToEnd(owner: OwnerSocket, id: string): Promise<Frame> {
  const v = await owner.upsert(id, () => true, `${id} seen`);
  expect(await owner.request({ type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
  return owner.upsert(id, (c) => c.status !== 'PENDING', `${id} to end`);
}

/** The daemon's launcher process (daemon/launch/spawner.ts): its child running spawner-child.js. */
function launcherPid(daemonPid: number): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === daemonPid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('spawner-child'))
        return Number(name);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

/** The pid of a `sleep SECONDS` process still running on this machine, or undefined. */
function sleeper(seconds: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') === `/bin/sleep\0${seconds}\0`) return Number(name);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

/** `pid`'s soft limit of open files (/proc/PID/limits). */
function openFdLimit(pid: number): number {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  return Number(/Max open files\s+(\d+)/.exec(line ?? '')?.[1]);
}

/** Sets `pid`'s descriptor limit (the soft one only when `soft`, so it can be raised again). */
function limitFds(pid: number, limit: number, soft = false): void {
  const value = soft ? `${limit}:` : `${limit}:${limit}`;
  const set = spawnSync('prlimit', ['--pid', String(pid), `--nofile=${value}`], { encoding: 'utf8' });
  expect(set.status, set.stderr).toBe(0);
}

describe('[c4.spawn-error] a launch that cannot get descriptors', () => {
  it('[c4.spawn-error] the AI holding every descriptor of the daemon cannot stop an approved launch: the launcher forks with its own', async () => {
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
    limitFds(pid, limit);
    // The AI holds more connections than there is room for: the daemon runs out of descriptors.
    const attack = holdConnections(Number(new URL(d.url).port), 100);
    try {
      await waitFor(() => openFds(pid) >= limit - 1, 'the daemon to run out of descriptors');
      const view = await owner.upsert(id, () => true, 'the command');
      const reply = await owner.request({ type: 'approve', id, version: view.version });
      expect(reply).toMatchObject({ ok: true });
      const final = await owner.upsert(id, (c) => c.status !== 'PENDING', 'the launch to end');
      expect(final).toMatchObject({ state: 'succeeded', status: 'SUCCEEDED' });
      expect(d.child.exitCode).toBeNull();
      expect(readMarks(markFile)).toEqual(['exhausted']);
    } finally {
      attack.stop();
    }
    await owner.close();
  }, 120_000);

  it('[c4.spawn-error] a launcher at its descriptor limit: the launch ends failed/LaunchFailed, the daemon alive, and the next one runs once it has room', async () => {
    await d?.stop();
    const dataDir = makeDataDir('ogf-emfile-');
    const markFile = join(dataDir, 'marks.txt');
    d = await startDaemon({ dataDir, config: ownerCatalog(markFile) });
    const owner = await OwnerSocket.open(d);
    const ai = await mcpClient(d);
    const launcher = launcherPid(d.info.pid);
    expect(launcher, 'the daemon runs its launcher process').toBeDefined();
    const before = openFdLimit(launcher!);
    // No room for a single new descriptor: the program's pipes cannot be made, so it cannot be started.
    limitFds(launcher!, openFds(launcher!), true);
    const id = await queue(ai, 'mark', { word: 'exhausted' });
    const final = await approvedToEnd(owner, id);
    expect(final).toMatchObject({ state: 'failed', status: 'ERROR', reason: 'LaunchFailed' });
    expect(final.result.detail).toMatch(/EMFILE|ENFILE/);
    expect(d.child.exitCode).toBeNull();
    expect(readMarks(markFile)).toEqual([]);

    // Room again: the same daemon launches; the failed command is never retried (rule 2).
    limitFds(launcher!, before, true);
    const next = await queue(ai, 'mark', { word: 'after' });
    expect(await approvedToEnd(owner, next)).toMatchObject({ status: 'SUCCEEDED' });
    expect(readMarks(markFile)).toEqual(['after']);
    const history = await owner.request({ type: 'history', limit: 10 });
    expect(history.commands.find((c: { id: string }) => c.id === id)).toMatchObject({
      reason: 'LaunchFailed',
    });
    await ai.close();
    await owner.close();
    expect(d.child.exitCode).toBeNull();
  }, 120_000);

  it('[c4.spawn-error] the launcher killed while a command runs: that command ends UNKNOWN and is stopped, the next launch starts a new launcher', async () => {
    await d?.stop();
    const dataDir = makeDataDir('ogf-emfile-');
    const markFile = join(dataDir, 'marks.txt');
    const base = ownerCatalog(markFile) as { commands: Record<string, Record<string, unknown>> };
    const config = {
      ...base,
      commands: {
        ...base.commands,
        linger: { description: 'Sleeps a minute', argv: ['/bin/sleep', '61.5'] },
        fds: {
          description: 'Lists its socket descriptors',
          argv: ['/usr/bin/find', '/proc/self/fd/', '-lname', 'socket:*'],
        },
      },
    };
    d = await startDaemon({ dataDir, config });
    const owner = await OwnerSocket.open(d);
    const ai = await mcpClient(d);
    const id = await queue(ai, 'linger', {});
    const view = await owner.upsert(id, () => true, 'the command');
    expect(await owner.request({ type: 'approve', id, version: view.version })).toMatchObject({ ok: true });
    await owner.upsert(id, (c) => c.state === 'running', 'it to run');
    await waitFor(() => sleeper('61.5') !== undefined, 'the program to start');
    const launcher = launcherPid(d.info.pid)!;
    // Code running as the owner's user kills the launcher (it could kill the daemon itself just the same).
    process.kill(launcher, 'SIGKILL');
    const final = await owner.upsert(id, (c) => c.status !== 'PENDING', 'the command to end');
    expect(final).toMatchObject({ state: 'unknown', status: 'UNKNOWN', reason: 'DaemonRestarted' });
    expect(final.result.detail).toContain('launcher');
    // Stopped with it (the daemon signalled its process group) — or, when the launcher died before it told
    // the pid, the detail says it may still be running, which is then true.
    if (String(final.result.detail).includes('may still be running')) {
      const left = sleeper('61.5');
      expect(left).toBeDefined();
      process.kill(left!, 'SIGKILL');
    }
    await waitFor(() => sleeper('61.5') === undefined, 'the sleep to be stopped');
    const next = await queue(ai, 'mark', { word: 'again' });
    expect(await approvedToEnd(owner, next)).toMatchObject({ status: 'SUCCEEDED' });
    expect(readMarks(markFile)).toEqual(['again']);
    const relaunched = launcherPid(d.info.pid);
    expect(relaunched, 'a new launcher process runs').toBeDefined();
    expect(relaunched).not.toBe(launcher);
    // What the launcher starts holds no other socket: not the launcher's IPC channel, nor one of the daemon's.
    const listed = await approvedToEnd(owner, await queue(ai, 'fds', {}));
    expect(listed.status).toBe('SUCCEEDED');
    // (Node makes a program's stdout and stderr pipes as socket pairs: those two are its own.)
    const sockets = String(listed.result.stdout).trim().split('\n');
    expect(sockets.filter((l) => l !== '/proc/self/fd/1' && l !== '/proc/self/fd/2')).toEqual([]);
    await ai.close();
    await owner.close();
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
