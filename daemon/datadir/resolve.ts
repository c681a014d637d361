/**
 * Where the data dir is (contract 1.2): the flag, `OGF_BROKER_DATA_DIR`, else the default. Here and not in
 * config/: a command that needs only the place (`audit verify`, `status`) should not load the config's
 * schemas (zod, CEL) to find it — a fifth of `audit verify`'s start-up (docs/performance.md row 15).
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** The default data dir: `$XDG_STATE_HOME/ogf-broker`, else `~/.local/state/ogf-broker` (contract 1.2). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  return xdg && isAbsolute(xdg) ? join(xdg, 'ogf-broker') : join(homedir(), '.local', 'state', 'ogf-broker');
}

/** Resolves the data dir from a flag, `OGF_BROKER_DATA_DIR`, or the default. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const d = flag ?? env.OGF_BROKER_DATA_DIR;
  if (d === undefined || d === '') return defaultDataDir(env);
  return resolve(d);
}
