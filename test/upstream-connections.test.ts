/**
 * Contract 7 and 1.1 (v2): upstream connections, through the real config of a real daemon, with real
 * upstream servers from node_modules (@modelcontextprotocol/server-filesystem, server-everything), our own
 * misbehaving test server (test/fixtures/test-upstream.mjs), and another real daemon as a Streamable HTTP
 * upstream that needs a bearer token.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { EVERYTHING, FILESYSTEM, TEST_UPSTREAM } from './helpers/upstreams.js';

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The pids our test server recorded at its starts, in order. */
function startedPids(log: string): number[] {
  try {
    return readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { pid: number; started?: boolean })
      .filter((e) => e.started)
      .map((e) => e.pid);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process whose parent chain leads to `root` (from /proc). */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of spawnSync('ls', ['/proc'], { encoding: 'utf8' }).stdout.split('\n')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(entry), ppid);
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}

function statusLines(d: RunningDaemon): string[] {
  return cli(['status', '--data-dir', d.dataDir])
    .stdout.split('\n')
    .filter((l) => l.startsWith('upstream '));
}

const daemons: RunningDaemon[] = [];
afterAll(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
});

describe('upstream connections', () => {
  const files = mkdtempSync(join(tmpdir(), 'ogf-up-files-'));
  const ourLog = join(mkdtempSync(join(tmpdir(), 'ogf-up-log-')), 'calls.jsonl');
  let d: RunningDaemon;

  it('[c7.connections] start does not wait; status shows each upstream connected with its tools, or down and why', async () => {
    d = await startDaemon({
      config: {
        upstreams: {
          fs: { argv: [process.execPath, FILESYSTEM, files] },
          everything: { argv: [process.execPath, EVERYTHING, 'stdio'] },
          ours: { argv: [process.execPath, TEST_UPSTREAM, 'ok', ourLog] },
          never: { argv: [process.execPath, TEST_UPSTREAM, 'exit-at-start'] },
          missing: { argv: ['/nonexistent/ogf-upstream-program'] },
        },
      },
    });
    daemons.push(d);
    const lines = await waitFor(
      () => {
        const l = statusLines(d);
        // Settled: connected with every tool exposed (their schemas compile in the background after the
        // listing, so "connected with 14 tools, 11 exposed" may come first), or down.
        const done = l.filter((x) => /connected with \d+ tools$|down \(/.test(x));
        return done.length === 5 ? l : undefined;
      },
      'every upstream connected with its tools exposed, or down',
      45_000,
    );
    expect(lines.find((l) => l.startsWith('upstream fs: '))).toMatch(
      /^upstream fs: connected with \d+ tools$/,
    );
    expect(lines.find((l) => l.startsWith('upstream everything: '))).toMatch(/connected with \d+ tools$/);
    expect(lines).toContain('upstream ours: connected with 8 tools');
    expect(lines.find((l) => l.startsWith('upstream never: '))).toMatch(/^upstream never: down \(.+\)$/);
    expect(lines.find((l) => l.startsWith('upstream missing: '))).toMatch(
      /^upstream missing: down \(.*ENOENT.*\)$/,
    );
  });

  it('[c7.stderr] an upstream’s stderr is in the daemon log, line by line, tagged with its name', async () => {
    const line = await waitFor(
      () =>
        d
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"upstream_stderr"'))
          .map((l) => JSON.parse(l) as { upstream: string; line: string })
          .find((e) => e.upstream === 'never'),
      'a stderr line of upstream never',
    );
    expect(line.line).toBe('test-upstream: exiting at start on purpose');
  });

  it('[c7.restart] an upstream killed with SIGKILL is started again and connected again', async () => {
    const [first] = await waitFor(() => {
      const p = startedPids(ourLog);
      return p.length > 0 ? p : undefined;
    }, 'our upstream started');
    process.kill(first!, 'SIGKILL');
    const pids = await waitFor(() => {
      const p = startedPids(ourLog);
      return p.length > 1 ? p : undefined;
    }, 'our upstream started again');
    expect(pids[1]).not.toBe(first);
    await waitFor(() => statusLines(d).includes('upstream ours: connected with 8 tools'), 'connected again');
  });

  it('[c7.stop] stopping the daemon stops every upstream’s process group: no orphans', async () => {
    const children = descendants(d.child.pid!);
    const ours = startedPids(ourLog).at(-1)!;
    expect(children).toContain(ours);
    expect(children.length).toBeGreaterThanOrEqual(3);
    expect(await d.stop()).toBe(0);
    await waitFor(() => children.every((p) => !alive(p)), 'every upstream process gone', 10_000);
  });

  it('[c7.connections] doctor starts each upstream, lists its tools and says so per upstream', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ogf-up-doctor-'));
    const config = join(dataDir, 'doctor-config.json');
    writeFileSync(
      config,
      JSON.stringify({
        upstreams: {
          ours: { argv: [process.execPath, TEST_UPSTREAM, 'ok'] },
          never: { argv: [process.execPath, TEST_UPSTREAM, 'exit-at-start'] },
        },
      }),
    );
    const r = cli(['doctor', '--data-dir', dataDir, '--config', config, '--port', '0']);
    expect(r.stdout).toMatch(/^ok {3}upstream ours: starts and lists 8 tools$/m);
    expect(r.stdout).toMatch(/^FAIL upstream never: did not answer: .+$/m);
    expect(r.code).toBe(1);
  });
});

describe('misbehaving upstreams', () => {
  it('[c7.refuse-garbage] a flooded tool list and garbage output are refused and logged; the daemon and other upstreams go on', async () => {
    const d = await startDaemon({
      config: {
        upstreams: {
          flood: { argv: [process.execPath, TEST_UPSTREAM, 'flood-tools'] },
          garbage: { argv: [process.execPath, TEST_UPSTREAM, 'garbage'] },
          ours: { argv: [process.execPath, TEST_UPSTREAM, 'ok'] },
          fat: { argv: [process.execPath, TEST_UPSTREAM, 'fat-tool'] },
        },
      },
    });
    daemons.push(d);
    const skipped = await waitFor(() => {
      const s = d
        .stderr()
        .split('\n')
        .filter((l) => l.includes('"upstream_tool_skipped"'))
        .map((l) => JSON.parse(l) as { upstream: string; tool: string; why: string });
      return s.length === 2 ? s : undefined;
    }, 'the two unexposable tools of fat skipped and logged');
    expect(skipped.every((e) => e.upstream === 'fat')).toBe(true);
    expect(skipped.map((e) => e.why).sort()).toEqual([
      'its definition is larger than 65536 characters of JSON',
      'its exposed name would not match ^[A-Za-z0-9_-]{1,64}$',
    ]);
    await waitFor(
      () => d.stderr().includes('"upstream_tools_refused"') && d.stderr().includes('"upstream":"flood"'),
      'the flood refused in the log',
      30_000,
    );
    await waitFor(
      () =>
        /"event":"upstream_refused","upstream":"garbage","why":"it wrote a line that is not a JSON-RPC message/.test(
          d.stderr(),
        ),
      'the garbage upstream down in the log',
      30_000,
    );
    const lines = await waitFor(() => {
      const l = statusLines(d);
      return l.includes('upstream ours: connected with 8 tools') ? l : undefined;
    }, 'ours connected');
    expect(lines.find((l) => l.startsWith('upstream flood: '))).toMatch(
      /^upstream flood: (down \(it listed 5008 tools, more than the 512 accepted\)|connecting)$/,
    );
    expect(lines.find((l) => l.startsWith('upstream garbage: '))).toMatch(
      /^upstream garbage: (down \(.+\)|connecting)$/,
    );
    expect((await fetch(`${d.url}/mcp`)).status).toBe(401);
    expect(d.child.exitCode).toBeNull();
  });
});

describe('Streamable HTTP upstreams', () => {
  it('[c7.headers-env] headers_from_env reach the HTTP upstream; the value is never logged or stored', async () => {
    const remote = await startDaemon();
    daemons.push(remote);
    const secret = `Bearer ${remote.mcpToken}`;
    const d = await startDaemon({
      config: {
        upstreams: {
          remote: { url: `${remote.url}/mcp`, headers_from_env: { Authorization: 'REMOTE_MCP_AUTH' } },
          nokey: { url: `${remote.url}/mcp`, headers_from_env: { Authorization: 'UNSET_OGF_TEST_VAR' } },
        },
      },
      env: { REMOTE_MCP_AUTH: secret },
    });
    daemons.push(d);
    const lines = await waitFor(
      () => {
        const l = statusLines(d);
        return l.includes('upstream remote: connected with 5 tools') &&
          l.some((x) => x.startsWith('upstream nokey: down'))
          ? l
          : undefined;
      },
      'remote connected, nokey down',
      30_000,
    );
    expect(lines.find((l) => l.startsWith('upstream nokey: '))).toMatch(/UNSET_OGF_TEST_VAR.*not set/);
    expect(d.stderr()).not.toContain(remote.mcpToken);
    expect(readFileSync(join(d.dataDir, 'upstreams.json'), 'utf8')).not.toContain(remote.mcpToken);
    expect(cli(['status', '--data-dir', d.dataDir]).stdout).not.toContain(remote.mcpToken);
  });
});

describe('upstreams in the config', () => {
  // covers: [c3.2.bad-input]
  it.each([
    [{ Bad: { argv: ['x'] } }, /upstreams\.Bad.*\^\[a-z\]\[a-z0-9-\]\{0,23\}\$/],
    [{ two: { argv: ['x'], url: 'https://e.example/mcp' } }, /upstreams\.two: must have exactly one of argv/],
    [{ none: {} }, /upstreams\.none: must have exactly one of argv/],
    [{ q: { argv: ['x'], approvals: 6 } }, /upstreams\.q\.approvals: must be an integer from 1 to 5, got 6/],
    [
      { q: { argv: ['x'], approvals: 1.5 } },
      /upstreams\.q\.approvals: must be an integer from 1 to 5, got 1\.5/,
    ],
    [{ t: { argv: ['x'], timeout_s: 0 } }, /upstreams\.t\.timeout_s: must be an integer from 1 to 3600/],
    [{ h: { url: 'https://e.example/mcp', env: {} } }, /upstreams\.h\.env: applies to argv/],
    [{ u: { url: 'ftp://e.example/' } }, /upstreams\.u\.url: must be an http/],
  ])('a bad upstream entry exits 2 naming the field (%j)', (upstreams, message) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ogf-up-config-'));
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ upstreams }), { mode: 0o600 });
    const r = cli(['start', '--data-dir', dataDir, '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('[c3.2.bad-input] a catalog command name holding __ is refused (it belongs to upstream tools)', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ogf-up-config-'));
    const commands = { a__b: { description: 'x', argv: ['true'] } };
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ commands }), { mode: 0o600 });
    const r = cli(['start', '--data-dir', dataDir, '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/commands\.a__b: command names must not contain __/);
  });
});
