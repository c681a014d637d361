/**
 * Fuzzing the command line and the config file (issue 6 item 4, contract 1.1/1.3) through the real
 * `ogf-broker` CLI: generated bad config files (wrong types, out-of-range numbers, stray and prototype
 * keys, huge and garbage content), bad flags and bad environment values. Each must exit 2 with exactly
 * one line on stderr naming the field, print nothing on stdout, and create nothing (the data dir it
 * would use does not appear).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers/daemon.js';
import { FUZZ_SEED, hostileValue, nastyString, strayKey } from './helpers/fuzz.js';

const CONFIG_RUNS = 10;
/** CLI processes at once: each is mostly Node start-up, so a few overlap well even on 2 cores. */
const CONCURRENCY = 3;

async function eachConcurrently<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}
/** Each case is a real CLI process; on a loaded 2-core machine they take over a second each. */
const SLOW = 240_000;

interface Run {
  code: number | null;
  stdout: string;
  stderrLines: string[];
  startedDaemon: boolean;
}

function runCli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const base: Record<string, string | undefined> = { ...process.env };
    for (const k of Object.keys(base)) if (k.startsWith('OGF_')) delete base[k];
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let started = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // A config the product wrongly accepts starts a daemon: stop it and report that.
      if (out.includes('listening on')) {
        started = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({
        code,
        stdout: out,
        stderrLines: err.split('\n').filter((l) => l.trim() !== ''),
        startedDaemon: started,
      });
    });
  });
}

const VALID_CONFIG = {
  review_timeout_s: 300,
  public_url: null,
  output_limit_bytes: 65536,
  ogf_bridge: { url: 'ws://127.0.0.1:7720/ogf-bridge', delivery_timeout_ms: 5000 },
  commands: {
    say: {
      description: 'Speak a short text aloud',
      argv: ['espeak-ng', '{text}'],
      params: { text: { type: 'string', max_length: 200 } },
      timeout_s: 30,
    },
  },
};

const int = (min: number, max: number) => (v: unknown) =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
/** Fields of contract 1.3 (ranges as the contract or, where it is silent, the product's documentation says). */
const PATHS: Array<[string[], (v: unknown) => boolean]> = [
  [['review_timeout_s'], int(10, 86_400)],
  [
    ['public_url'],
    (v) => v === null || (typeof v === 'string' && /^https:\/\/[a-z0-9.-]+(:\d+)?\/?$/i.test(v)),
  ],
  [['output_limit_bytes'], int(1024, 1024 * 1024)],
  [['max_pending_per_client'], int(1, 10_000)],
  [['max_pending'], int(1, 100_000)],
  [['ogf_bridge'], (v) => v === null],
  [['ogf_bridge', 'url'], (v) => typeof v === 'string' && /^wss?:\/\/\S+$/.test(v)],
  [['ogf_bridge', 'delivery_timeout_ms'], int(100, 60_000)],
  [
    ['commands'],
    (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0,
  ],
  [['commands', 'say', 'description'], (v) => typeof v === 'string' && v.length <= 1000],
  [['commands', 'say', 'argv'], () => false],
  [['commands', 'say', 'params', 'text', 'max_length'], int(1, 4096)],
  [['commands', 'say', 'params', 'text', 'type'], (v) => v === 'string'],
  [['commands', 'say', 'timeout_s'], int(1, 3600)],
  [['commands', 'say', 'cwd'], () => false],
];

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let o = obj;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string, unknown>;
  Object.defineProperty(o, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
}

describe('[c3.2.bad-input] config files and flags through the real CLI', () => {
  let root: string;
  let n = 0;
  /** A data dir path that does not exist: a refused start must not create it. */
  const freshDataDir = () => join(root, `data-${n++}`);

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'ogf-fuzz-cli-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  async function expectUsageError(
    args: string[],
    env: Record<string, string>,
    dataDir: string,
    what: string,
  ) {
    const r = await runCli(args, env);
    expect(r.startedDaemon, `${what}: the daemon started`).toBe(false);
    expect(r.code, `${what}: ${r.stderrLines.join(' | ')}`).toBe(2);
    expect(r.stderrLines, `${what}: exactly one line on stderr`).toHaveLength(1);
    expect(r.stdout, what).toBe('');
    expect(existsSync(dataDir), `${what}: created the data dir`).toBe(false);
    return r.stderrLines[0]!;
  }

  it(
    `${CONFIG_RUNS} generated bad config files: exit 2, one line naming the field, nothing created`,
    async () => {
      const arb = fc.oneof(
        fc
          .record({
            path: fc.constantFrom(...PATHS),
            value: hostileValue,
          })
          .filter(({ path, value }) => !path[1](value))
          .map(({ path, value }) => ({ path: path[0], value, stray: undefined })),
        fc
          .record({
            where: fc.constantFrom(
              [] as string[],
              ['ogf_bridge'],
              ['commands', 'say'],
              ['commands', 'say', 'params', 'text'],
            ),
            key: strayKey,
            value: hostileValue,
          })
          .map(({ where, key, value }) => ({ path: [...where, key], value, stray: key })),
      );
      const cases = fc.sample(arb, { numRuns: CONFIG_RUNS, seed: FUZZ_SEED + 5 });
      await eachConcurrently(cases, async (c) => {
        const config = JSON.parse(JSON.stringify(VALID_CONFIG)) as Record<string, unknown>;
        // A stray key that happens to be a known one is not stray: skip it.
        if (
          c.stray !== undefined &&
          [
            'review_timeout_s',
            'public_url',
            'output_limit_bytes',
            'max_pending_per_client',
            'max_pending',
            'ogf_bridge',
            'commands',
            'url',
            'delivery_timeout_ms',
            'description',
            'argv',
            'params',
            'cwd',
            'env',
            'timeout_s',
            'type',
            'max_length',
            'pattern',
          ].includes(c.stray)
        )
          return;
        setPath(config, c.path, c.value);
        const file = join(root, `config-${n++}.json`);
        writeFileSync(file, JSON.stringify(config));
        const dataDir = freshDataDir();
        const line = await expectUsageError(
          ['start', '--data-dir', dataDir, '--port', '0', '--config', file],
          {},
          dataDir,
          `${c.path.join('.')}=${String(JSON.stringify(c.value)).slice(0, 80)}`,
        );
        expect(line.length).toBeLessThan(1000);
        const named = c.stray !== undefined ? /unknown key/.test(line) : line.includes(c.path.at(-1)!);
        expect(named, `${line} should name ${c.path.join('.')}`).toBe(true);
      });
    },
    SLOW,
  );

  it(
    'garbage config content, a directory, a missing explicit file, prototype keys: exit 2, one line, nothing created',
    async () => {
      const contents: Array<[string, string | Buffer]> = [
        ['empty', ''],
        ['not JSON', 'review_timeout_s = 300'],
        ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
        ['an array', '[]'],
        ['null', 'null'],
        ['deep nesting', `{"commands":${'['.repeat(5000)}${']'.repeat(5000)}}`],
        ['top-level __proto__', '{"__proto__":{"review_timeout_s":5}}'],
        [
          'a command named __proto__',
          JSON.stringify({ commands: {} }).replace('{}', '{"__proto__":{"description":"x","argv":["true"]}}'),
        ],
        [
          'a command named constructor',
          JSON.stringify({ commands: {} }).replace(
            '{}',
            '{"constructor":{"description":"x","argv":["true"],"bogus":1}}',
          ),
        ],
        ['a huge string', JSON.stringify({ public_url: 'x'.repeat(2_000_000) })],
      ];
      await eachConcurrently(contents, async ([what, content]) => {
        const file = join(root, `config-${n++}.json`);
        writeFileSync(file, content);
        const dataDir = freshDataDir();
        await expectUsageError(
          ['start', '--data-dir', dataDir, '--port', '0', '--config', file],
          {},
          dataDir,
          what,
        );
      });
      const dataDir = freshDataDir();
      await expectUsageError(
        ['start', '--data-dir', dataDir, '--config', join(root, 'missing.json')],
        {},
        dataDir,
        'missing file',
      );
      await expectUsageError(['start', '--data-dir', dataDir, '--config', root], {}, dataDir, 'a directory');
    },
    SLOW,
  );

  it(
    'bad flags and environment values on every subcommand: exit 2, one line naming the flag, nothing created',
    async () => {
      // An argv string cannot hold a NUL: execve ends it there, and Node refuses it before the CLI runs.
      const bad = fc.sample(
        nastyString.filter((s) => s.length < 5000 && !s.includes('\0')),
        { numRuns: 1, seed: FUZZ_SEED + 3 },
      );
      const dataDir = freshDataDir();
      const d = ['--data-dir', dataDir];
      const cases: Array<[string[], Record<string, string>, RegExp]> = [
        [[], {}, /command/],
        [['bogus'], {}, /command/],
        [['__proto__'], {}, /command/],
        [['start', ...d, '--bogus'], {}, /bogus/],
        [['start', ...d, '--port'], {}, /port/],
        [['start', ...d, '--port', '65536'], {}, /port/],
        [['start', ...d, '--port', '-1'], {}, /port/],
        [['start', ...d, '--port', '1e3'], {}, /port/],
        [['start', ...d, '--port', ' 80'], {}, /port/],
        [['start', ...d, '--host', 'a b'], {}, /host/],
        [['start', ...d, '--host', 'x'.repeat(300)], {}, /host/],
        [['start', ...d, 'extra'], {}, /extra|argument/],
        [['start', ...d], { OGF_BROKER_PORT: 'abc' }, /OGF_BROKER_PORT/],
        [['start', ...d], { OGF_BROKER_HOST: '$(id)' }, /OGF_BROKER_HOST/],
        [['start', ...d, '--port', '0'], { OGF_BRIDGE_URL: 'http://127.0.0.1:7720' }, /OGF_BRIDGE_URL/],
        [['status', ...d, '--all'], {}, /all/],
        [['token', ...d], {}, /owner or mcp/],
        [['token', 'mcp', ...d, '--client', ''], {}, /client/],
        [['token', 'mcp', ...d, '--client', 'a b;c'], {}, /client/],
        [['token', 'mcp', ...d, '--rotate=yes'], {}, /rotate/],
        [['token', 'owner', ...d, '--client', 'x'], {}, /client/],
        [['reconcile', 'c_abcdefgh', ...d, '--outcome', 'maybe'], {}, /outcome/],
        [['list', ...d, '--all', 'x'], {}, /argument|x/],
        [['doctor', '--bogus'], {}, /bogus/],
        ...bad.map((s): [string[], Record<string, string>, RegExp] => [
          ['start', ...d, '--port', s],
          {},
          /port/,
        ]),
        ...bad.map((s): [string[], Record<string, string>, RegExp] => [
          ['token', 'mcp', ...d, '--client', `${s} x`],
          {},
          /client/,
        ]),
      ];
      await eachConcurrently(cases, async ([args, env, names]) => {
        const what = `${args
          .filter((a) => a !== dataDir)
          .join(' ')
          .slice(0, 80)} ${JSON.stringify(env)}`;
        const line = await expectUsageError(args, env, dataDir, what);
        expect(line, what).toMatch(names);
      });
    },
    SLOW,
  );
});
