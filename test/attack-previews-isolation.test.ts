/**
 * Attack (issue 35 finding 3, contract 12 (v4) "Previews cannot harm what runs"), run as the AI alone would:
 * it may submit any call it likes, and every call awaiting review is previewed before the owner decides.
 *
 * - A `write_file` naming an existing 9 MiB file made the preview's `read_text_file` answer exceed the
 *   message bound on the upstream's only connection, which closed: the owner-approved call in flight ended
 *   `UNKNOWN/DeliveryUnconfirmed`. Previews now run on a second instance of the server, and with `preset:
 *   "filesystem"` `get_file_info` is asked first, so a large file is never read.
 * - Four previews of a FIFO blocked every worker thread of the filesystem server (reading a FIFO waits for a
 *   writer), so an approved call then never got an answer. `get_file_info` first: a FIFO is never read.
 * - A call a rule denies at submit is never previewed: no read reaches the server, no preview instance starts.
 *
 * Real daemon, the real `@modelcontextprotocol/server-filesystem` (three instances, one per upstream, so each
 * attack has its own), our test upstream (which records every call it gets), real SDK client, real owner socket.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows, call, httpClient, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { FILESYSTEM, TEST_UPSTREAM } from './helpers/upstreams.js';

const root = mkdtempSync(join(tmpdir(), 'ogf-previews-isolation-'));
const folder = (name: string) => {
  const dir = join(root, name);
  mkdirSync(dir);
  return dir;
};
const notes = folder('notes');
const raw = folder('raw');
const pipes = folder('pipes');
const tlog = join(root, 't.log');
const fs = (dir: string, extra: Record<string, unknown>) => ({
  argv: [process.execPath, FILESYSTEM, dir],
  wait_seconds: 0,
  timeout_s: 20,
  ...extra,
});

let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

beforeAll(async () => {
  d = await startDaemon({
    config: {
      upstreams: {
        notes: fs(notes, { preset: 'filesystem' }),
        // No preset: the read is made without get_file_info first, so only the second instance protects.
        raw: fs(raw, {
          previews: {
            write_file: {
              kind: 'file_diff',
              read: 'read_text_file',
              path_arg: 'path',
              content_arg: 'content',
            },
          },
        }),
        pipes: fs(pipes, { preset: 'filesystem' }),
        t: {
          argv: [process.execPath, TEST_UPSTREAM, 'previews', tlog],
          wait_seconds: 0,
          previews: {
            put: { kind: 'file_diff', read: 'peek', path_arg: 'path', content_arg: 'content' },
          },
        },
      },
      rules: [
        {
          id: 'no-env',
          when: "upstream == 't' && args.path.endsWith('.env')",
          decision: 'deny',
          note: 'env files hold secrets',
        },
      ],
    },
  });
  ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
  await waitFor(
    async () => {
      const names = (await ai.listTools()).tools.map((t) => t.name);
      return ['notes__write_file', 'raw__write_file', 'pipes__write_file', 't__put'].every((n) =>
        names.includes(n),
      );
    },
    'every upstream listed',
    30_000,
  );
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

function mkfifo(path: string): void {
  expect(spawnSync('mkfifo', [path], { shell: false }).status).toBe(0);
}

async function queued(tool: string, args: Record<string, unknown>): Promise<string> {
  const r = structured(await call(ai, tool, args));
  expect(r.status).toBe('PENDING');
  return String(r.pending_id);
}

async function approve(id: string): Promise<void> {
  const seen = await owner.view(id, () => true, `${id} seen`);
  expect(await owner.request({ type: 'approve', id, version: seen.version })).toMatchObject({ ok: true });
}

const FINAL = ['SUCCEEDED', 'FAILED', 'UNKNOWN', 'DENIED'];
function final(id: string): Promise<Frame> {
  return owner.view(id, (v) => FINAL.includes(v.status), `${id} final`);
}

function settled(id: string): Promise<Frame> {
  return owner.view(id, (v) => ['ready', 'failed'].includes(v.preview?.status), `${id}'s preview`);
}

/**
 * An approved `read_text_file` of a FIFO, in flight at the server: the server holds it open for reading
 * (our non-blocking open for writing succeeds only then) until the test writes and closes its end.
 */
async function approvedReadInFlight(upstream: string, dir: string): Promise<{ id: string; fd: number }> {
  const fifo = join(dir, 'slow.pipe');
  mkfifo(fifo);
  const id = await queued(`${upstream}__read_text_file`, { path: fifo });
  await approve(id);
  const fd = await waitFor(() => {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK) + 1;
    } catch {
      return undefined;
    }
  }, 'the approved read holding the FIFO open');
  return { id, fd: fd - 1 };
}

/** Writes the FIFO's content and closes it: the approved read ends (when its server still runs). */
function release(fd: number, text: string): void {
  try {
    writeSync(fd, text);
  } catch {
    // The reader is gone (its server was stopped): the approved call's outcome says what happened.
  }
  closeSync(fd);
}

async function nextCallWorks(upstream: string, dir: string): Promise<void> {
  writeFileSync(join(dir, 'after.txt'), 'still here\n');
  const id = await queued(`${upstream}__read_text_file`, { path: join(dir, 'after.txt') });
  await approve(id);
  const v = await final(id);
  expect(v.status).toBe('SUCCEEDED');
  expect(JSON.stringify(v.result)).toContain('still here');
}

describe('[c12.isolated] a preview cannot take the upstream down (issue 35 finding 3)', () => {
  it('[c12.file-info] write_file naming a 9 MiB file while an approved call is in flight: the call succeeds, the next works', async () => {
    writeFileSync(join(notes, 'big.txt'), `${'a line of a very large file\n'.repeat(350_000)}`);
    const inFlight = await approvedReadInFlight('notes', notes);
    const id = await queued('notes__write_file', { path: join(notes, 'big.txt'), content: 'small\n' });
    const v = await settled(id);
    expect(v.preview).toMatchObject({ status: 'failed' });
    expect(v.preview.error).toContain('larger than 1 MiB');
    release(inFlight.fd, 'the approved read\n');
    const done = await final(inFlight.id);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.stringify(done.result)).toContain('the approved read');
    await nextCallWorks('notes', notes);
    expect(await owner.request({ type: 'deny', id, version: v.version })).toMatchObject({ ok: true });
  }, 60_000);

  it('[c12.isolated] without the preset, a 9 MiB preview answer ends only the preview instance', async () => {
    writeFileSync(join(raw, 'big.txt'), `${'a line of a very large file\n'.repeat(350_000)}`);
    const inFlight = await approvedReadInFlight('raw', raw);
    const id = await queued('raw__write_file', { path: join(raw, 'big.txt'), content: 'small\n' });
    const v = await settled(id);
    expect(v.preview).toMatchObject({ status: 'failed' });
    release(inFlight.fd, 'the approved read\n');
    const done = await final(inFlight.id);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.stringify(done.result)).toContain('the approved read');
    await nextCallWorks('raw', raw);
    // A second preview works again (a new preview instance replaces the one that ended).
    writeFileSync(join(raw, 'small.txt'), 'one\n');
    const again = await queued('raw__write_file', { path: join(raw, 'small.txt'), content: 'two\n' });
    const ready = await settled(again);
    expect(ready.preview.status).toBe('ready');
    expect(ready.preview.diff).toContain('-one\n+two\n');
    for (const x of [v, ready])
      expect(await owner.request({ type: 'deny', id: x.id, version: x.version })).toMatchObject({ ok: true });
  }, 60_000);

  it('[c12.file-info] four previews of a FIFO (and a dry run of one) never read it, and an approved call then works', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const fifo = join(pipes, `trap-${i}.pipe`);
      mkfifo(fifo);
      ids.push(await queued('pipes__write_file', { path: fifo, content: 'x\n' }));
    }
    // edit_file's dry run reads the file too: the same check comes first.
    const edit = join(pipes, 'trap-edit.pipe');
    mkfifo(edit);
    ids.push(await queued('pipes__edit_file', { path: edit, edits: [{ oldText: 'a', newText: 'b' }] }));
    const views = await Promise.all(ids.map(settled));
    for (const v of views) {
      expect(v.preview.status).toBe('failed');
      expect(v.preview.error).toContain('not a regular file');
    }
    const path = join(pipes, 'plain.txt');
    const id = await queued('pipes__write_file', { path, content: 'written\n' });
    await settled(id);
    await approve(id);
    expect((await final(id)).status).toBe('SUCCEEDED');
    expect(readFileSync(path, 'utf8')).toBe('written\n');
    for (const v of views)
      expect(await owner.request({ type: 'deny', id: v.id, version: v.version })).toMatchObject({ ok: true });
  }, 60_000);
});

describe('[c12.rule-denied] a call a rule denies at submit is never previewed', () => {
  it('[c12.rule-denied] write of .env denied by a rule: no read reaches the server, no preview instance starts', async () => {
    const r = structured(await call(ai, 't__put', { path: 'config/.env', content: 'API_KEY=stolen\n' }));
    expect(r.status).toBe('DENIED');
    expect(r.reason).toBe('PolicyDenied');
    const id = String(r.pending_id);
    // A call the owners do review on the same upstream, made after it: its preview is the proof that the
    // runner had every chance to preview the denied one first.
    const later = await queued('t__put', { path: 'plain.txt', content: 'x\n' });
    const v = await settled(later);
    const calls = existsSync(tlog)
      ? readFileSync(tlog, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
    expect(calls.some((c) => JSON.stringify(c).includes('.env'))).toBe(false);
    const rows = auditRows(d).filter((a) => a.command_id === id);
    expect(rows.map((a) => a.action)).not.toContain('preview_started');
    expect(rows.map((a) => a.action)).not.toContain('preview_made');
    const view = owner.latest(id);
    expect(view?.preview).toBeUndefined();
    // One preview instance of t was started, for the later call, not one for the denied call.
    const starts = d
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"upstream_preview_started"') && l.includes('"upstream":"t"'));
    expect(starts).toHaveLength(1);
    expect(await owner.request({ type: 'deny', id: later, version: v.version })).toMatchObject({ ok: true });
  });
});

describe('[c12.idle] the preview instance ends with the daemon', () => {
  it('[c12.idle] the process that answered the previews is gone once the daemon stopped', async () => {
    // The preview instance runs under bubblewrap (contract 21), in a PID namespace of its own: it is found by
    // its command line (the log file it was started with), as pgrep -f would, and bwrap's among them.
    const cmdline = (pid: string) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      } catch {
        return '';
      }
    };
    const serving = () =>
      readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && cmdline(pid).includes(tlog));
    expect(serving().some((pid) => cmdline(pid).includes('--unshare-pid'))).toBe(true);
    await owner.close();
    await ai.close();
    expect(await d.stop()).toBe(0);
    await waitFor(() => serving().length === 0, 'the preview instance gone');
  });
});
