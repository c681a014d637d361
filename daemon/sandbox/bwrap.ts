/**
 * The one place the bubblewrap command line is built (contract 21), from the config's confinement and
 * nothing else, as an argv (no shell ever): the whole filesystem read-only; each writable path bound
 * writable; a private /tmp (empty but for the folders its own command line names, read-only); the daemon's
 * data dir (its tokens, its database, its keys) hidden under an empty tmpfs even where it would be
 * readable; a PID namespace of its own; no network namespace shared unless `network`; and the sandbox
 * killed when the daemon dies (`--die-with-parent`).
 *
 * No `--new-session`: the daemon already starts every child in a session and process group of its own
 * (`detached`), so a deadline's SIGTERM to the group reaches the confined process itself, not only bwrap.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import type { Confinement } from '../config/index.js';

/** A process to start: the program, its arguments and its working directory. */
export interface Launch {
  file: string;
  args: readonly string[];
  cwd?: string | undefined;
}

/**
 * What the process sees: a confinement as the config gives it (a private /tmp, `writable` writable), or a
 * preview's view of a server (previewView).
 */
export interface SandboxView extends Confinement {
  /** Its own empty /tmp (else the machine's, read-only). */
  privateTmp: boolean;
  /** Paths shown read-only although a private /tmp would hide them. */
  readOnly?: readonly string[];
}

/**
 * A preview's instance sees what the server's own instance sees, with nothing writable (contract 21): a
 * confined server's view with its writable paths read-only; an unconfined server's whole machine
 * read-only, its /tmp included (a root under /tmp must read the same), the network as it has it.
 */
export function previewView(own: Confinement | undefined): SandboxView {
  if (own === undefined) return { writable: [], network: true, privateTmp: false };
  return { writable: [], network: own.network, privateTmp: true, readOnly: own.writable };
}

/**
 * What a private /tmp must not hide: the folders in /tmp that the process's own command line names (its
 * program, a script, a root it serves, its working directory), read-only — so a server installed under /tmp
 * still starts, and reads what its argv says, while the rest of /tmp stays out of sight.
 */
function namedInTmp(launch: Launch): string[] {
  const tops = new Set<string>();
  for (const a of [launch.file, ...launch.args, launch.cwd]) {
    if (a === undefined || !isAbsolute(a)) continue;
    const parts = normalize(a).split(sep);
    if (parts[1] !== 'tmp' || parts[2] === undefined || parts[2] === '') continue;
    const top = join(sep, 'tmp', parts[2]);
    if (existsSync(top)) tops.add(top);
  }
  return [...tops];
}

export function bwrapArgs(c: Confinement | SandboxView, launch: Launch, hidden: readonly string[]): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  if (!('privateTmp' in c) || c.privateTmp) {
    args.push('--tmpfs', '/tmp');
    for (const path of namedInTmp(launch)) args.push('--ro-bind', path, path);
  }
  for (const path of ('readOnly' in c ? c.readOnly : undefined) ?? []) args.push('--ro-bind', path, path);
  for (const path of c.writable) args.push('--bind', path, path);
  // After the binds: a writable path inside the data dir does not reopen it.
  for (const path of hidden) args.push('--tmpfs', path);
  args.push('--unshare-pid', '--die-with-parent');
  if (!c.network) args.push('--unshare-net');
  if (launch.cwd !== undefined) args.push('--chdir', launch.cwd);
  args.push('--', launch.file, ...launch.args);
  return args;
}
