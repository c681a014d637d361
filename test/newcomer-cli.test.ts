/**
 * Issue 19 finding 5, "newcomer traps", tried as a new user would: the start banner's token command run
 * literally (through /bin/sh, as pasted into a terminal) against a daemon on a non-default data dir whose
 * name needs quoting; `token` saying which data dir it used; `status` telling listed from exposed tools;
 * `doctor` warning about an upstream that can read the data dir; and an upstream tool approved by the
 * read-only policy saying so in a real `tools/list`. Real daemon, real CLI, real upstream processes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  type CliRun,
  ROOT,
  type RunningDaemon,
  runCli,
  startDaemon,
  waitFor,
} from './helpers/daemon.js';
import { httpClient, type McpClient } from './helpers/mcp.js';
import { FILESYSTEM } from './helpers/upstreams.js';

const UPSTREAM = join(ROOT, 'test', 'fixtures', 'test-upstream.mjs');

/** A home of the test's own: a token command that misses the data dir must not touch the real one. */
const home = mkdtempSync(join(tmpdir(), 'ogf-newcomer-home-'));
/** Where `npm install -g` / `npm link` would put the `ogf-broker` bin: a symlink to dist/daemon/cli.js. */
const bin = join(home, 'bin');
mkdirSync(bin);
symlinkSync(CLI, join(bin, 'ogf-broker'));
const baseEnv = {
  HOME: home,
  XDG_STATE_HOME: join(home, 'state'),
  OGF_BROKER_DATA_DIR: undefined,
  OGF_BROKER_OWNER_TOKEN: undefined,
  OGF_BROKER_MCP_TOKEN: undefined,
  OGF_BROKER_CONFIG: undefined,
};
const withBin = `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`;

/** Runs one line exactly as a terminal would: `/bin/sh -c LINE` (quotes, spaces and all). */
function shell(line: string, env: Record<string, string | undefined>): Promise<CliRun> {
  const child = spawn('/bin/sh', ['-c', line], {
    env: { ...process.env, ...baseEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  return new Promise((r) => child.on('close', (code) => r({ code, stdout, stderr })));
}

/** The token command the banner tells the user to run. */
async function bannerTokenCommand(d: RunningDaemon): Promise<string> {
  await waitFor(() => d.stdout().includes('/login#token='), 'the start banner');
  const out = d.stdout();
  const cmd = /^MCP token: (.+)$/m.exec(out)?.[1] ?? /token: ([^;)]+)[;)]/.exec(out)?.[1];
  expect(cmd, out.replace(/#token=\S+/, '#token=…')).toBeDefined();
  return cmd!;
}

/** An MCP initialize with this bearer token: the HTTP status /mcp answers. */
async function initializeStatus(d: RunningDaemon, token: string): Promise<number> {
  const r = await fetch(d.info.mcp_url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'n', version: '1' } },
    }),
  });
  await r.body?.cancel();
  return r.status;
}

const lastLine = (s: string) => s.trim().split('\n').at(-1) ?? '';

describe('the start banner’s token command, run as printed', () => {
  const daemons: RunningDaemon[] = [];
  afterAll(async () => {
    await Promise.all(daemons.map((d) => d.stop()));
  });

  // A data dir a newcomer might well pick: a space and a quote in its name, not the default one.
  const awkward = () => join(mkdtempSync(join(tmpdir(), 'ogf newcomer-')), "owner's data dir");

  it('[c1.1.banner-token] with ogf-broker installed on PATH: the printed command works and its token opens /mcp', async () => {
    const d = await startDaemon({ dataDir: awkward(), env: { ...baseEnv, PATH: withBin } });
    daemons.push(d);
    const cmd = await bannerTokenCommand(d);
    const r = await shell(cmd, { PATH: withBin });
    expect(r.code, r.stderr).toBe(0);
    const token = lastLine(r.stdout);
    expect(await initializeStatus(d, token)).toBe(200);
    expect(token).toBe(d.mcpToken);
    expect(cmd.startsWith('ogf-broker token mcp ')).toBe(true);
    // Which data dir it used, and that this daemon serves it — on stderr, stdout's last line stays the token.
    expect(r.stderr).toContain(d.dataDir);
    expect(r.stderr).toContain(`a daemon runs there (pid ${d.info.pid}`);
    expect(r.stdout).not.toContain(d.dataDir);
  });

  it('[c1.1.banner-token] started without ogf-broker on PATH (npm start): the printed command still works as pasted', async () => {
    const plain = (process.env.PATH ?? '/usr/bin:/bin')
      .split(':')
      .filter((p) => resolve(p) !== bin)
      .join(':');
    const d = await startDaemon({ dataDir: awkward(), env: { ...baseEnv, PATH: plain } });
    daemons.push(d);
    const cmd = await bannerTokenCommand(d);
    const r = await shell(cmd, { PATH: plain });
    expect(r.code, `${cmd}\n${r.stderr}`).toBe(0);
    expect(await initializeStatus(d, lastLine(r.stdout))).toBe(200);
  });

  it('[c1.1.banner-token] a token fixed by OGF_BROKER_MCP_TOKEN: the banner points to the variable, not to a command printing another token', async () => {
    const fixed = 'f'.repeat(43);
    const d = await startDaemon({ dataDir: awkward(), env: { ...baseEnv, OGF_BROKER_MCP_TOKEN: fixed } });
    daemons.push(d);
    await waitFor(() => d.stdout().includes('/login#token='), 'the start banner');
    expect(d.stdout()).toContain("MCP token: fixed by OGF_BROKER_MCP_TOKEN in this daemon's environment");
    expect(d.stdout()).not.toContain(fixed);
    expect(await initializeStatus(d, fixed)).toBe(200);
  });

  it('[c1.1.token-where] token without --data-dir says which data dir it used and that no daemon runs there', async () => {
    const r = await runCli(['token', 'mcp'], baseEnv);
    expect(r.code, r.stderr).toBe(0);
    expect(lastLine(r.stdout)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(join(home, 'state', 'ogf-broker'));
    expect(r.stderr).toContain('no daemon runs there');
    expect(r.stderr).toContain('--data-dir');
  });
});

describe('an upstream behind a tools filter and the read-only policy', () => {
  let d: RunningDaemon;
  let mcp: McpClient;
  beforeAll(async () => {
    d = await startDaemon({
      env: baseEnv,
      config: {
        upstreams: {
          notes: {
            argv: [process.execPath, UPSTREAM, 'ok'],
            tools: ['echo', 'fail', 'reject', 'hang'],
            trust_read_only_hint: true,
          },
        },
      },
    });
    mcp = await httpClient(d.info.mcp_url, d.mcpToken);
  });
  afterAll(async () => {
    await mcp?.close();
    await d?.stop();
  });

  it('[c1.1.status-exposed] status says how many tools the upstream listed and how many are exposed', async () => {
    const r = await waitFor(
      async () => {
        const s = await runCli(['status', '--data-dir', d.dataDir]);
        // The state, not the first sign of it: an upstream's tools are exposed once their schemas are
        // compiled (in the background, after it connects), so "connected with 8 tools, 0 exposed" comes first.
        return /notes: connected with \d+ tools, [1-9]/.test(s.stdout) ? s : undefined;
      },
      'notes connected with its tools exposed in status',
      30_000,
    );
    expect(r.stdout).toContain('upstream notes: connected with 8 tools, 4 exposed\n');
  });

  it('[c7.read-only-description] a tool the read-only policy approves says so in tools/list; the others still need the owner', async () => {
    const tools = await waitFor(
      async () => {
        const t = (await mcp.listTools()).tools;
        return t.some((x) => x.name === 'notes__echo') ? t : undefined;
      },
      'notes tools listed',
      30_000,
    );
    const echo = tools.find((t) => t.name === 'notes__echo')!;
    const fail = tools.find((t) => t.name === 'notes__fail')!;
    expect(echo.description).toMatch(/^Calls are approved at once by the owner's read-only policy/);
    expect(echo.description).not.toContain("needs the owner's approval");
    expect(echo.description).toContain('Echoes its text.');
    expect(fail.description).toMatch(/^Each call needs the owner's approval/);
  });
});

describe('doctor and an upstream that can reach the data dir', () => {
  it('[c1.1.doctor-datadir] warns, naming the path, when an upstream argv or cwd contains the data dir; not for a sibling folder', async () => {
    const top = mkdtempSync(join(tmpdir(), 'ogf-newcomer-doctor-'));
    const dataDir = join(top, 'state', 'ogf-broker');
    const notes = join(top, 'notes');
    mkdirSync(notes);
    mkdirSync(join(top, 'state'));
    const config = join(top, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        upstreams: {
          home: { argv: [process.execPath, FILESYSTEM, top] },
          notes: { argv: [process.execPath, FILESYSTEM, notes] },
          here: { argv: [process.execPath, FILESYSTEM, '.'], cwd: join(top, 'state') },
        },
      }),
      { mode: 0o600 },
    );
    const r = await runCli(['doctor', '--data-dir', dataDir, '--config', config, '--port', '0'], baseEnv);
    const lines = r.stdout.split('\n');
    const warned = (name: string) => lines.filter((l) => l.startsWith(`warn upstream ${name}:`));
    expect(warned('home')).toHaveLength(1);
    expect(warned('home')[0]).toContain(`argv[2] ${top} contains the data dir ${dataDir}`);
    expect(warned('here')).toHaveLength(1);
    expect(warned('here')[0]).toContain(join(top, 'state'));
    expect(warned('notes')).toEqual([]);
    // The upstreams themselves start and list their tools: a warning, not a failure.
    expect(
      lines.filter((l) => l.startsWith('ok   upstream ')),
      r.stdout,
    ).toHaveLength(3);
    expect(r.code, r.stdout).toBe(0);
  });
});
