/**
 * `daemon.json` (contract 1.2): written when the daemon is ready, removed on clean exit. Other commands
 * (status, token, mcp-stdio, list/approve/…) read it to find the running daemon; a stale one left by a
 * kill is recognised by its pid no longer being an ogf-broker `start`.
 */
import { readFileSync } from 'node:fs';
import { readStatusFile, removeStatusFile, writeStatusFile } from './status-file.js';

export interface DaemonInfo {
  pid: number;
  version: string;
  url: string;
  mcp_url: string;
  owner_url: string;
  started_at: string;
}

export function readDaemonInfo(path: string): DaemonInfo | undefined {
  const info = readStatusFile(path);
  return info && typeof info.url === 'string' ? (info as unknown as DaemonInfo) : undefined;
}

/** True when `pid` is alive and its command line is an ogf-broker `start`. */
export function isBrokerProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const isCli = argv.some((a) => a.endsWith('ogf-broker') || /daemon[/\\]cli\.js$/.test(a));
    return isCli && argv.includes('start');
  } catch {
    // No /proc (not Linux): trust the pid.
    return true;
  }
}

/** The running daemon of a data dir, or undefined when none runs. */
export function runningDaemon(path: string): DaemonInfo | undefined {
  const info = readDaemonInfo(path);
  return info && isBrokerProcess(info.pid) ? info : undefined;
}

export function writeDaemonInfo(path: string, info: DaemonInfo): void {
  writeStatusFile(path, info.pid, info);
}

/** Removes daemon.json if it is still ours. */
export function removeDaemonInfo(path: string, pid: number): void {
  if (readDaemonInfo(path)?.pid === pid) removeStatusFile(path);
}
