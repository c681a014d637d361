/**
 * The data dir (contracts.md 1.2): created 0700, refused when group/other can reach it, `run/` created
 * 0700 at start. Every file the daemon writes here is 0600; the process umask is 077 (contract 1.1).
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { UsageError, usePrivateUmask } from '../base/index.js';

export interface DataDir {
  root: string;
  db: string;
  run: string;
  daemonJson: string;
  /** Each upstream's state for `status` (contract 1.1 (v2)), written by the running daemon. */
  upstreamsJson: string;
  /** Each notification channel's last success and failure (contract 13.1), written by the daemon. */
  notifyJson: string;
  /** The Web Push VAPID key pair (contract 13.2), created at first start. */
  vapidJson: string;
  ownerToken: string;
  mcpToken: string;
  fingerprintKey: string;
}

export function dataDirPaths(root: string): DataDir {
  return {
    root,
    db: join(root, 'broker.db'),
    run: join(root, 'run'),
    daemonJson: join(root, 'daemon.json'),
    upstreamsJson: join(root, 'upstreams.json'),
    notifyJson: join(root, 'notify.json'),
    vapidJson: join(root, 'vapid.json'),
    ownerToken: join(root, 'owner.token'),
    mcpToken: join(root, 'mcp.token'),
    fingerprintKey: join(root, 'fingerprint.key'),
  };
}

function checkPrivate(path: string, what: string): void {
  const st = statSync(path);
  if (!st.isDirectory()) throw new UsageError(`${what} ${path} is not a directory`);
  if ((st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(3, '0');
    throw new UsageError(
      `${what} ${path} is accessible to group/other (mode ${mode}); fix it with: chmod 700 ${path}`,
    );
  }
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new UsageError(
      `${what} ${path} belongs to uid ${st.uid}, not to this user; use a data dir you own`,
    );
  }
}

/**
 * Opens (creating when absent) the data dir and its `run/`; refuses a group/other accessible one.
 * Sets the process umask to 077 so SQLite's -wal/-shm and every other file come out 0600 (what the daemon
 * starts for the owner gets the umask it was started with: base/umask.ts).
 */
export function openDataDir(root: string): DataDir {
  usePrivateUmask();
  const paths = dataDirPaths(root);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  checkPrivate(root, 'data dir');
  mkdirSync(paths.run, { recursive: true, mode: 0o700 });
  chmodSync(paths.run, 0o700);
  checkPrivate(paths.run, 'run dir');
  return paths;
}

/** Checks the data dir without creating anything (doctor, status). Returns a problem, or undefined. */
export function inspectDataDir(root: string): string | undefined {
  try {
    checkPrivate(root, 'data dir');
    return undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return `data dir ${root} does not exist yet`;
    return (e as Error).message;
  }
}

/**
 * Writes a new private file exclusively (0600); fails if it exists. All or nothing: a write that fails
 * (a full disk) removes the file it created, so no empty or partial file — which may hold part of a
 * secret — is left behind (contract 4: no session file outlives its cue).
 */
export function writePrivateFileExclusive(path: string, content: string): void {
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    const buf = Buffer.from(content, 'utf8');
    // writeSync may write less than asked; keep going until all of it is written.
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
  } catch (e) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw e;
  }
  closeSync(fd);
}

/**
 * Reads a small secret file, or creates it with `make()` when absent (race-safe: O_EXCL). An empty file
 * counts as absent: it is what a daemon killed between creating and writing it leaves behind, and an
 * empty token would lock the owner out (or make an empty HMAC key).
 */
export function readOrCreateSecret(path: string, make: () => string): string {
  try {
    const value = readFileSync(path, 'utf8').trim();
    if (value !== '') return value;
    rmSync(path, { force: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  try {
    writePrivateFileExclusive(path, `${make()}\n`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return readFileSync(path, 'utf8').trim();
}

/** A generated token: 43 base64url characters, 256 random bits (contract 1.1). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}
