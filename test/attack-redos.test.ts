/**
 * Attack: the owner's `pattern`s (contracts.md 1.3 (v2)). The AI is the adversary and chooses the value.
 * Before the fix a pattern ran on JavaScript's backtracking engine, on the event loop: `^([A-Za-z0-9]+ ?)*$`
 * with a 34-character value blocked the whole daemon for ~29 s (every client, every owner), and each more
 * character doubles that. And the anchor check was textual: `^on|off$` passed it, yet means `(^on)|(off$)`,
 * so it accepted `on --help; and anything`.
 *
 * Now the daemon wraps every pattern as `^(?:…)$` and matches it with RE2 in linear time; a pattern RE2
 * cannot compile (backreferences, lookaround) stops `start` with a config error naming the field.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { call, commandCount, httpClient, makeClientToken, structured, textOf } from './helpers/mcp.js';

const EVIL_PATTERN = '^([A-Za-z0-9]+ ?)*$';

function command(param: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    description: `Print ${param}`,
    argv: [process.execPath, '-e', 'process.stdout.write(process.argv[1])', `{${param}}`],
    params: { [param]: { type: 'string', ...spec } },
    timeout_s: 30,
  };
}

let d: RunningDaemon;
let ai: Client;
let other: Client;

beforeAll(async () => {
  d = await startDaemon({
    config: {
      commands: {
        host: command('name', { max_length: 100, pattern: EVIL_PATTERN }),
        toggle: command('state', { max_length: 40, pattern: '^on|off$' }),
        word: command('w', { max_length: 10, pattern: '^.{1,3}$' }),
      },
    },
  });
  ai = await httpClient(d.info.mcp_url, d.mcpToken);
  other = await httpClient(d.info.mcp_url, await makeClientToken(d, 'bystander'));
});

afterAll(async () => {
  await ai?.close();
  await other?.close();
  await d?.stop();
});

const run = (client: Client, cmd: string, args: Record<string, unknown>) =>
  call(client, 'run_command_wait', { command: cmd, args, wait_seconds: 0 });

describe('[c1.3.linear-patterns] owner patterns are anchored and matched in linear time (contract 1.3)', () => {
  it('[c1.3.linear-patterns] a catastrophic-backtracking value is answered, and another client is served meanwhile', async () => {
    // 64 characters: far past anything a backtracking engine finishes (34 took ~29 s; each one more doubles
    // it). Linear matching answers both calls; a stalled daemon answers neither and the test fails.
    const hostile = `${'a'.repeat(64)}!`;
    const before = commandCount(d);
    const [refused, listed] = await Promise.all([
      run(ai, 'host', { name: hostile }),
      call(other, 'list_commands', {}),
    ]);
    expect(textOf(refused)).toBe(
      'InvalidArguments: args.name must be a string of at most 100 characters without control or bidirectional characters matching ^(?:^([A-Za-z0-9]+ ?)*$)$, got a string',
    );
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(commandCount(d)).toBe(before);
    // The same pattern still admits what it describes, however long (within max_length).
    const ok = await run(ai, 'host', { name: 'ab cd '.repeat(16) });
    expect(ok.isError, textOf(ok)).toBeFalsy();
    expect(structured(ok).status).toBe('PENDING');
  });

  it('[c1.3.linear-patterns] many hostile calls from one client never starve another client', async () => {
    const hostile = Array.from({ length: 20 }, (_, i) => run(ai, 'host', { name: `${'b'.repeat(80 + i)}?` }));
    const mine = await run(other, 'toggle', { state: 'on' });
    expect(mine.isError, textOf(mine)).toBeFalsy();
    for (const r of await Promise.all(hostile)) expect(textOf(r)).toMatch(/^InvalidArguments: args\.name /);
  });

  it('[c1.3.linear-patterns] ^on|off$ means the whole value is on or off', async () => {
    const before = commandCount(d);
    for (const state of ['on --help; and anything', 'xoff', 'on\noff', 'onoff']) {
      const r = await run(ai, 'toggle', { state });
      expect(textOf(r), JSON.stringify(state)).toMatch(
        /^InvalidArguments: args\.state must be .* matching \^\(\?:\^on\|off\$\)\$, got /,
      );
    }
    expect(commandCount(d)).toBe(before);
    for (const state of ['on', 'off']) {
      const r = await run(ai, 'toggle', { state });
      expect(r.isError, textOf(r)).toBeFalsy();
    }
    const listing = structured(await call(ai, 'list_commands', {})).commands as Array<{
      name: string;
      params_schema: { properties: Record<string, { pattern?: string; description?: string }> };
    }>;
    const state = listing.find((c) => c.name === 'toggle')!.params_schema.properties.state!;
    expect(state.pattern).toBe('^(?:^on|off$)$');
    expect(state.description).toBe('At most 40 characters, without control or bidirectional characters.');
  });

  it('[c1.3.linear-patterns] a pattern counts code points, as the u flag did: one emoji is one character', async () => {
    const ok = await run(ai, 'word', { w: '😀é漢' });
    expect(ok.isError, textOf(ok)).toBeFalsy();
    const r = await run(ai, 'word', { w: '😀😀😀😀' });
    expect(textOf(r)).toMatch(/^InvalidArguments: args\.w must be .* matching \^\(\?:\^\.\{1,3\}\$\)\$/);
  });
});

function startWith(pattern: string) {
  const dir = makeDataDir('ogf-redos-cfg-');
  const file = join(dir, 'cfg.json');
  writeFileSync(file, JSON.stringify({ commands: { x: command('p', { max_length: 10, pattern }) } }));
  const data = join(dir, 'data');
  try {
    const r = spawnSync(
      process.execPath,
      [CLI, 'start', '--data-dir', data, '--port', '0', '--config', file],
      {
        encoding: 'utf8',
        env: { ...process.env, OGF_BROKER_CONFIG: '', OGF_BRIDGE_URL: '' },
        timeout: 20_000,
      },
    );
    return { code: r.status, stderr: r.stderr, created: existsSync(data) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('[c1.3.linear-patterns] a pattern RE2 cannot compile is a config error (contract 1.3)', () => {
  // covers: [c3.2.bad-input]
  const refused: Array<[string, string]> = [
    ['a backreference', '^(a)\\1$'],
    ['a lookahead', '^(?=a)a$'],
    ['a negative lookahead', '^(?!b)a$'],
    ['a lookbehind', '^(?<=a)a$'],
    ['an escape from the anchoring group', 'a)|(.*'],
    ['a JavaScript-only escape', '^\\u00e9$'],
  ];
  for (const [what, pattern] of refused) {
    it(`start refuses ${what}: exit 2, one line naming the field and why, nothing created`, () => {
      const r = startWith(pattern);
      expect(r.code, r.stderr).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('commands.x.params.p.pattern: must be an RE2 regular expression');
      expect(lines[0]).toContain('no backreferences or lookaround');
      expect(r.created).toBe(false);
    });
  }
});
