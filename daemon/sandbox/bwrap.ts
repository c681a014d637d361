/**
 * The one place the bubblewrap command line is built (contract 21), from the config's confinement and
 * nothing else, as an argv (no shell ever): the whole filesystem read-only; each writable path bound
 * writable; a private empty /tmp; the daemon's data dir (its tokens, its database, its keys) hidden under an
 * empty tmpfs even where it would be readable; a PID namespace of its own; no network namespace shared
 * unless `network`; and the sandbox killed when the daemon dies (`--die-with-parent`).
 *
 * No `--new-session`: the daemon already starts every child in a session and process group of its own
 * (`detached`), so a deadline's SIGTERM to the group reaches the confined process itself, not only bwrap.
 */
import type { Confinement } from '../config/index.js';

/** A process to start: the program, its arguments and its working directory. */
export interface Launch {
  file: string;
  args: readonly string[];
  cwd?: string | undefined;
}

export function bwrapArgs(c: Confinement, launch: Launch, hidden: readonly string[]): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  for (const path of c.writable) args.push('--bind', path, path);
  // After the binds: a writable path inside the data dir does not reopen it.
  for (const path of hidden) args.push('--tmpfs', path);
  args.push('--unshare-pid', '--die-with-parent');
  if (!c.network) args.push('--unshare-net');
  if (launch.cwd !== undefined) args.push('--chdir', launch.cwd);
  args.push('--', launch.file, ...launch.args);
  return args;
}
