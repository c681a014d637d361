/**
 * Can bubblewrap confine here (contract 21)? `bwrap` found on the daemon's PATH, then run once with the
 * namespaces a confined process gets (PID, network): a kernel without unprivileged user namespaces, or a
 * container that forbids them, fails here with bwrap's own one-line reason rather than at a launch.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export type BubblewrapProbe = { ok: true; path: string; version: string } | { ok: false; why: string };

const INSTALL = 'install it (Debian: apt install bubblewrap)';

/** The absolute path of `bwrap` on `PATH`, or undefined. */
export function findBubblewrap(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, 'bwrap');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

export function probeBubblewrap(env: NodeJS.ProcessEnv): BubblewrapProbe {
  const path = findBubblewrap(env);
  if (path === undefined)
    return { ok: false, why: `bubblewrap (bwrap) is not on the daemon's PATH; ${INSTALL}` };
  const version = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const run = spawnSync(
    path,
    [
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--unshare-pid',
      '--unshare-net',
      '--die-with-parent',
      '--',
      process.execPath,
      '-e',
      '',
    ],
    { encoding: 'utf8', timeout: 10_000, env: {} },
  );
  if (run.error !== undefined || run.status !== 0) {
    const said = (run.stderr ?? '').trim().split('\n')[0] || run.error?.message || `exit ${run.status}`;
    return { ok: false, why: `${path} cannot make its namespaces here (${said})` };
  }
  return { ok: true, path, version: (version.stdout ?? '').trim() || 'bubblewrap' };
}
