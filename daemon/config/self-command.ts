/**
 * The exact `ogf-broker …` command line a person should paste to reach THIS daemon (issue 19 finding 5):
 * the start banner and the owner panel's first-run help print `token mcp` this way. Two traps it avoids:
 * a command without `--data-dir` run against a daemon on another data dir silently made a second data dir
 * and printed a token that daemon refuses (401); and `ogf-broker` is not on PATH after `npm start` (npm does
 * not link a project's own bin), so there the command names node and this very script instead.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { defaultDataDir } from '../datadir/index.js';

/** POSIX shell quoting: bare when only safe characters, else single quotes (a `'` as `'\''`). */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

function realpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The real path of `name` as the shell would find it on PATH, or undefined. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    return realpath(candidate);
  }
  return undefined;
}

/** Where this process came from: its script (`process.argv[1]`) and node (`process.execPath`). */
export interface Invocation {
  script: string | undefined;
  execPath: string;
  env: NodeJS.ProcessEnv;
}

export function currentInvocation(env: NodeJS.ProcessEnv = process.env): Invocation {
  return { script: process.argv[1], execPath: process.execPath, env };
}

/**
 * How to run this ogf-broker from a shell: `ogf-broker` when that name on PATH is this very script (an
 * npm global install or `npm link`), else node and the script's absolute path (`node …/dist/daemon/cli.js`).
 */
export function brokerProgram(inv: Invocation): string[] {
  const script = inv.script === undefined ? undefined : realpath(inv.script);
  if (script === undefined) return ['ogf-broker'];
  if (onPath('ogf-broker', inv.env) === script) return ['ogf-broker'];
  const node = onPath('node', inv.env) === realpath(inv.execPath) ? 'node' : inv.execPath;
  return [node, script];
}

/**
 * The full `token mcp` command for a daemon on `dataDir`, shell-quoted: `--data-dir D` whenever D is not
 * the default data dir (an `OGF_BROKER_DATA_DIR` of this shell may be missing in the next one).
 */
export function tokenMcpCommand(dataDir: string, inv: Invocation): string {
  const argv = [...brokerProgram(inv), 'token', 'mcp'];
  if (dataDir !== defaultDataDir(inv.env)) argv.push('--data-dir', dataDir);
  return argv.map(shellQuote).join(' ');
}

/** True when this daemon's environment fixes client `local`'s token (contract 1.1 OGF_BROKER_MCP_TOKEN). */
export function mcpTokenFixed(env: NodeJS.ProcessEnv): boolean {
  return (env.OGF_BROKER_MCP_TOKEN ?? '') !== '';
}

/**
 * The banner's `MCP token:` line: the command, or — when the environment fixes the token, which `token mcp`
 * in a shell without that variable would not print — where the token is.
 */
export function mcpTokenLine(dataDir: string, inv: Invocation): string {
  if (mcpTokenFixed(inv.env))
    return "MCP token: fixed by OGF_BROKER_MCP_TOKEN in this daemon's environment (use that value)";
  return `MCP token: ${tokenMcpCommand(dataDir, inv)}`;
}
