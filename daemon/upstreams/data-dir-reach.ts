/**
 * `doctor`'s warning for an upstream that is handed a folder containing the data dir (issue 19 finding 5;
 * the threat note of docs/upstreams.md and docs/security.md): a filesystem server given `/home/u` can read
 * `~/.local/state/ogf-broker/owner.token`, so an AI could read the owner's token through it (each call
 * still needs an approval, but an owner who approves "read a file in my home" need not see the path).
 *
 * Judged from the config alone: every argv element that is an absolute path, `~`-relative (servers such as
 * server-filesystem expand it themselves), `./`- or `../`-relative (resolved against the upstream's `cwd`,
 * else this process's), or the value of a `--flag=PATH`, and the upstream's `cwd`. A path equal to the data
 * dir or one of its parents is reported, naming it. Symlinks are followed where the path exists.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { UpstreamConfig } from '../config/index.js';

/** The real path of `path`, or of its deepest existing parent joined with the rest (nothing need exist). */
function realish(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realish(parent), basename(path));
  }
}

/** The absolute path an argv element names, when it names one. */
function pathOf(arg: string, base: string, home: string): string | undefined {
  if (isAbsolute(arg)) return resolve(arg);
  if (arg === '~') return home;
  if (arg.startsWith('~/')) return join(home, arg.slice(2));
  if (arg === '.' || arg === '..' || arg.startsWith('./') || arg.startsWith('../')) return resolve(base, arg);
  return undefined;
}

function contains(folder: string, inner: string): boolean {
  return inner === folder || inner.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

/**
 * What of this upstream's argv and cwd contains `dataDir`, as `argv[i] PATH` / `cwd PATH` phrases
 * (empty when nothing does). `cwd` and `home` default to this process's.
 */
export function dataDirReach(
  upstream: UpstreamConfig,
  dataDir: string,
  cwd: string = process.cwd(),
  home: string = homedir(),
): string[] {
  const data = realish(resolve(dataDir));
  const hits: string[] = [];
  const base = upstream.cwd ?? cwd;
  if (upstream.cwd !== undefined && contains(realish(upstream.cwd), data)) hits.push(`cwd ${upstream.cwd}`);
  (upstream.argv ?? []).forEach((arg, i) => {
    const eq = arg.indexOf('=');
    const named = [arg, ...(arg.startsWith('-') && eq > 0 ? [arg.slice(eq + 1)] : [])];
    for (const candidate of named) {
      const path = pathOf(candidate, base, home);
      if (path !== undefined && contains(realish(path), data)) {
        hits.push(`argv[${i}] ${arg}`);
        return;
      }
    }
  });
  return hits;
}
