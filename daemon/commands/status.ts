/**
 * `ogf-broker status`: whether a daemon runs, its URLs, this data dir's node, and counts by state; on a
 * shared PostgreSQL (contract 16) the live nodes, and when the running daemon lost the database, that it
 * did. Exit 0 running, 1 not; 2 when the data dir's daemon uses PostgreSQL and its URL is not set here.
 */
import { parseFlags, stringFlag } from '../base/index.js';
import { loadConfig, resolveDataDir } from '../config/index.js';
import { dataDirPaths, runningDaemon } from '../datadir/index.js';
import { describeChannel, readNotifyStatus } from '../notify/index.js';
import { readRulesStatus } from '../rules/index.js';
import { confinementLines } from '../sandbox/index.js';
import { lookAtStore, readDatabaseStatus, storeOf } from '../store/index.js';
import { describeUpstream, readUpstreamStatus } from '../upstreams/index.js';
import { daemonDatabaseLine, liveNodeLines, nodeLine } from './status-lines.js';

export async function runStatus(argv: string[]): Promise<number> {
  const p = parseFlags('status', argv, { 'data-dir': { type: 'string' } });
  const paths = dataDirPaths(resolveDataDir(stringFlag(p, 'data-dir')));
  const info = runningDaemon(paths.daemonJson);
  // Contract 16: the counts come from the shared PostgreSQL when the config names one. A config that does
  // not load leaves status on broker.db (start says what is wrong with it).
  let databaseUrl: string | null = null;
  let nodeName: string | undefined;
  let confinement: string[] = [];
  try {
    const config = loadConfig({ dataDir: paths.root });
    databaseUrl = config.database_url;
    nodeName = config.node_name;
    // Contract 21: each command's and stdio upstream's confinement, as the config gives it.
    confinement = confinementLines(config).map((l) => `confinement ${l}\n`);
  } catch {
    databaseUrl = null;
  }
  // Contract 16 (v4): a data dir whose daemon uses PostgreSQL is never counted from broker.db: without the
  // URL in this shell, exit 2 naming the variable (store/where.ts).
  storeOf({ dataDir: paths.root, database_url: databaseUrl });
  const { counts, where, nodes } = await lookAtStore({ database_url: databaseUrl }, paths);
  const states = ['awaiting_review', 'approved', 'running', 'succeeded', 'denied', 'failed', 'unknown'];
  const line = counts
    ? Object.keys(counts).length > 0 || databaseUrl === null
      ? states.map((s) => `${s} ${counts[s] ?? 0}`).join(', ')
      : 'no commands yet'
    : databaseUrl === null
      ? 'no commands yet'
      : 'unknown';
  const database = databaseUrl === null ? '' : `database: ${where}\n`;
  // Contract 16: the live nodes of the shared database (none to list on broker.db, or out of reach).
  const fleet = nodes === undefined ? '' : `${liveNodeLines(nodes, nodeName).join('\n')}\n`;
  if (info) {
    // The running daemon's own view of the database, when it lost it (store/status-file.ts).
    const lost = daemonDatabaseLine(readDatabaseStatus(paths.root, info.pid), Date.now());
    process.stdout.write(
      `running: pid ${info.pid}, version ${info.version}, since ${info.started_at}\n` +
        `${nodeLine(nodeName)}\n` +
        `url: ${info.url}\nmcp: ${info.mcp_url}\nowner panel: ${info.owner_url}\n${database}commands: ${line}\n` +
        `${lost === undefined ? '' : `${lost}\n`}${fleet}`,
    );
    // Contract 1.1 (v2): each upstream's state, as the running daemon last wrote it.
    for (const u of readUpstreamStatus(paths.upstreamsJson, info.pid) ?? []) {
      process.stdout.write(`upstream ${describeUpstream(u)}\n`);
    }
    // Contract 11: how many rules the running daemon read at start.
    const rules = readRulesStatus(paths.root, info.pid);
    if (rules !== undefined) process.stdout.write(`rules: ${rules} active\n`);
    process.stdout.write(confinement.join(''));
    printChannels(paths.notifyJson);
    return 0;
  }
  process.stdout.write(
    `not running (data dir ${paths.root})\n${nodeLine(nodeName)}\n${database}commands: ${line}\n${fleet}${confinement.join('')}`,
  );
  printChannels(paths.notifyJson);
  return 1;
}

/** Contract 13.1: each notification channel's last success and last failure, as the daemon last wrote them. */
function printChannels(path: string): void {
  for (const c of readNotifyStatus(path)?.channels ?? [])
    process.stdout.write(`notify ${describeChannel(c)}\n`);
}
