/**
 * A real PostgreSQL (15 or newer) for the suites of contract 16 and the bench's rows 16–18, from Debian's packages (`.ci/run` installs
 * `postgresql` when initdb is missing): `initdb` in a fresh temp dir, `pg_ctl start` listening on 127.0.0.1 on
 * a free port with its unix socket in that dir, one fresh database per `createDatabase`. PostgreSQL refuses
 * to run as root, so as root every binary runs as the `postgres` system user on a dir that user owns.
 * One server per test file (the machine is shared): start it in `beforeAll`, `stop()` it in `afterAll`.
 * Nothing is mocked: the store and the daemon talk to this server over TCP like to any other.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs a program (never a shell) and collects its output; rejects with its stderr when it fails. */
function run(
  file: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv } = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // stdin closed, so a server pg_ctl starts holds no pipe of ours open.
    const child = spawn(file, args, { shell: false, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}

/**
 * Where Debian puts a PostgreSQL's server binaries: /usr/lib/postgresql/<major>/bin. The newest installed
 * major of at least 15 (contract 16); Debian 12's `postgresql` package is 15.
 */
export const PG_BIN = (() => {
  let majors: number[] = [];
  try {
    majors = readdirSync('/usr/lib/postgresql')
      .map(Number)
      .filter((v) => Number.isInteger(v) && v >= 15)
      .sort((a, b) => b - a);
  } catch {
    // none installed
  }
  const found = majors.find((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`));
  return `/usr/lib/postgresql/${found ?? 15}/bin`;
})();

/** True when this machine has PostgreSQL's server binaries (15 or newer). */
export function havePostgres(): boolean {
  return existsSync(join(PG_BIN, 'initdb')) && existsSync(join(PG_BIN, 'pg_ctl'));
}

export interface Postgres {
  /** The TCP port the server listens on (127.0.0.1). */
  readonly port: number;
  /** The temp dir: data/, the unix socket, the server's log. */
  readonly dir: string;
  /** A `postgres://` URL of database `db` as the superuser `postgres` (trust auth on loopback). */
  url(db: string): string;
  /** Creates a fresh, empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Runs SQL in database `db` through psql; returns its unaligned output (tests inspecting the database). */
  sql(db: string, query: string): Promise<string>;
  /** Stops the server: `immediate` is a crash (no checkpoint), as a kill test wants. Idempotent. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data (after `stop`). */
  start(): Promise<void>;
  /** True while the server runs. */
  running(): boolean;
  /** The server's log so far (for a failing test's message). */
  log(): string;
  /** The postmaster's pid and its children's (backends, WAL writer, …) now, from /proc (the bench's CPU figures). */
  pids(): number[];
  /** Stops the server and removes its temp dir. */
  destroy(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL binary, as the `postgres` system user when we are root. */
function pg(bin: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const file = join(PG_BIN, bin);
  // The server's children inherit this environment: keep test variables of ours out of it.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
  return asRoot ? run('runuser', ['-u', 'postgres', '--', file, ...args], { env }) : run(file, args, { env });
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

let databases = 0;

export interface PostgresOptions {
  /**
   * fsync, full_page_writes and synchronous_commit on, as a production server runs (the bench compares it
   * with SQLite at `synchronous = FULL`). Off by default: a test's crash is a process crash, not power loss.
   */
  durable?: boolean;
  /** max_connections (default 60: a test file's few daemons; the bench runs five, each a pool of 10). */
  maxConnections?: number;
  /** shared_buffers (default 16MB, small for a shared machine). */
  sharedBuffers?: string;
}

/** initdb + start; throws with the server's own words when it cannot. */
export async function startPostgres(opts: PostgresOptions = {}): Promise<Postgres> {
  const durable = opts.durable ?? false;
  if (!havePostgres())
    throw new Error(`PostgreSQL 15 or newer is not installed (${PG_BIN}/initdb is missing)`);
  const dir = mkdtempSync(join(tmpdir(), 'ogf-pg-'));
  chmodSync(dir, 0o700);
  if (asRoot) {
    const { uid, gid } = await postgresUser();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  await pg('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  let port = await freePort();
  // Small and quiet for a shared machine; fsync off unless durable (a test crash is a process crash).
  // deadlock_timeout short, so a deadlock test does not wait the default second.
  const options = () =>
    [
      '-c listen_addresses=127.0.0.1',
      `-c port=${port}`,
      `-c unix_socket_directories=${dir}`,
      `-c fsync=${durable ? 'on' : 'off'}`,
      `-c full_page_writes=${durable ? 'on' : 'off'}`,
      '-c synchronous_commit=on',
      `-c shared_buffers=${opts.sharedBuffers ?? '16MB'}`,
      `-c max_connections=${opts.maxConnections ?? 60}`,
      '-c max_wal_senders=0',
      '-c wal_level=minimal',
      '-c autovacuum=off',
      '-c deadlock_timeout=100ms',
    ].join(' ');
  let up = false;
  const start = async () => {
    await pg('pg_ctl', ['start', '-D', data, '-w', '-t', '30', '-l', logFile, '-o', options()]);
    up = true;
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    if (!up) return;
    up = false;
    await pg('pg_ctl', ['stop', '-D', data, '-w', '-m', mode]);
  };
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  // The free port may be taken between our probe and the server's bind (another suite starting): try anew.
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (e) {
      if (attempt === 3) throw new Error(`PostgreSQL did not start: ${(e as Error).message}\n${log()}`);
      port = await freePort();
    }
  }
  const url = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  return {
    port,
    dir,
    url,
    async createDatabase(name = `ogf_${process.pid}_${++databases}`) {
      await pg('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]);
      return url(name);
    },
    async sql(db, query) {
      const r = await pg('psql', [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        db,
        '-X',
        '-A',
        '-t',
        '-v',
        'ON_ERROR_STOP=1',
        '-c',
        query,
      ]);
      return r.stdout.trim();
    },
    stop,
    start,
    running: () => up,
    log,
    pids() {
      let master: number;
      try {
        master = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      } catch {
        return [];
      }
      const children = readdirSync('/proc')
        .filter((e) => /^\d+$/.test(e))
        .filter((e) => {
          try {
            const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
            return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === master;
          } catch {
            return false; // gone meanwhile
          }
        })
        .map(Number);
      return [master, ...children];
    },
    async destroy() {
      try {
        await stop('immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
