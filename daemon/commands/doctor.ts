/**
 * `ogf-broker doctor` (contracts.md 1.1): one line per check — config, the config file's mode (0600),
 * data dir permissions, port, a real `ogf-bridge/1` handshake with the configured avatar app, each
 * upstream, and (warnings) an upstream handed a folder containing the data dir, and commands needing
 * more approvals than there are owners — each saying what it found. Exit 0 when every check is ok, 1
 * otherwise; bad flags exit 2 (UsageError) like every subcommand. The checks themselves are ../doctor.ts.
 */
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { checkBridge } from '../app/index.js';
import { parseFlags, stringFlag } from '../base/index.js';
import { type Config, loadConfig, resolveDataDir } from '../config/index.js';
import { dataDirPaths, runningDaemon } from '../datadir/index.js';
import { checkChannels } from '../notify/index.js';
import { askRunningDaemon } from '../owner-terminal/index.js';
import { lookAtStore } from '../store/index.js';
import {
  type Check,
  checkConfigFile,
  checkConfinement,
  checkDataDir,
  checkNode,
  checkPort,
  checkQuorum,
  checkUpstreamReach,
  checkUpstreams,
} from './doctor-checks.js';

/**
 * The running daemon's own checks (its avatar app, upstreams, database, channels' variables: contract 17),
 * or nothing when no daemon runs; a daemon that cannot be asked is a failed check, and these are made here.
 */
async function askDaemon(
  root: string,
  pid: number | undefined,
  sha256: string | null,
): Promise<{ checks?: Check[]; line?: Check }> {
  if (pid === undefined) return {};
  try {
    const m = await askRunningDaemon(root, process.env, { type: 'doctor' });
    if (m?.type === 'doctor' && m.config_sha256 !== sha256) {
      const detail = `the running daemon (pid ${m.pid}) runs another version of this config (it changed since the daemon loaded it): run ogf-broker reload to apply it (or restart the daemon); the file was checked here`;
      return { line: { name: 'daemon', ok: true, warn: true, detail } };
    }
    if (m?.type === 'doctor')
      return {
        checks: m.checks,
        line: { name: 'daemon', ok: true, detail: `checked in the running daemon, pid ${m.pid}` },
      };
    if (m === undefined) return {};
    return {
      line: {
        name: 'daemon',
        ok: false,
        detail: `the running daemon (pid ${pid}) answered ${m.type}; checked here instead`,
      },
    };
  } catch (e) {
    return {
      line: {
        name: 'daemon',
        ok: false,
        detail: `the running daemon (pid ${pid}) could not be asked: ${(e as Error).message}; checked here instead`,
      },
    };
  }
}

/** Runs every check, prints one line each, returns the exit code. */
export async function runDoctor(argv: string[]): Promise<number> {
  const p = parseFlags('doctor', argv, {
    'data-dir': { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    config: { type: 'string' },
  });
  const flags = {
    dataDir: stringFlag(p, 'data-dir'),
    host: stringFlag(p, 'host'),
    port: stringFlag(p, 'port'),
    config: stringFlag(p, 'config'),
  };
  const checks: Check[] = [];
  let config: Config | undefined;
  try {
    config = loadConfig(flags);
    const source = config.configFile ?? 'embedded defaults (no config file)';
    const n = Object.keys(config.commands).length;
    checks.push({
      name: 'config',
      ok: true,
      detail: `${source} is valid: ${n} catalog command${n === 1 ? '' : 's'}, OGF bridge ${config.ogf_bridge ? `at ${config.ogf_bridge.url}` : 'off'}`,
    });
  } catch (e) {
    checks.push({ name: 'config', ok: false, detail: (e as Error).message });
  }
  const root = config?.dataDir ?? resolveDataDir(flags.dataDir);
  // The file that was (or would be) read, valid or not: its mode matters either way.
  const configFile = checkConfigFile(
    config?.configFile ?? resolve(flags.config ?? process.env.OGF_BROKER_CONFIG ?? join(root, 'config.json')),
  );
  if (configFile) checks.push(configFile);
  checks.push(checkDataDir(root));
  if (config) {
    const paths = dataDirPaths(root);
    // Contract 17: what depends on the daemon's own environment is asked of the running daemon, if one runs.
    const asked = await askDaemon(root, runningDaemon(paths.daemonJson)?.pid, config.configSha256);
    checks.push(await checkPort(root, config.host, config.port));
    if (asked.checks === undefined) {
      checks.push(await checkBridge(config));
      checks.push(...(await checkUpstreams(config)));
    }
    checks.push(...checkUpstreamReach(config));
    checks.push(...checkConfinement(config));
    const store = await lookAtStore(config, paths);
    // Contract 16: which node this data dir's daemon is, and (shared database) whether the name is free.
    checks.push(checkNode(config.node_name, store.nodes, runningDaemon(paths.daemonJson), hostname()));
    // Contract 16: the shared database must be reachable for the daemon to start.
    if (config.database_url !== null) {
      checks.push({
        name: 'database',
        ok: store.reachable,
        detail: store.reachable ? `${store.where} is reachable, ${store.owners} owner(s)` : store.where,
      });
    }
    // A data dir (or database) not started yet has owner `owner` only (its first start creates it).
    checks.push(...checkQuorum(config, store.owners || 1));
    // Contract 13.1: each notification channel's variables set and valid (their values never printed).
    if (asked.checks === undefined) checks.push(...checkChannels(config.notify, process.env));
    else checks.push(...asked.checks);
    if (asked.line !== undefined) checks.push(asked.line);
  } else {
    checks.push({ name: 'port', ok: false, detail: 'not checked: the config is invalid' });
    checks.push({ name: 'avatar app', ok: false, detail: 'not checked: the config is invalid' });
  }
  for (const c of checks)
    process.stdout.write(`${c.warn ? 'warn' : c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}\n`);
  return checks.every((c) => c.ok) ? 0 : 1;
}
