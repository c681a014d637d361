/**
 * The checks `ogf-broker doctor` runs (contracts.md 1.1; the command itself is commands/doctor.ts): data
 * dir permissions, port (the avatar app's handshake is app/diagnose.ts's checkBridge), each upstream, and
 * (warnings) an upstream handed a folder containing the data dir, and commands needing more approvals than
 * there are owners — each a Check saying what it found.
 */
import { readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { escapeForTerminal, silentLogger } from '../base/index.js';
import type { Config } from '../config/index.js';
import { dataDirPaths, inspectDataDir, runningDaemon } from '../datadir/index.js';
import { Confiner, confinementLines, confinementProblem } from '../sandbox/index.js';
import type { LiveNode } from '../store/index.js';
import { dataDirReach, probeUpstream } from '../upstreams/index.js';

/** One line of doctor's report. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** A warning: printed as `warn`, never a failure (the exit code counts only `ok`). */
  warn?: boolean;
}

function mode(m: number): string {
  return (m & 0o777).toString(8).padStart(4, '0');
}

/**
 * Contract 21: every confined catalog command and stdio upstream can be confined here (bubblewrap works,
 * its writable paths exist); the detail lists each entry's confinement, so an unconfined one is seen.
 * No line when the config has neither.
 */
export function checkConfinement(config: Config): Check[] {
  const lines = confinementLines(config);
  if (lines.length === 0) return [];
  const problem = confinementProblem(config, new Confiner(process.env, [config.dataDir]));
  if (problem !== undefined) return [{ name: 'confinement', ok: false, detail: problem }];
  return [{ name: 'confinement', ok: true, detail: lines.join('; ') }];
}

/** The data dir and everything in it must be private (contract 1.2). Missing is fine: start creates it. */
export function checkDataDir(root: string): Check {
  const problem = inspectDataDir(root);
  if (problem?.endsWith('does not exist yet')) {
    return {
      name: 'data dir',
      ok: true,
      detail: `${root} does not exist yet; start creates it with mode 0700`,
    };
  }
  if (problem) return { name: 'data dir', ok: false, detail: problem };
  const open: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const st = statSync(path);
      if ((st.mode & 0o077) !== 0) open.push(`${path} (mode ${mode(st.mode)})`);
      if (st.isDirectory()) walk(path);
    }
  };
  try {
    walk(root);
  } catch (e) {
    return {
      name: 'data dir',
      ok: false,
      detail: `cannot read ${root}: ${(e as NodeJS.ErrnoException).code}`,
    };
  }
  if (open.length > 0) {
    return {
      name: 'data dir',
      ok: false,
      detail: `group/other can reach ${open.join(', ')}; fix with chmod 600 (dirs 700)`,
    };
  }
  return {
    name: 'data dir',
    ok: true,
    detail: `${root} is private (mode 0700) and every file in it is 0600`,
  };
}

/**
 * The config file decides what the AI may do (catalog argv, rules, grants, upstreams) and may name where
 * secrets live, so like the data dir's files (contract 1.2) it must be the owner's alone: group/other access
 * to it — wherever `--config` put it — fails the check with the exact fix. No file: nothing to check.
 */
export function checkConfigFile(path: string): Check | undefined {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return undefined;
  }
  if ((st.mode & 0o077) === 0) {
    return { name: 'config file', ok: true, detail: `${path} is private (mode ${mode(st.mode)})` };
  }
  return {
    name: 'config file',
    ok: false,
    detail: `group/other can reach ${path} (mode ${mode(st.mode)}); fix with chmod 600 ${path}`,
  };
}

function portFree(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(undefined)));
  });
}

export async function checkPort(root: string, host: string, port: number): Promise<Check> {
  const running = runningDaemon(dataDirPaths(root).daemonJson);
  if (running)
    return {
      name: 'port',
      ok: true,
      detail: `a daemon runs for this data dir: pid ${running.pid} at ${running.url}`,
    };
  if (port === 0) return { name: 'port', ok: true, detail: 'port 0: start picks a free port' };
  const err = await portFree(host, port);
  if (!err) return { name: 'port', ok: true, detail: `${host}:${port} is free for start` };
  const why =
    err.code === 'EADDRINUSE'
      ? 'is in use by another program (not a daemon of this data dir)'
      : `cannot be bound (${err.code})`;
  return { name: 'port', ok: false, detail: `${host}:${port} ${why}; choose another with --port` };
}

/** Contract 1.1 (v2): each upstream starts and lists its tools (one check each, run side by side). */
export function checkUpstreams(config: Config): Promise<Check[]> {
  return Promise.all(
    Object.entries(config.upstreams).map(async ([name, u]) => {
      const r = await probeUpstream(name, u, silentLogger);
      return { name: `upstream ${name}`, ok: r.ok, detail: r.detail };
    }),
  );
}

/**
 * Issue 19: an upstream handed a folder that contains the data dir could let an AI read the tokens in it
 * (docs/security.md). One warning per such upstream, naming what reaches it — not a failure: the owner
 * may mean it (and approves every call).
 */
export function checkUpstreamReach(config: Pick<Config, 'upstreams' | 'dataDir'>): Check[] {
  return Object.entries(config.upstreams).flatMap(([name, u]) => {
    const hits = dataDirReach(u, config.dataDir);
    if (hits.length === 0) return [];
    return [
      {
        name: `upstream ${name}`,
        ok: true,
        warn: true,
        detail: `${hits.join(', ')} contains the data dir ${config.dataDir} (owner.token, mcp.token, broker.db): an AI could read the tokens through this upstream; give it a folder outside the data dir (docs/security.md)`,
      },
    ];
  });
}

/**
 * Contract 9: a catalog command or upstream needing more `approvals` than there are owners can never be
 * approved (it only expires). One warning line each — not a failure: owners can be added while it runs.
 * Pure, so it is testable while the config still refuses `approvals` above 1.
 */
export function checkQuorum(config: Pick<Config, 'commands' | 'upstreams'>, owners: number): Check[] {
  const needs: Array<[string, number]> = [
    ...Object.entries(config.commands).map(([n, c]): [string, number] => [`command ${n}`, c.approvals ?? 1]),
    ...Object.entries(config.upstreams).map(([n, u]): [string, number] => [
      `upstream ${n}`,
      u.approvals ?? 1,
    ]),
  ];
  return needs
    .filter(([, n]) => n > owners)
    .map(([what, n]) => ({
      name: 'owners',
      ok: true,
      warn: true,
      detail: `${what} needs ${n} approvals but there ${owners === 1 ? 'is 1 owner' : `are ${owners} owners`}, so it can never be approved; add owners with: ogf-broker token owner --name NAME`,
    }));
}

/**
 * Contract 16: the node this data dir's daemon is (config `node_name`, else the host name). On a shared
 * database, a live node of that name that is not this data dir's running daemon fails the check: a daemon
 * started here would exit 2 (two live daemons with one name).
 */
export function checkNode(
  name: string,
  nodes: readonly LiveNode[] | undefined,
  running: { pid: number } | undefined,
  host: string,
): Check {
  const other = nodes?.find((n) => n.name === name && !(n.pid === running?.pid && n.host === host));
  if (other !== undefined) {
    return {
      name: 'node',
      ok: false,
      detail: `${name}: a live daemon of that name runs on host ${escapeForTerminal(other.host)} (pid ${other.pid}); one started here would exit 2 — give this one another node_name in its config`,
    };
  }
  const live = nodes?.some((n) => n.name === name);
  const where =
    live === undefined ? '' : live ? ', live on the shared database' : ', not live on the shared database';
  return { name: 'node', ok: true, detail: `${name}${where}` };
}
