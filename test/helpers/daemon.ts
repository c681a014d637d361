/**
 * Starts the real daemon (`node dist/daemon/cli.js start --port 0`) in a temp data dir, as a user would,
 * and waits for its `daemon.json`. Integration tests use this; nothing of ours is mocked.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DaemonInfo } from '../../daemon/datadir/daemon-info.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const CLI = join(ROOT, 'dist', 'daemon', 'cli.js');
export type { DaemonInfo };
export const BRIDGE_CLI = join(ROOT, 'dist', 'bridge-client', 'cli.js');

export interface RunningDaemon {
  info: DaemonInfo;
  url: string;
  dataDir: string;
  ownerToken: string;
  mcpToken: string;
  child: ChildProcess;
  /** Everything the daemon wrote to stderr (its JSON log lines) and stdout so far. */
  stderr(): string;
  stdout(): string;
  /** SIGTERM and wait for exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit (fault tests). */
  kill(): Promise<void>;
}

/** A fresh private data dir (0700) under the OS temp dir. */
export function makeDataDir(prefix = 'ogf-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface StartOptions {
  dataDir?: string;
  /** Written to `<dataDir>/config.json` when given. */
  config?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  args?: string[];
  timeoutMs?: number;
}

/** Waits until `pred()` is truthy, polling; throws with `what` after `timeoutMs`. */
export async function waitFor<T>(
  pred: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

/** Every daemon started in this test file; test/helpers/setup.ts stops the survivors after the file. */
const started = new Set<ChildProcess>();

/** SIGKILLs every daemon this file started that is still running (a failed test may skip its stop). */
export async function killAllDaemons(): Promise<void> {
  const alive = [...started].filter((c) => c.exitCode === null && c.signalCode === null);
  for (const c of alive) c.kill('SIGKILL');
  await Promise.all(alive.map(exited));
  started.clear();
}

export async function startDaemon(opts: StartOptions = {}): Promise<RunningDaemon> {
  const dataDir = opts.dataDir ?? makeDataDir();
  if (opts.config) writeFileSync(join(dataDir, 'config.json'), JSON.stringify(opts.config), { mode: 0o600 });
  const env: Record<string, string | undefined> = { ...process.env, ...opts.env };
  delete env.OGF_BROKER_CONFIG;
  if (!opts.env || !('OGF_BRIDGE_URL' in opts.env)) delete env.OGF_BRIDGE_URL;
  const child = spawn(
    process.execPath,
    [CLI, 'start', '--data-dir', dataDir, '--port', '0', ...(opts.args ?? [])],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  let out = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const jsonPath = join(dataDir, 'daemon.json');
  const info = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${err}`);
      try {
        const i = JSON.parse(readFileSync(jsonPath, 'utf8')) as DaemonInfo;
        return i.pid === child.pid ? i : undefined;
      } catch {
        return undefined;
      }
    },
    'daemon.json',
    opts.timeoutMs ?? 20_000,
  );
  const read = (f: string, fallback?: string) => {
    try {
      return readFileSync(join(dataDir, f), 'utf8').trim();
    } catch {
      return fallback ?? '';
    }
  };
  return {
    info,
    url: info.url,
    dataDir,
    ownerToken: opts.env?.OGF_BROKER_OWNER_TOKEN ?? read('owner.token'),
    mcpToken: opts.env?.OGF_BROKER_MCP_TOKEN ?? read('mcp.token'),
    child,
    stderr: () => err,
    stdout: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited(child);
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited(child);
    },
  };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The real `ogf-broker` CLI as the owner runs it (terminal owner commands, `list`), with the test's own
 * OGF_BROKER_DATA_DIR / OGF_BROKER_OWNER_TOKEN cleared unless `env` sets them. Output is decoded as UTF-8
 * across chunk boundaries, so a multi-byte character split between two reads arrives whole.
 */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, OGF_BROKER_DATA_DIR: undefined, OGF_BROKER_OWNER_TOKEN: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
