/**
 * Real processes for the bench: the daemon (`node dist/daemon/cli.js start --port 0 --data-dir D`), its
 * RSS and open descriptors read from /proc, and the bare baseline server. Logs go to a file in the data
 * dir, never to an undrained pipe (a full pipe would stall the daemon and the measurement with it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { owned } from './cleanup.js';

export const ROOT = resolve(import.meta.dirname, '..', '..', '..');
/**
 * The daemon every row starts: this checkout's build, or another build's (OGF_BENCH_DAEMON_CLI: the same
 * rows measuring a build from git history, by hand; row 15 starts its two old builds' daemons itself).
 */
export const DAEMON_CLI = process.env.OGF_BENCH_DAEMON_CLI || join(ROOT, 'dist', 'daemon', 'cli.js');
export const BRIDGE_CLI = join(ROOT, 'dist', 'bridge-client', 'cli.js');
export const BARE_SERVER = join(ROOT, 'dist', 'bench', 'bare-server.js');
const BARE_GENERATIONS = join(ROOT, 'dist', 'bench', 'bare-generations.js');

export interface Daemon {
  pid: number;
  url: string;
  mcpUrl: string;
  dataDir: string;
  ownerToken: string;
  mcpToken: string;
  child: ChildProcess;
  /** Variables the daemon was started with beyond ours (e.g. OGF_BROKER_DATABASE_URL); its CLI calls get them too. */
  env: Record<string, string>;
  /** ms from spawn to the "listening" line on stdout (printed after daemon.json is written). */
  startMs: number;
  /** The CLI it was started with: its own build's `token` command makes its tokens (mcpTokens). */
  cli: string;
  stop(): Promise<void>;
}

/** A fresh 0700 data dir; under /dev/shm when `memory` (fsync then costs nothing; see growth). */
export function makeDataDir(memory = false): string {
  const base = memory && existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return mkdtempSync(join(base, 'ogf-bench-'));
}

/**
 * The catalog every row uses: `noop` runs /bin/true with a tag that makes each request distinct. The
 * PENDING caps (contract 1.3 v2: 100 per client, 2000 in all by default) are set to their maxima: rows 2,
 * 4 and 5 keep thousands of commands awaiting review from one client token, which the defaults refuse
 * (TooManyPending) — the caps are a guard against a runaway client, not what these rows measure.
 */
export function benchConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const trueBin = existsSync('/bin/true') ? '/bin/true' : '/usr/bin/true';
  return {
    review_timeout_s: 3600,
    max_pending_per_client: 10_000,
    max_pending: 100_000,
    commands: {
      noop: {
        description: 'Does nothing (bench)',
        argv: [trueBin, '{tag}'],
        params: { tag: { type: 'string', max_length: 32, pattern: '^[a-z0-9]+$' } },
        timeout_s: 30,
      },
    },
    ...extra,
  };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

/**
 * Starts the daemon on `dataDir` (writing `config` first when given) and waits for its ready line.
 * `nodeArgs` go to node before the daemon's script (e.g. lib/inspector.ts INSPECT_ARG); `extraEnv` to its
 * environment (rows 16–18: OGF_BROKER_DATABASE_URL); `cli`, another build's (row 15's old builds).
 */
export async function startDaemon(
  dataDir: string,
  config?: Record<string, unknown>,
  nodeArgs: readonly string[] = [],
  extraEnv: Record<string, string> = {},
  cli: string = DAEMON_CLI,
): Promise<Daemon> {
  if (config) writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OGF_BROKER_DATABASE_URL;
  delete env.OGF_BROKER_CONFIG;
  delete env.OGF_BRIDGE_URL;
  delete env.OGF_BROKER_DATA_DIR;
  delete env.OGF_BENCH_DAEMON_NODE_ARGS;
  Object.assign(env, extraEnv);
  const logFd = openSync(join(dataDir, 'daemon.log'), 'a', 0o600);
  const t0 = performance.now();
  // e.g. OGF_BENCH_DAEMON_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the daemon under a row.
  const envArgs = (process.env.OGF_BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = owned(
    spawn(process.execPath, [...envArgs, ...nodeArgs, cli, 'start', '--data-dir', dataDir, '--port', '0'], {
      env,
      stdio: ['ignore', 'pipe', logFd],
    }),
  );
  closeSync(logFd);
  let out = '';
  const startMs = await new Promise<number>((resolvePromise, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`daemon exited ${code}; see ${join(dataDir, 'daemon.log')}`));
    child.once('exit', onExit);
    child.stdout!.on('data', (d: Buffer) => {
      const first = out === '';
      out += d.toString();
      if (first) {
        child.off('exit', onExit);
        resolvePromise(performance.now() - t0);
      }
    });
  });
  const info = JSON.parse(readFileSync(join(dataDir, 'daemon.json'), 'utf8')) as {
    pid: number;
    url: string;
    mcp_url: string;
  };
  return {
    pid: info.pid,
    url: info.url,
    mcpUrl: info.mcp_url,
    dataDir,
    ownerToken: readFileSync(join(dataDir, 'owner.token'), 'utf8').trim(),
    mcpToken: readFileSync(join(dataDir, 'mcp.token'), 'utf8').trim(),
    child,
    env: extraEnv,
    startMs,
    cli,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited(child);
      clearTimeout(t);
    },
  };
}

/**
 * Sessions of one client token a row opens at most: contract 3.2 allows 64 (the 65th evicts that
 * client's oldest idle session), and the daemon lets one client have 128 requests in flight.
 */
export const SESSIONS_PER_TOKEN = 50;

/**
 * `count` MCP tokens of distinct clients: the daemon's own `local` token first, then `bench-2`,
 * `bench-3`, … made by `ogf-broker token mcp --client NAME` (a running daemon honours them at once; they
 * live in broker.db, so they survive a restart). A row with 100 sessions on one token would see its first
 * 36 evicted before they were used, and 1000 waiters on one token would be 872 refusals (503). Session
 * `s` uses `tokens[s % tokens.length]`.
 */
export async function mcpTokens(d: Daemon, count: number, fresh?: string): Promise<string[]> {
  // `fresh`: clients `<fresh>-1`, `<fresh>-2`, … none used before (a row's phases then never add up
  // against one client's cap of pending commands).
  const tokens = fresh === undefined ? [d.mcpToken] : [];
  for (let i = tokens.length + 1; i <= count; i++) {
    const name = fresh === undefined ? `bench-${i}` : `${fresh}-${i}`;
    const child = owned(
      spawn(process.execPath, [d.cli, 'token', 'mcp', '--client', name, '--data-dir', d.dataDir], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...d.env },
      }),
    );
    let out = '';
    let err = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
    });
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`token mcp --client ${name} exited ${code}: ${err}`);
    tokens.push(out.trim().split('\n').at(-1)!);
  }
  return tokens;
}

/** Resident set size of `pid` in MiB (VmRSS). */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/**
 * CPU time `pid` has used so far, user + system, in ms, from /proc/<pid>/stat (fields 14 and 15, in
 * clock ticks: USER_HZ, 100 on Linux). 10 ms resolution: meaningful over blocks of hundreds of calls.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Open file descriptors of `pid` (sockets, files, pipes): the entries of /proc/<pid>/fd. */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface BareServer {
  /** The bare SDK server's Streamable HTTP endpoint (echo tool). */
  mcpUrl: string;
  /** A bare `ws` server that sends one frame of `?bytes=N` on connect. */
  wsUrl: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns a baseline server in its own process, like the daemon, and reads the JSON line it prints. */
async function spawnBaseline(
  script: string,
  args: string[],
): Promise<{ child: ChildProcess; urls: Record<string, string> }> {
  const child = owned(spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const line = await new Promise<string>((resolvePromise, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolvePromise(out.slice(0, nl));
    });
  });
  return { child, urls: JSON.parse(line) as Record<string, string> };
}

async function stopBaseline(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await exited(child);
}

/** Starts `dist/bench/bare-server.js`. */
export async function startBareServer(): Promise<BareServer> {
  const { child, urls } = await spawnBaseline(BARE_SERVER, []);
  return { mcpUrl: urls.mcp!, wsUrl: urls.ws!, child, stop: () => stopBaseline(child) };
}

/**
 * Starts `dist/bench/bare-generations.js` (row 9's floor): the SDK v2 alone serving both generations,
 * listing `tool` and answering every call with `result`.
 */
export async function startBareGenerations(
  tool: unknown,
  result: unknown,
): Promise<{ mcpUrl: string; pid: number | undefined; stop(): Promise<void> }> {
  const { child, urls } = await spawnBaseline(BARE_GENERATIONS, [JSON.stringify({ tool, result })]);
  return { mcpUrl: urls.mcp!, pid: child.pid, stop: () => stopBaseline(child) };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
