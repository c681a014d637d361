/**
 * Confinement (contract 21) through real processes: a real daemon, Debian's bubblewrap, catalog commands the
 * owner approves over the owner socket, and the real filesystem server behind the gate.
 *
 * - a confined catalog command writes inside `writable` and fails outside it, leaving nothing;
 * - it reaches a loopback listener only with `"network": true`;
 * - as the attacker would try it: an approved command reading the owner token gets nothing (the data dir
 *   is hidden), so it cannot hand the AI a way to approve;
 * - the filesystem server confined to one of its two roots: writes to the other fail, reads of both work;
 * - a missing bubblewrap (PATH without it) refuses the config at start, naming the entry (exit 2);
 * - kill -9 of the daemon leaves no confined process behind.
 *
 * The folders live under /var/tmp: a confined process has its own empty /tmp, so a root under /tmp would be
 * out of its sight (that is the point of it).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { callTool, type Frame, mcpClient, OwnerSocket } from './helpers/owner.js';
import { FILESYSTEM, TEST_UPSTREAM } from './helpers/upstreams.js';

const NODE = process.execPath;
let base: string;
let inside: string;
let outside: string;
let listener: Server;
let port: number;
let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;

const pathParam = { type: 'string', max_length: 300, pattern: '^/[A-Za-z0-9/._-]+$' };

/** A catalog command running `script` with its one param as process.argv[1]. */
function command(script: string, sandbox: Record<string, unknown> | false, param = pathParam) {
  return {
    description: 'test',
    argv: [NODE, '-e', script, '{p}'],
    params: { p: param },
    timeout_s: 30,
    sandbox,
  };
}

const WRITE = "require('fs').writeFileSync(process.argv[1], 'x')";
const CONNECT =
  "require('net').connect(+process.argv[1], '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(3) })";
const READ =
  "try { console.log('READ ' + require('fs').readFileSync(process.argv[1], 'utf8')) } catch (e) { console.log(e.code); process.exit(3) }";

/** The AI asks, the owner approves, the AI waits for the outcome. */
async function run(name: string, p: string | number): Promise<Frame> {
  const asked = await callTool(ai, 'run_command_wait', { command: name, args: { p }, wait_seconds: 0 });
  const id = asked.pending_id as string;
  const v = await owner.view(id, (x) => x.state === 'awaiting_review', 'the card');
  expect(await owner.request({ type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
  return callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 30 });
}

beforeAll(async () => {
  base = mkdtempSync('/var/tmp/ogf-sandbox-');
  inside = join(base, 'inside');
  outside = join(base, 'outside');
  for (const dir of [inside, outside]) mkdirSync(dir);
  writeFileSync(join(outside, 'seen.txt'), 'from outside');
  writeFileSync(join(inside, 'seen.txt'), 'from inside');
  listener = createServer((s) => s.end());
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  port = (listener.address() as { port: number }).port;
  d = await startDaemon({
    config: {
      commands: {
        write: command(WRITE, { writable: [inside] }),
        connect: command(CONNECT, { network: false }, { type: 'integer', min: 1, max: 65535 } as never),
        'connect-net': command(CONNECT, { network: true }, { type: 'integer', min: 1, max: 65535 } as never),
        peek: command(READ, {}),
        'peek-open': command(READ, false),
      },
      upstreams: {
        notes: {
          argv: [NODE, FILESYSTEM, inside, outside],
          trust_read_only_hint: true,
          sandbox: { writable: [inside] },
        },
      },
      rules: [{ id: 'writes', when: "command == 'notes__write_file'", decision: 'allow' }],
    },
  });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  await waitFor(
    async () => (await ai.listTools()).tools.some((t) => t.name === 'notes__write_file'),
    'the confined filesystem server listed',
    30_000,
  );
}, 60_000);

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
  listener?.close();
  rmSync(base, { recursive: true, force: true });
});

describe('[c21.confined] an approved process touches only what its confinement allows', () => {
  it('writes inside `writable`; a write outside fails in the process and leaves nothing', async () => {
    expect(await run('write', join(inside, 'ok.txt'))).toMatchObject({ status: 'SUCCEEDED', exit_code: 0 });
    expect(readFileSync(join(inside, 'ok.txt'), 'utf8')).toBe('x');
    const out = await run('write', join(outside, 'no.txt'));
    expect(out).toMatchObject({ status: 'ERROR', reason: 'NonZeroExit' });
    expect(String(out.stderr)).toContain('EROFS');
    expect(existsSync(join(outside, 'no.txt'))).toBe(false);
  });

  it('reaches a loopback listener only with "network": true', async () => {
    const without = await run('connect', port);
    expect(without).toMatchObject({ status: 'ERROR', exit_code: 3 });
    expect(String(without.stdout)).toMatch(/ECONNREFUSED|ENETUNREACH/);
    expect(await run('connect-net', port)).toMatchObject({ status: 'SUCCEEDED', stdout: 'connected\n' });
  });

  it('the attack: an approved command reading the owner token finds nothing; unconfined, it would', async () => {
    const token = join(d.dataDir, 'owner.token');
    const confined = await run('peek', token);
    expect(confined).toMatchObject({ status: 'ERROR', exit_code: 3 });
    expect(String(confined.stdout)).not.toContain(d.ownerToken);
    // The same read unconfined (`"sandbox": false`): why the data dir is hidden.
    const open = await run('peek-open', token);
    expect(String(open.stdout)).toContain(d.ownerToken);
  });

  it('the filesystem server confined to one of its roots: reads both, writes only there', async () => {
    const read = (path: string) => callTool(ai, 'notes__read_text_file', { path });
    expect(JSON.stringify(await read(join(outside, 'seen.txt')))).toContain('from outside');
    expect(JSON.stringify(await read(join(inside, 'seen.txt')))).toContain('from inside');
    const write = (path: string) =>
      callTool(ai, 'notes__write_file', { path, content: 'written' }).then((r) =>
        r.status === 'PENDING'
          ? callTool(ai, 'await_command_result', { pending_id: r.pending_id, wait_seconds: 30 })
          : r,
      );
    await write(join(inside, 'w.txt'));
    expect(readFileSync(join(inside, 'w.txt'), 'utf8')).toBe('written');
    const refused = await write(join(outside, 'w.txt'));
    expect(JSON.stringify(refused)).toMatch(/EROFS|read-only/i);
    expect(existsSync(join(outside, 'w.txt'))).toBe(false);
  });
});

describe('[c21.shown] the reach is shown before the owner decides (contract 21)', () => {
  it('the card (View) and `ogf-broker list` say what the process may touch', async () => {
    const asked = await callTool(ai, 'run_command_wait', {
      command: 'write',
      args: { p: join(inside, 'shown.txt') },
      wait_seconds: 0,
    });
    const id = asked.pending_id as string;
    const v = await owner.view(id, (x) => x.state === 'awaiting_review', 'the card');
    expect(v.reach).toBe(`confined: writes only under ${inside}; no network`);
    const open = await callTool(ai, 'run_command_wait', {
      command: 'peek-open',
      args: { p: '/etc/hostname' },
      wait_seconds: 0,
    });
    expect((await owner.view(open.pending_id, (x) => x.state === 'awaiting_review', 'the card')).reach).toBe(
      'not confined',
    );
    const list = await runCli(['list', '--data-dir', d.dataDir]);
    expect(list.stdout).toContain(`reach: confined: writes only under ${inside}; no network`);
    expect(list.stdout).toContain('reach: not confined');
    for (const c of [id, open.pending_id as string]) {
      const cur = owner.latest(c)!;
      expect(await owner.request({ type: 'deny', id: c, version: cur.version })).toMatchObject({ ok: true });
    }
    const status = await runCli(['status', '--data-dir', d.dataDir]);
    expect(status.stdout).toContain(
      `confinement commands.write: confined: writes only under ${inside}; no network`,
    );
    expect(status.stdout).toContain('confinement commands.peek-open: not confined');
    expect(status.stdout).toContain(
      `confinement upstreams.notes: confined: writes only under ${inside}; no network`,
    );
  });
});

describe('[c21.confined] a preview can only read (contract 21)', () => {
  it('a preview instance that tries to write cannot (EROFS); the approved call, unconfined, writes', async () => {
    const log = join(base, 'dry.log');
    const p = await startDaemon({
      config: {
        upstreams: {
          dry: {
            argv: [NODE, TEST_UPSTREAM, 'previews', log],
            previews: { put: { kind: 'dry_run', arg: 'dry' } },
            wait_seconds: 0,
          },
        },
      },
    });
    const client = await mcpClient(p);
    const o = await OwnerSocket.open(p);
    try {
      await waitFor(
        async () => (await client.listTools()).tools.some((t) => t.name === 'dry__put'),
        'dry__put',
        30_000,
      );
      const asked = await callTool(client, 'dry__put', { path: 'a.txt', content: 'b' });
      const id = asked.pending_id as string;
      // The preview's own instance runs the tool with dry: true; the fixture logs every call it gets, and
      // that write fails inside the sandbox (it says so on stderr, which the daemon logs): nothing written.
      const v = await o.view(id, (x) => x.preview?.status === 'ready', 'the preview');
      expect(v.preview.text).toBe('wrote');
      const calls = () =>
        existsSync(log)
          ? readFileSync(log, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l) as Frame)
          : [];
      expect(calls().filter((c) => c.call === 'put')).toEqual([]);
      // The instance's stderr is its own pipe, read beside the answer on stdout: under load its line may be
      // logged after the preview is ready, so the test waits for the line (a full run once read it too early).
      const said = () =>
        p
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"event":"upstream_stderr"') && l.includes('"instance":"preview"'))
          .map((l) => (JSON.parse(l) as { line: string }).line);
      await waitFor(
        () => said().some((l) => l.startsWith('record (not written: EROFS)') && l.includes('"dry":true')),
        'the preview instance saying on stderr that its write was refused (EROFS)',
      );
      expect(await o.request({ type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
      await callTool(client, 'await_command_result', { pending_id: id, wait_seconds: 30 });
      expect(
        calls()
          .filter((c) => c.call === 'put')
          .map((c) => c.arguments),
      ).toEqual([{ path: 'a.txt', content: 'b' }]);
    } finally {
      await o.close();
      await client.close();
      await p.stop();
    }
  });
});

describe('[c21.never-unconfined] a confined entry is never run unconfined (contract 21)', () => {
  it('no bwrap on PATH: start refuses the config, naming the entry, exit 2', async () => {
    const dataDir = makeDataDir('ogf-sandbox-nobwrap-');
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({ commands: { write: command(WRITE, { writable: [inside] }) } }),
      {
        mode: 0o600,
      },
    );
    const r = await runCli(['start', '--data-dir', dataDir, '--port', '0'], { PATH: '/nonexistent' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^ogf-broker: config .*: commands\.write\.sandbox: bubblewrap \(bwrap\) is not on PATH/m,
    );
    expect(existsSync(join(dataDir, 'daemon.json'))).toBe(false);
    const doctor = await runCli(['doctor', '--data-dir', dataDir], { PATH: '/nonexistent' });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(
      /^FAIL confinement: commands\.write\.sandbox: bubblewrap \(bwrap\) is not on PATH/m,
    );
  });

  it('kill -9 of the daemon leaves no confined process behind', async () => {
    const marker = mkdtempSync(join(base, 'killed-'));
    const k = await startDaemon({
      config: { upstreams: { held: { argv: [NODE, FILESYSTEM, marker], sandbox: { writable: [] } } } },
    });
    /** The processes whose command line names the marker folder (read from /proc, as pgrep -f would). */
    const pids = () =>
      readdirSync('/proc').filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
        } catch {
          return false;
        }
      });
    await waitFor(() => pids().length >= 2, 'bwrap and the confined server running', 30_000);
    await k.kill();
    await waitFor(() => pids().length === 0, 'no confined process left');
  });
});
