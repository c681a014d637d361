/**
 * Install from the package (contract 17; issue 36 item 5): `npm pack` holds only what runs and its docs —
 * no tests, benchmarks, sources of tests or source maps pointing at sources it does not ship — and
 * installed globally from the tarball into a temp prefix, `ogf-broker --version` and `start` work from
 * another directory. Slow (npm installs the dependencies and builds better-sqlite3): the install is done
 * once for the file.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, ROOT, waitFor } from './helpers/daemon.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let work: string;
let bin: string;
let packed: string[];
let daemon: ChildProcess | undefined;

/** Runs `file` with `args` (no shell) and returns its stdout; throws with its stderr unless it exits 0. */
function run(file: string, args: string[], cwd: string): string {
  const r = spawnSync(file, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'ogf-install-'));
  const pack = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], ROOT)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  packed = pack[0]!.files.map((f) => f.path);
  const prefix = join(work, 'prefix');
  // From another directory, as a user installs a downloaded tarball.
  run(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      `./${pack[0]!.filename}`,
    ],
    work,
  );
  bin = join(prefix, 'bin', 'ogf-broker');
}, 900_000);

afterAll(async () => {
  if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
    daemon.kill('SIGKILL');
    await exited(daemon);
  }
});

describe('[c17.install] npm pack, npm install -g from it, ogf-broker from any directory', () => {
  it('the package holds what runs and its docs, no tests, benchmarks or test sources', () => {
    for (const path of packed) {
      expect(path, path).toMatch(
        /^(dist\/(common|daemon|bridge-client|owner-ui|examples)\/|docs\/(reference\/)?[A-Za-z-]+\.md$|README\.md$|package\.json$)/,
      );
      expect(path, path).not.toMatch(/(^|\/)(test|tests|bench|fixtures)\/|\.test\.|\.ts$|\.map$/);
    }
    for (const needed of [
      'dist/daemon/cli.js',
      'dist/bridge-client/cli.js',
      'dist/owner-ui/panel/index.html',
      'dist/owner-ui/app.js',
      'dist/owner-ui/sw.js',
      'README.md',
      'docs/operations.md',
    ])
      expect(packed).toContain(needed);
  });

  it('ogf-broker --version works from another directory', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'ogf-elsewhere-'));
    expect(run(bin, ['--version'], elsewhere)).toBe(`${VERSION}\n`);
  });

  it('ogf-broker start runs from another directory, serves, and stops cleanly', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'ogf-elsewhere-'));
    const dataDir = join(elsewhere, 'state');
    mkdirSync(dataDir, { mode: 0o700 });
    const env = { ...process.env, OGF_BROKER_DATA_DIR: undefined, OGF_BROKER_CONFIG: undefined };
    const child = spawn(bin, ['start', '--data-dir', dataDir, '--port', '0'], {
      cwd: elsewhere,
      env,
      stdio: 'ignore',
    });
    daemon = child;
    const info = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`the installed daemon exited ${child.exitCode}`);
        try {
          return JSON.parse(readFileSync(join(dataDir, 'daemon.json'), 'utf8')) as { url: string };
        } catch {
          return undefined;
        }
      },
      'daemon.json of the installed daemon',
      30_000,
    );
    // The panel's page, served from the installed package's dist/owner-ui.
    const page = await fetch(`${info.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);
    expect(readdirSync(dataDir)).toContain('broker.db');
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
  }, 60_000);
});
