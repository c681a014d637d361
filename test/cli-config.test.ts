/**
 * Contract 1: the CLI, config, data dir and tokens, driven as a user would — real processes.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, OGF_BROKER_CONFIG: '', OGF_BRIDGE_URL: '', ...env },
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function expectUsage(r: ReturnType<typeof cli>, ...mentions: string[]) {
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  for (const m of mentions) expect(lines[0]).toContain(m);
}

const daemons: RunningDaemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
});

describe('[c3.2.bad-input] bad flags and bad config: one line naming the field, exit 2, nothing created', () => {
  it('unknown flag, bad port, bad host, unknown subcommand', () => {
    const dir = join(makeDataDir(), 'never');
    expectUsage(cli(['start', '--data-dir', dir, '--bogus']), '--bogus');
    expectUsage(cli(['start', '--data-dir', dir, '--port', '70000']), '--port', '0 to 65535');
    expectUsage(cli(['start', '--data-dir', dir], { OGF_BROKER_PORT: 'abc' }), 'OGF_BROKER_PORT');
    expectUsage(cli(['start', '--data-dir', dir, '--host', 'a b']), '--host');
    expectUsage(cli(['frobnicate']), 'command must be one of');
    expectUsage(cli(['token', 'mcp', '--data-dir', dir, '--client', 'Bad Name']), '--client');
    expect(existsSync(dir)).toBe(false);
  });

  const cases: Array<[string, unknown, string[]]> = [
    ['unknown key', { review_timeout: 30 }, ['review_timeout', 'unknown key']],
    ['review_timeout_s out of range', { review_timeout_s: 5 }, ['review_timeout_s', '10']],
    ['public_url not https', { public_url: 'http://x.example' }, ['public_url', 'https']],
    ['bridge url', { ogf_bridge: { url: 'http://x' } }, ['ogf_bridge.url', 'ws://']],
    [
      'placeholder naming no param',
      { commands: { say: { description: 'x', argv: ['echo', '{text}'], params: {} } } },
      ['commands.say.argv[1]', '{text}'],
    ],
    [
      'partial placeholder',
      {
        commands: {
          say: {
            description: 'x',
            argv: ['echo', 'a{text}'],
            params: { text: { type: 'string', max_length: 5 } },
          },
        },
      },
      ['commands.say.argv[1]', 'whole argv element'],
    ],
    [
      'string param without max_length',
      {
        commands: {
          say: { description: 'x', argv: ['echo', '{text}'], params: { text: { type: 'string' } } },
        },
      },
      ['commands.say.params.text'],
    ],
    [
      'allow_newlines not a boolean',
      {
        commands: {
          say: {
            description: 'x',
            argv: ['echo', '{text}'],
            params: { text: { type: 'string', max_length: 5, allow_newlines: 'yes' } },
          },
        },
      },
      ['commands.say.params.text', 'allow_newlines'],
    ],
    [
      'a pattern RE2 cannot compile (backreference)',
      {
        commands: {
          say: {
            description: 'x',
            argv: ['echo', '{text}'],
            params: { text: { type: 'string', max_length: 5, pattern: '^(a)\\1$' } },
          },
        },
      },
      ['commands.say.params.text.pattern', 'RE2', 'backreferences'],
    ],
    [
      'timeout_s too big',
      { commands: { s: { description: 'x', argv: ['true'], timeout_s: 4000 } } },
      ['commands.s.timeout_s', '3600'],
    ],
    ['not an object', [1, 2], ['must be a JSON object']],
    [
      'approvals above 5',
      { commands: { s: { description: 'x', argv: ['true'], approvals: 6 } } },
      ['commands.s.approvals', 'from 1 to 5', 'got 6'],
    ],
    // Contract 1.3/8: a grant naming an unknown command, a cue or a quorum command is a bad config.
    [
      'a grant naming no command',
      { grants: [{ command: 'nope' }] },
      ['grants[0].command', 'names no catalog command'],
    ],
    [
      'a grant for ogf.cue',
      { grants: [{ command: 'ogf.cue' }] },
      ['grants[0].command', 'ogf.cue cannot be granted'],
    ],
    [
      'a grant for a quorum command',
      { commands: { s: { description: 'x', argv: ['true'], approvals: 2 } }, grants: [{ command: 's' }] },
      ['grants[0].command', 'needs 2 owners'],
    ],
    [
      'a grant for a tool its upstream does not expose',
      {
        upstreams: { notes: { argv: ['x'], tools: ['read_text_file'] } },
        grants: [{ command: 'notes__write_file' }],
      },
      ['grants[0].command', 'notes__write_file'],
    ],
    // Contract 12: an upstream's preset and previews name the field and what it accepts.
    [
      'an unknown preview preset',
      { upstreams: { notes: { argv: ['x'], preset: 'git' } } },
      ['upstreams.notes.preset', 'must be one of "filesystem"', 'got "git"'],
    ],
    [
      'a preview of an unknown kind',
      { upstreams: { notes: { argv: ['x'], previews: { write_file: { kind: 'diff' } } } } },
      ['upstreams.notes.previews.write_file.kind', '"file_diff" or "dry_run"'],
    ],
    [
      'a file_diff preview without its read tool',
      {
        upstreams: {
          notes: { argv: ['x'], previews: { w: { kind: 'file_diff', path_arg: 'path', content_arg: 'c' } } },
        },
      },
      ['upstreams.notes.previews.w.read', 'the upstream tool that reads the file'],
    ],
    [
      'a grant with a bad client',
      {
        commands: { s: { description: 'x', argv: ['true'] } },
        grants: [{ command: 's', client: 'Nope Nope' }],
      },
      ['grants[0].client', 'or * for every client'],
    ],
    [
      'a grant with an unknown key',
      { commands: { s: { description: 'x', argv: ['true'] } }, grants: [{ command: 's', ttl_s: 60 }] },
      ['grants[0].ttl_s', 'unknown key'],
    ],
  ];
  for (const [name, config, mentions] of cases) {
    it(`config: ${name}`, () => {
      const dir = makeDataDir();
      const file = join(dir, 'cfg.json');
      writeFileSync(file, JSON.stringify(config));
      const data = join(dir, 'data');
      expectUsage(cli(['start', '--data-dir', data, '--config', file]), ...mentions);
      expect(existsSync(data)).toBe(false);
    });
  }

  it('config: invalid JSON and a missing explicit file', () => {
    const dir = makeDataDir();
    const file = join(dir, 'cfg.json');
    writeFileSync(file, '{"review_timeout_s": ');
    expectUsage(cli(['start', '--data-dir', join(dir, 'd'), '--config', file]), 'not valid JSON');
    expectUsage(
      cli(['start', '--data-dir', join(dir, 'd')], { OGF_BROKER_CONFIG: join(dir, 'nope.json') }),
      'nope.json',
    );
    expect(existsSync(join(dir, 'd'))).toBe(false);
  });

  it('config: a name given twice (JSON.parse would keep the last one) is refused, naming the path', () => {
    const dir = makeDataDir();
    const file = join(dir, 'cfg.json');
    const data = join(dir, 'd');
    const up = (path: string) => `{"argv":["${process.execPath}","${path}"]}`;
    // Contract 1.3: an upstream named twice — each entry valid, so only the duplicate can refuse it.
    writeFileSync(file, `{"upstreams":{"notes":${up('/a')},"other":${up('/b')},"notes":${up('/c')}}}`);
    expectUsage(
      cli(['start', '--data-dir', data, '--config', file]),
      `${file}: upstreams.notes: named twice`,
    );
    const say = '{"description":"x","argv":["true"]}';
    writeFileSync(file, `{"commands":{"say":${say},"s\\u0061y":${say}}}`);
    expectUsage(cli(['start', '--data-dir', data, '--config', file]), 'commands.say: named twice');
    writeFileSync(file, '{"review_timeout_s":30,\n "review_timeout_s":60}');
    expectUsage(cli(['start', '--data-dir', data, '--config', file]), 'review_timeout_s: named twice');
    expect(existsSync(data)).toBe(false);
  });

  it('[c1.2.modes] refuses a group/other accessible data dir and says how to fix it', () => {
    const dir = makeDataDir();
    chmodSync(dir, 0o755);
    expectUsage(cli(['start', '--data-dir', dir, '--port', '0']), 'chmod 700');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a fixed token shorter than 32 characters', () => {
    expectUsage(
      cli(['start', '--data-dir', makeDataDir(), '--port', '0'], { OGF_BROKER_OWNER_TOKEN: 'short' }),
      'OGF_BROKER_OWNER_TOKEN',
    );
  });
});

describe('[c1.1.loopback-only] --host takes loopback addresses only', () => {
  it('refuses 0.0.0.0, ::, a LAN address and a host name, from the flag and from OGF_BROKER_HOST', () => {
    const dir = join(makeDataDir(), 'never');
    for (const host of ['0.0.0.0', '::', '192.168.1.20', '10.0.0.1', '127.0.0.2', 'example.com', '[::1]']) {
      const r = cli(['start', '--data-dir', dir, '--port', '0', '--host', host]);
      expectUsage(r, '--host', '127.0.0.1, ::1 or localhost', JSON.stringify(host), 'tunnel', 'public_url');
      expect(r.stdout).toBe('');
    }
    expectUsage(
      cli(['start', '--data-dir', dir, '--port', '0'], { OGF_BROKER_HOST: '0.0.0.0' }),
      'OGF_BROKER_HOST',
      'loopback',
    );
    expect(existsSync(dir)).toBe(false);
  });

  it('accepts 127.0.0.1, localhost and ::1, and prints the address it really listens on', async () => {
    for (const [host, url] of [
      ['127.0.0.1', /^http:\/\/127\.0\.0\.1:\d+$/],
      ['localhost', /^http:\/\/localhost:\d+$/],
      ['::1', /^http:\/\/\[::1\]:\d+$/],
    ] as const) {
      const d = await startDaemon({ args: ['--host', host] });
      daemons.push(d);
      expect(d.url).toMatch(url);
      await waitFor(() => d.stdout().includes('/login#token='), 'login URL on stdout');
      expect(d.stdout()).toContain(`listening on ${d.url} `);
      expect((await fetch(`${d.url}/login`)).status).toBe(200);
      await d.stop();
    }
  });
});

describe('[c1.1.token-distinct] every owner token must differ from every MCP token', () => {
  it('start refuses OGF_BROKER_OWNER_TOKEN equal to OGF_BROKER_MCP_TOKEN, in one line, and the AI token then opens nothing', () => {
    const dataDir = makeDataDir();
    const same = 'same-token-for-both-same-token-for-both-xx';
    const r = cli(['start', '--data-dir', dataDir, '--port', '0'], {
      OGF_BROKER_OWNER_TOKEN: same,
      OGF_BROKER_MCP_TOKEN: same,
    });
    expectUsage(r, 'OGF_BROKER_OWNER_TOKEN', 'must differ from every MCP token', 'client local');
    expect(r.stderr).not.toContain(same);
    expect(existsSync(join(dataDir, 'daemon.json'))).toBe(false);
  });

  it('start refuses an owner token equal to another client’s MCP token (compared by hash), and says how to fix it', () => {
    const dataDir = join(makeDataDir(), 'd');
    const chatgpt = cli(['token', 'mcp', '--client', 'chatgpt', '--data-dir', dataDir]);
    expect(chatgpt.code).toBe(0);
    const token = chatgpt.stdout.trim().split('\n').at(-1)!;
    const r = cli(['start', '--data-dir', dataDir, '--port', '0'], { OGF_BROKER_OWNER_TOKEN: token });
    expectUsage(r, 'OGF_BROKER_OWNER_TOKEN', 'client chatgpt', 'token mcp --client chatgpt --rotate');
    expect(r.stderr).not.toContain(token);
    // The owner token copied into mcp.token is refused the same way.
    const other = join(makeDataDir(), 'd');
    expect(cli(['token', 'owner', '--data-dir', other]).code).toBe(0);
    writeFileSync(join(other, 'mcp.token'), readFileSync(join(other, 'owner.token')));
    expectUsage(
      cli(['start', '--data-dir', other, '--port', '0']),
      'owner.token',
      'client local',
      'token mcp --rotate',
    );
  });

  it('generated and rotated tokens, owners’ and clients’, are all distinct', () => {
    const dataDir = join(makeDataDir(), 'd');
    expect(cli(['token', 'owner', '--data-dir', dataDir]).code).toBe(0);
    const owner = readFileSync(join(dataDir, 'owner.token'), 'utf8').trim();
    const seen = new Set([owner]);
    for (const args of [
      ['token', 'mcp'],
      ['token', 'owner', '--name', 'alice'],
      ['token', 'mcp', '--rotate'],
      ['token', 'mcp', '--client', 'bot'],
      ['token', 'owner', '--name', 'bob'],
      ['token', 'owner', '--name', 'alice', '--rotate'],
      ['token', 'mcp', '--client', 'bot', '--rotate'],
      ['token', 'owner', '--rotate'],
    ]) {
      const last = cli([...args, '--data-dir', dataDir])
        .stdout.trim()
        .split('\n')
        .at(-1)!;
      const t = args[1] === 'owner' ? last.split('#token=')[1]! : last;
      expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(seen.has(t)).toBe(false);
      seen.add(t);
    }
  });

  it('start refuses an MCP token equal to a named owner’s token, naming the owner and the fix', () => {
    const dataDir = join(makeDataDir(), 'd');
    const alice = cli(['token', 'owner', '--name', 'alice', '--data-dir', dataDir]);
    expect(alice.code).toBe(0);
    const token = alice.stdout.trim().split('\n').at(-1)!.split('#token=')[1]!;
    const r = cli(['start', '--data-dir', dataDir, '--port', '0'], { OGF_BROKER_MCP_TOKEN: token });
    expectUsage(r, 'owner alice', 'must differ from every MCP token', 'token owner --name alice --rotate');
    expect(r.stderr).not.toContain(token);
    expect(existsSync(join(dataDir, 'daemon.json'))).toBe(false);
  });

  it('start refuses OGF_BROKER_OWNER_TOKEN equal to a named owner’s token (one line), instead of storing it twice', () => {
    const dataDir = join(makeDataDir(), 'd');
    const alice = cli(['token', 'owner', '--name', 'alice', '--data-dir', dataDir]);
    const token = alice.stdout.trim().split('\n').at(-1)!.split('#token=')[1]!;
    const r = cli(['start', '--data-dir', dataDir, '--port', '0'], { OGF_BROKER_OWNER_TOKEN: token });
    expectUsage(r, 'OGF_BROKER_OWNER_TOKEN', 'owner alice', 'token owner --name alice --rotate');
    expect(r.stderr).not.toContain(token);
  });

  it('a token command run from a shell without the daemon’s fixed tokens does not replace them', async () => {
    const fixed = { OGF_BROKER_OWNER_TOKEN: 'o'.repeat(40), OGF_BROKER_MCP_TOKEN: 'm'.repeat(40) };
    const d = await startDaemon({ env: fixed });
    daemons.push(d);
    // The owner's other shell: no OGF_BROKER_*_TOKEN (owner.token and mcp.token get created there).
    expect(cli(['token', 'mcp', '--client', 'bot', '--data-dir', d.dataDir]).code).toBe(0);
    expect(cli(['token', 'owner', '--name', 'alice', '--data-dir', d.dataDir]).code).toBe(0);
    const mcp = await fetch(d.info.mcp_url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fixed.OGF_BROKER_MCP_TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    await mcp.body?.cancel();
    expect(mcp.status).toBe(200);
    const login = await fetch(`${d.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: fixed.OGF_BROKER_OWNER_TOKEN }),
    });
    await login.body?.cancel();
    expect(login.status).toBe(200);
  });
});

describe('start, daemon.json, tokens, status', () => {
  it('[c1.2.modes] creates a private data dir with tokens, writes daemon.json, prints the login URL, removes it on SIGTERM', async () => {
    const parent = makeDataDir();
    const dataDir = join(parent, 'state', 'ogf');
    const d = await startDaemon({ dataDir });
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, 'run')).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(dataDir)) {
      if (f !== 'run') expect([f, statSync(join(dataDir, f)).mode & 0o777]).toEqual([f, 0o600]);
    }
    expect(d.ownerToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(d.mcpToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(d.info).toMatchObject({
      pid: d.child.pid,
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    expect(Object.keys(d.info).sort()).toEqual([
      'mcp_url',
      'owner_url',
      'pid',
      'started_at',
      'url',
      'version',
    ]);
    await waitFor(() => d.stdout().includes('/login#token='), 'login URL on stdout');
    expect(d.stdout()).toContain(`${d.url}/login#token=${d.ownerToken}`);

    const status = cli(['status', '--data-dir', dataDir]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(d.url);

    // A second start on the same data dir refuses: already running.
    expectUsage(cli(['start', '--data-dir', dataDir, '--port', '0']), 'already running');

    expect(await d.stop()).toBe(0);
    expect(existsSync(join(dataDir, 'daemon.json'))).toBe(false);
    expect(cli(['status', '--data-dir', dataDir]).code).toBe(1);
    // Logs are JSON lines and never hold a token. Read once the daemon has exited: a turn's lines are
    // written at its end, so a read while it runs may come before them.
    const lines = d.stderr().trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(d.stderr()).not.toContain(d.ownerToken);
    expect(d.stderr()).not.toContain(d.mcpToken);
  });

  it('replaces a stale daemon.json left by a kill', async () => {
    const d = await startDaemon();
    await d.kill();
    expect(existsSync(join(d.dataDir, 'daemon.json'))).toBe(true);
    const again = await startDaemon({ dataDir: d.dataDir });
    daemons.push(again);
    expect(again.info.pid).not.toBe(d.info.pid);
    expect(again.ownerToken).toBe(d.ownerToken); // tokens survive restarts
  });

  it('token owner/mcp print the URL or token as the last line; --rotate replaces; a fixed local token refuses rotation', async () => {
    const dataDir = join(makeDataDir(), 'd');
    const owner = cli(['token', 'owner', '--data-dir', dataDir]);
    expect(owner.code).toBe(0);
    const ownerToken = readFileSync(join(dataDir, 'owner.token'), 'utf8').trim();
    expect(owner.stdout.trim().split('\n').at(-1)).toBe(`http://127.0.0.1:7719/login#token=${ownerToken}`);
    const local = cli(['token', 'mcp', '--data-dir', dataDir]).stdout.trim().split('\n').at(-1);
    expect(local).toBe(readFileSync(join(dataDir, 'mcp.token'), 'utf8').trim());
    const rotated = cli(['token', 'mcp', '--data-dir', dataDir, '--rotate']).stdout.trim().split('\n').at(-1);
    expect(rotated).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated).not.toBe(local);
    const other = cli(['token', 'mcp', '--client', 'chatgpt', '--data-dir', dataDir]);
    expect(other.code).toBe(0);
    expect(
      readFileSync(join(dataDir, 'broker.db')).includes(Buffer.from(other.stdout.trim().split('\n').at(-1)!)),
    ).toBe(false);
    expectUsage(
      cli(['token', 'mcp', '--rotate', '--data-dir', dataDir], { OGF_BROKER_MCP_TOKEN: 'x'.repeat(40) }),
      'OGF_BROKER_MCP_TOKEN',
    );
    // With a running daemon, `token owner` prints its real address.
    const d = await startDaemon({ dataDir });
    daemons.push(d);
    expect(cli(['token', 'owner', '--data-dir', dataDir]).stdout.trim().split('\n').at(-1)).toBe(
      `${d.url}/login#token=${ownerToken}`,
    );
  });

  it('[c4.session-file] sweeps leftover session files at start', async () => {
    const dataDir = makeDataDir();
    mkdirSync(join(dataDir, 'run'), { mode: 0o700 });
    writeFileSync(join(dataDir, 'run', 'cue-leftoverleftoverleft.json'), '{}', { mode: 0o600 });
    const d = await startDaemon({ dataDir });
    daemons.push(d);
    expect(readdirSync(join(dataDir, 'run'))).toEqual([]);
  });
});
