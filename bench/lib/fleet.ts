/**
 * Several daemons on one PostgreSQL database (contract 16, rows 17 and 18): each its own data dir and
 * `node_name`, all with the same OGF_BROKER_DATABASE_URL, started one after another; every node after the
 * first starts with the first one's `owner.token` and `mcp.token` copied into its data dir (the shared
 * database holds one hash per owner and client: docs/fleet.md). A daemon that refuses
 * to share the database (a build without nodes exits 2) fails the start with its own log line, which the
 * row reports instead of a figure.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchConfig, type Daemon, makeDataDir, removeDir, startDaemon } from './procs.js';

export interface Fleet {
  nodes: Daemon[];
  stop(): Promise<void>;
}

/** The last line of a daemon's log that names an error, for a row that could not be measured. */
function lastError(dataDir: string): string {
  try {
    const lines = readFileSync(join(dataDir, 'daemon.log'), 'utf8').trim().split('\n');
    return lines.findLast((l) => /error|exit|refus|already/i.test(l)) ?? lines.at(-1) ?? '';
  } catch {
    return '';
  }
}

export async function startFleet(url: string, names: readonly string[]): Promise<Fleet> {
  const nodes: Daemon[] = [];
  const dirs: string[] = [];
  const stop = async () => {
    for (const d of nodes) await d.stop();
    for (const dir of dirs) removeDir(dir);
  };
  try {
    for (const name of names) {
      const dir = makeDataDir();
      dirs.push(dir);
      const first = nodes[0];
      if (first)
        for (const file of ['owner.token', 'mcp.token'])
          copyFileSync(join(first.dataDir, file), join(dir, file));
      try {
        nodes.push(
          await startDaemon(dir, benchConfig({ node_name: name }), [], { OGF_BROKER_DATABASE_URL: url }),
        );
      } catch (e) {
        throw new Error(
          `node ${name} did not start: ${(e as Error).message}: ${lastError(dir).slice(0, 300)}`,
        );
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { nodes, stop };
}
