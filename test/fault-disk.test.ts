/**
 * Storage faults (issue 6 item 2; rule 3): the data dir on a tiny tmpfs filled to the last byte. While
 * SQLite cannot write, the daemon must not crash, must not spawn a child it could not first mark `running`
 * durably, and must refuse actions with a clear error; once space returns it must work again, and every
 * command must end in a state the contract allows — not stay stuck `approved` or `running`.
 * The exact commit points (`running` before the spawn, the outcome after the exit) are hit with the real
 * Broker and Store on the full tmpfs, through executors that fill the disk at that moment.
 * A read-only data dir: refused at start with one clear line. (Making it read-only under a running
 * daemon is not possible here: Linux refuses `remount,ro` while SQLite holds the file open for writing.)
 *
 * Needs root and `mount -t tmpfs`; where the machine does not allow it the suite is skipped and says why.
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../daemon/base/log.js';
import type { CatalogEntry, Config } from '../daemon/config/index.js';
import type { Executor } from '../daemon/core/ports/executor.js';
import { Broker } from '../daemon/core/runtime/broker.js';
import { openDataDir } from '../daemon/datadir/datadir.js';
import { Catalog } from '../daemon/kinds/catalog/catalog.js';
import { CatalogExecutor } from '../daemon/kinds/catalog/executor.js';
import { createCueFeature } from '../daemon/kinds/cue/feature.js';
import { KINDS } from '../daemon/kinds/index.js';
import { Store } from '../daemon/store/sqlite/index.js';
import { CLI, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { launches, markCatalog, readRows, sessionFiles, sleep } from './helpers/fault-daemon.js';
import { mcpClient, OwnerSocket } from './helpers/owner.js';

function tryMount(): { mnt: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'not root, cannot mount a tmpfs' };
  const mnt = mkdtempSync(join(tmpdir(), 'ogf-tmpfs-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=6m,mode=0700', 'tmpfs', mnt], {
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    rmSync(mnt, { recursive: true, force: true });
    return { skip: `mount -t tmpfs failed: ${(r.stderr || r.error?.message || '').trim()}` };
  }
  return { mnt };
}

const mount = tryMount();
const SKIP = 'skip' in mount ? mount.skip : undefined;
if (SKIP) console.log(`fault-disk: SKIPPED — ${SKIP}`);

let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let dataDir: string;
let mark: string;
let filler: string;

beforeAll(async () => {
  if (SKIP || 'skip' in mount) return;
  dataDir = join(mount.mnt, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  // The child's trace lives outside the full disk, so launches are still counted.
  mark = join(mkdtempSync(join(tmpdir(), 'ogf-marks-')), 'marks');
  filler = join(mount.mnt, 'filler');
  d = await startDaemon({ dataDir, config: markCatalog(mark) });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
});

afterEach(() => {
  // A failed trial must not leave the disk full for the next one.
  if ('skip' in mount) return;
  rmSync(filler, { force: true });
});

afterAll(async () => {
  if ('skip' in mount) return;
  await owner?.close().catch(() => {});
  await ai?.close().catch(() => {});
  await d?.stop();
  spawnSync('umount', ['-l', mount.mnt]);
  rmSync(mount.mnt, { recursive: true, force: true });
});

/** Fills the file system to the last byte. */
function fill(): void {
  const fd = openSync(filler, 'a');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  try {
    for (;;) writeSync(fd, chunk.subarray(0, 512));
  } catch {
    // full to the byte
  } finally {
    closeSync(fd);
  }
}

/** A submit; a JSON-RPC error (the SDK throws McpError) comes back as an isError-like refusal. */
async function submit(word: string): Promise<CallToolResult> {
  try {
    return (await ai.callTool({
      name: 'run_command_wait',
      arguments: { command: 'mark', args: { word, ms: 0 }, wait_seconds: 0 },
    })) as CallToolResult;
  } catch (e) {
    return { isError: true, content: [{ type: 'text', text: `JSON-RPC error: ${(e as Error).message}` }] };
  }
}

function idOf(r: CallToolResult): string | undefined {
  return (r.structuredContent as { pending_id?: string } | undefined)?.pending_id;
}

function alive(): boolean {
  return d.child.exitCode === null && d.child.signalCode === null;
}

/** Rule 3, checked from outside: any child that ran belongs to a command durably past `approved`. */
function spawnedOnlyIfRunningWasDurable(ids: Map<string, string>): void {
  const rows = readRows(dataDir, [...ids.keys()]);
  const marks = launches(mark);
  for (const [id, word] of ids) {
    if ((marks.get(word) ?? 0) === 0) continue;
    const row = rows.get(id);
    expect(row, `${word} ran but its command is not in the file`).toBeDefined();
    expect(
      ['running', 'succeeded', 'failed', 'unknown'],
      `${word} ran while the file says ${row?.state}`,
    ).toContain(row!.state);
  }
}

describe.skipIf(SKIP !== undefined)('[c2.rule-3] [c2.crash-safety] the data dir full (real daemon)', () => {
  for (const fault of ['disk full'] as const) {
    it(`${fault}: no crash, nothing spawned unmarked, clear refusals, recovery afterwards`, async () => {
      const ids = new Map<string, string>();
      const tag = 'full';
      // Healthy: one waits for review across the fault, one runs before it.
      const waitingWord = `${tag}wait${randomInt(1e6)}`;
      const waiting = idOf(await submit(waitingWord))!;
      ids.set(waiting, waitingWord);
      const okWord = `${tag}ok${randomInt(1e6)}`;
      const ok = idOf(await submit(okWord))!;
      ids.set(ok, okWord);
      expect((await owner.request({ type: 'approve', id: ok, version: 1 })).ok).toBe(true);
      await owner.upsert(ok, (v) => v.state === 'succeeded', 'healthy run');

      fill();

      // While the store cannot write: a submit is refused clearly (or, if SQLite still had room, queued).
      const during: string[] = [];
      for (let i = 0; i < 3; i++) {
        const word = `${tag}during${i}x${randomInt(1e6)}`;
        const r = await submit(word);
        const id = idOf(r);
        if (id) ids.set(id, word);
        const text = r.content[0]?.type === 'text' ? r.content[0].text : '';
        during.push(r.isError ? `refused: ${text.slice(0, 120)}` : `queued ${id}`);
        if (r.isError) expect(text.length, 'a refusal says why').toBeGreaterThan(10);
        expect(alive(), 'the daemon survives a refused write').toBe(true);
      }
      // Reads need no space: the client still learns the truth of what it queued.
      const read = (await ai.callTool({
        name: 'await_command_result',
        arguments: { pending_id: waiting, wait_seconds: 0 },
      })) as CallToolResult;
      expect(read.structuredContent).toMatchObject({
        pending_id: waiting,
        status: 'PENDING',
        phase: 'awaiting_review',
      });
      // The owner approves the waiting one: a reply or a resync close, never a crash, never an unmarked spawn.
      const o2 = await OwnerSocket.open(d);
      const approve = await o2
        .request({ type: 'approve', id: waiting, version: 1 })
        .then((f) => (f.ok ? 'ok' : `refused ${f.error?.code}: ${f.error?.message}`))
        .catch((e: Error) => `socket: ${e.message}`);
      await sleep(500);
      expect(alive(), 'the daemon survives a refused approval').toBe(true);
      spawnedOnlyIfRunningWasDurable(ids);

      // Space / write access returns.
      unlinkSync(filler);
      await sleep(200);

      const afterWord = `${tag}after${randomInt(1e6)}`;
      const afterR = await submit(afterWord);
      const after = idOf(afterR);
      expect(after, `a submit works again: ${JSON.stringify(afterR.content)}`).toBeTypeOf('string');
      ids.set(after!, afterWord);
      const o3 = await OwnerSocket.open(d);
      expect((await o3.request({ type: 'approve', id: after!, version: 1 })).ok).toBe(true);
      await o3.upsert(after!, (v) => v.state === 'succeeded', 'run after recovery');
      // The command approved during the fault ends truthfully in this daemon's life, not stuck.
      const final = await waitFor(
        () => {
          const v = readRows(dataDir, [waiting]).get(waiting)!;
          return ['awaiting_review', 'succeeded', 'failed', 'unknown'].includes(v.state) ? v : undefined;
        },
        'the command approved during the fault to settle',
        15_000,
      ).catch(() => readRows(dataDir, [waiting]).get(waiting)!);
      console.log(
        `fault-disk (${fault}): submits ${JSON.stringify(during)}; approve → ${approve}; that command then ${final.state}${final.reason ? `/${final.reason}` : ''}`,
      );
      expect(['awaiting_review', 'succeeded', 'failed', 'unknown'], 'not stuck approved/running').toContain(
        final.state,
      );
      if (final.state === 'awaiting_review') {
        expect((await o3.request({ type: 'approve', id: waiting, version: final.version })).ok).toBe(true);
        await o3.upsert(waiting, (v) => v.state === 'succeeded', 'approved after recovery');
      }
      spawnedOnlyIfRunningWasDurable(ids);
      for (const [, word] of ids) expect(launches(mark).get(word) ?? 0).toBeLessThanOrEqual(1);
      await o2.close();
      await o3.close();
    }, 60_000);
  }
});

type FillAt = 'approval_turn' | 'before_mark_running' | 'after_exit';

/**
 * An executor around a real one that fills the disk at one moment of the launch. A launch starts in its
 * approval's turn (issue 19 finding 6): `approval_turn` fills at once, so the approval and `running` meet
 * the full disk in one transaction; `before_mark_running` first lets that turn's batch commit (one
 * setImmediate, queued after the batch's), so the approval is durable alone — as when the launch waits for
 * a busy lane or a connecting upstream — and only `running` meets the full disk.
 */
function fillingExecutor(inner: Executor, at: FillAt): Executor {
  return {
    async execute(command, io) {
      if (at === 'before_mark_running') await new Promise((r) => setImmediate(r));
      if (at !== 'after_exit') fill();
      const r = await inner.execute(command, io);
      if (at === 'after_exit') fill();
      return r;
    },
  };
}

describe.skipIf(SKIP !== undefined)(
  '[c2.rule-3] [c2.crash-safety] the disk full exactly at a commit point (real Broker and Store)',
  () => {
    it('[c2.one-commit] approval_turn: the approval and `running` fail together; nothing spawned, the command awaits review, and runs once when approved again', async () => {
      const dir = join((mount as { mnt: string }).mnt, 'broker-approval-turn');
      mkdirSync(dir, { mode: 0o700 });
      const word = `bapprovalturn${randomInt(1e6)}`;
      const config = markCatalog(mark) as { commands: Record<string, CatalogEntry> };
      const catalog = new Catalog({ commands: config.commands });
      const store = new Store(join(dir, 'broker.db'));
      const executor = fillingExecutor(new CatalogExecutor(catalog, 4096), 'approval_turn');
      let fills = 0;
      const broker = new Broker({
        store,
        reviewTimeoutS: 300,
        kinds: KINDS,
        executors: {
          // Fills on the first launch only: the second approval below finds space.
          run_command_wait: {
            execute: (c, io) =>
              fills++ === 0 ? executor.execute(c, io) : new CatalogExecutor(catalog, 4096).execute(c, io),
          },
        },
      });
      broker.start();
      try {
        const p = catalog.prepare('mark', { word, ms: 0 }, 'local');
        if (!p.ok) throw new Error(p.message);
        const sub = await broker.submit(p.request);
        if (!sub.ok) throw new Error(sub.message);
        const id = sub.command.id;
        await expect(broker.approve(id, 1, 'owner')).rejects.toThrow(/full/);
        await sleep(300);
        expect(launches(mark).get(word) ?? 0, 'spawned without a durable running').toBe(0);
        expect(store.get(id)).toMatchObject({ version: 1, phase: { state: 'awaiting_review' } });
        expect(broker.get(id)).toMatchObject({ version: 1, phase: { state: 'awaiting_review' } });
        rmSync(filler, { force: true }); // space returns
        expect((await broker.approve(id, 1, 'owner')).ok).toBe(true);
        const final = await waitFor(
          () => (broker.get(id)?.phase.state === 'succeeded' ? broker.get(id) : undefined),
          'the command approved again to succeed',
          8000,
        );
        expect(store.get(id)?.version).toBe(final!.version);
        expect(launches(mark).get(word)).toBe(1);
      } finally {
        rmSync(filler, { force: true });
        await broker.close(1000);
        store.close();
      }
    }, 30_000);

    for (const at of ['before_mark_running', 'after_exit'] as const) {
      it(`${at}: nothing spawned unmarked; once space returns the command ends truthfully, not stuck`, async () => {
        const dir = join((mount as { mnt: string }).mnt, `broker-${at}`);
        mkdirSync(dir, { mode: 0o700 });
        const word = `b${at.replace(/_/g, '')}${randomInt(1e6)}`;
        const config = markCatalog(mark) as { commands: Record<string, CatalogEntry> };
        const catalog = new Catalog({ commands: config.commands });
        const store = new Store(join(dir, 'broker.db'));
        const broker = new Broker({
          store,
          reviewTimeoutS: 300,
          kinds: KINDS,
          executors: { run_command_wait: fillingExecutor(new CatalogExecutor(catalog, 4096), at) },
        });
        broker.start();
        try {
          const p = catalog.prepare('mark', { word, ms: 0 }, 'local');
          if (!p.ok) throw new Error(p.message);
          const sub = await broker.submit(p.request);
          if (!sub.ok) throw new Error(sub.message);
          const id = sub.command.id;
          expect((await broker.approve(id, 1, 'owner')).ok).toBe(true);
          await sleep(800);
          const during = broker.get(id)!;
          // Rule 3 from the file's point of view: a child ran only if `running` was durable.
          const durable = store.get(id)!;
          const ran = launches(mark).get(word) ?? 0;
          if (at === 'before_mark_running') expect(ran, 'spawned without a durable running').toBe(0);
          if (ran > 0) expect(['running', 'succeeded']).toContain(durable.phase.state);
          rmSync(filler, { force: true }); // space returns
          const final = await waitFor(
            () => {
              const c = broker.get(id)!;
              return ['succeeded', 'failed', 'unknown'].includes(c.phase.state) ? c : undefined;
            },
            `${at}: the command to end once space returned (it was ${during.phase.state})`,
            8000,
          );
          const stored = store.get(id)!;
          expect(stored.phase.state, 'the file agrees with the broker').toBe(final.phase.state);
          expect(stored.version).toBe(final.version);
          console.log(
            `fault-disk (broker, ${at}): during the fault ${during.phase.state}; after: ${final.phase.state}${'reason' in final.phase ? `/${final.phase.reason}: ${final.phase.detail}` : ''}`,
          );
          if (at === 'before_mark_running') {
            // Nothing ran: only a certain failure (or a later real launch) is the truth.
            expect(final.phase).toMatchObject({ state: 'failed', reason: 'LaunchFailed' });
            expect('detail' in final.phase && final.phase.detail).not.toMatch(/shutting down/);
            expect(launches(mark).get(word) ?? 0).toBe(0);
          } else {
            // The child ran and exited 0: its known outcome is committed once the disk allows it.
            expect(final.phase.state).toBe('succeeded');
            expect(launches(mark).get(word)).toBe(1);
          }
        } finally {
          rmSync(filler, { force: true });
          await broker.close(1000);
          store.close();
        }
      }, 30_000);
    }
  },
);

describe.skipIf(SKIP !== undefined)(
  '[c2.rule-1] [c4.session-file] a cue approved when the disk is full',
  () => {
    it('fails LaunchFailed once space returns, and leaves no (partial) session file in run/', async () => {
      const dir = join((mount as { mnt: string }).mnt, 'cue-full');
      mkdirSync(dir, { mode: 0o700 });
      const paths = openDataDir(dir);
      const config = {
        ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge', delivery_timeout_ms: 1000 },
        output_limit_bytes: 4096,
        commands: {},
      } as unknown as Config;
      const feature = createCueFeature({ config, paths, log: silentLogger })!;
      const store = new Store(paths.db);
      const broker = new Broker({
        store,
        reviewTimeoutS: 300,
        kinds: KINDS,
        executors: { ogf_cue: fillingExecutor(feature.executor, 'before_mark_running') },
      });
      broker.start();
      try {
        const req = feature.cues.prepare(
          {
            session_id: '7e6d5c4b-3a29-4817-8695-a4b3c2d1e0f9',
            action: 'nod',
            emotion: 'proud',
            intensity: 1,
            gaze: 'user',
            ttl_ms: 1000,
            wait_seconds: 0,
          },
          'local',
        );
        const sub = await broker.submit(req);
        if (!sub.ok) throw new Error(sub.message);
        const id = sub.command.id;
        expect((await broker.approve(id, 1, 'owner')).ok).toBe(true); // fills the disk, then writes the file
        await sleep(300);
        const leftDuring = sessionFiles(dir);
        rmSync(filler, { force: true });
        const final = await waitFor(
          () => {
            const c = broker.get(id)!;
            return c.phase.state === 'failed' ? c : undefined;
          },
          'the cue to fail once space returned',
          8000,
        );
        console.log(
          `fault-disk (cue on a full disk): ${final.phase.state}/${'reason' in final.phase ? final.phase.reason : ''}; session files left while full: ${leftDuring.length}`,
        );
        expect(final.phase).toMatchObject({ state: 'failed', reason: 'LaunchFailed' });
        expect(leftDuring, 'no session file (not even an empty or partial one) left in run/').toEqual([]);
        expect(sessionFiles(dir)).toEqual([]);
      } finally {
        rmSync(filler, { force: true });
        await broker.close(1000);
        store.close();
      }
    }, 30_000);
  },
);

describe.skipIf(SKIP !== undefined)(
  '[c2.rule-3] [c2.crash-safety] a restart onto a full disk (recovery cannot be written)',
  () => {
    it('refuses to start with one clear line, then recovers the command as unknown/DaemonRestarted once space returns', async () => {
      const dir = join((mount as { mnt: string }).mnt, 'restart-full');
      mkdirSync(dir, { mode: 0o700 });
      const word = `restartfull${randomInt(1e6)}`;
      const first = await startDaemon({ dataDir: dir, config: markCatalog(mark) });
      const client = await mcpClient(first);
      const o = await OwnerSocket.open(first);
      const id = idOf(
        (await client.callTool({
          name: 'run_command_wait',
          arguments: { command: 'mark', args: { word, ms: 3000 }, wait_seconds: 0 },
        })) as CallToolResult,
      )!;
      expect((await o.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
      await o.upsert(id, (v) => v.state === 'running', 'running');
      await waitFor(() => launches(mark).get(word), 'the child to start');
      o.ws.terminate();
      await client.close().catch(() => {});
      await first.kill();
      fill();
      try {
        const r = spawnSync(process.execPath, [CLI, 'start', '--data-dir', dir, '--port', '0'], {
          encoding: 'utf8',
          timeout: 20_000,
        });
        const lines = r.stderr
          .trim()
          .split('\n')
          .filter((l) => !l.startsWith('{'));
        console.log(
          `fault-disk (restart onto a full disk): exit ${r.status}: ${lines.join(' | ').slice(0, 240)}`,
        );
        expect(r.status, 'refused, not crashed').toBe(2);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/--data-dir: .* must be a writable directory/);
        expect(readRows(dir, [id]).get(id)!.state, 'nothing half-written').toBe('running');
      } finally {
        unlinkSync(filler);
      }
      const second = await startDaemon({ dataDir: dir });
      try {
        expect(readRows(dir, [id]).get(id)).toMatchObject({ state: 'unknown', reason: 'DaemonRestarted' });
        await sleep(300);
        expect(launches(mark).get(word), 'never launched again').toBe(1);
      } finally {
        await second.stop();
      }
    }, 60_000);
  },
);

describe.skipIf(SKIP !== undefined)('[c3.2.bad-input] a read-only or full data dir at start', () => {
  for (const kind of ['new, read-only', 'existing, read-only', 'existing, disk full'] as const) {
    it(`(${kind}) is refused with one clear line naming the data dir (exit 2), not a stack trace`, async () => {
      const mnt = (mount as { mnt: string }).mnt;
      const name = `start-${kind.replace(/\W+/g, '-')}`;
      const dir = join(mnt, name);
      mkdirSync(dir, { mode: 0o700 });
      // A data dir a daemon already used (run/, broker.db with its schema), cleanly closed.
      if (kind.startsWith('existing')) new Store(openDataDir(dir).db).close();
      const full = kind.endsWith('disk full');
      const view = full ? mnt : mkdtempSync(join(tmpdir(), 'ogf-ro-'));
      try {
        if (full) fill();
        else {
          expect(spawnSync('mount', ['--bind', mnt, view]).status).toBe(0);
          expect(spawnSync('mount', ['-o', 'remount,ro,bind', view]).status).toBe(0);
        }
        const r = spawnSync(process.execPath, [CLI, 'start', '--data-dir', join(view, name), '--port', '0'], {
          encoding: 'utf8',
          timeout: 20_000,
        });
        const lines = r.stderr.trim().split('\n');
        console.log(
          `fault-disk (${kind} data dir at start): exit ${r.status}: ${lines.join(' | ').slice(0, 240)}`,
        );
        expect(r.status).toBe(2);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/--data-dir: .* must be a writable directory/);
      } finally {
        if (full) rmSync(filler, { force: true });
        else {
          spawnSync('umount', [view]);
          rmSync(view, { recursive: true, force: true });
        }
      }
    }, 30_000);
  }
});
