/**
 * A node of a fleet on one real PostgreSQL (contract 16), for tests that need each node's own catalog: its
 * own data dir and `node_name`, as on its own machine, joining the first node's fleet as docs/fleet.md says
 * (owner.token and mcp.token copied). `say` is a catalog command that is another program on each node.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDataDir, type RunningDaemon, startDaemon } from './daemon.js';
import { ownerCatalog } from './owner.js';

export interface FleetNode {
  d: RunningDaemon;
  marks: string;
}

/** `say` on one node: appends `<prefix>:<word>` to its marks file (another program on each node). */
export function say(prefix: string, marks: string): Record<string, unknown> {
  return {
    description: 'Say a word',
    argv: [
      process.execPath,
      '-e',
      'require("fs").appendFileSync(process.argv[1], process.argv[2] + ":" + process.argv[3] + "\\n")',
      marks,
      prefix,
      '{word}',
    ],
    params: { word: { type: 'string', max_length: 20, pattern: '^[a-z0-9]+$' } },
    timeout_s: 30,
  };
}

/**
 * A node on `url` named `name` (pushed on `daemons`, which the file's PostgreSQL helper stops); joining
 * `first`'s fleet when given. `extra(marks)` adds config (its `commands` merged into the owner catalog).
 */
export async function startFleetNode(
  daemons: RunningDaemon[],
  url: string,
  name: string,
  first: FleetNode | undefined,
  extra: (marks: string) => Record<string, unknown> = () => ({}),
): Promise<FleetNode> {
  const dataDir = makeDataDir(`ogf-gnode-${name}-`);
  const marks = join(dataDir, 'marks');
  if (first !== undefined) {
    for (const f of ['owner.token', 'mcp.token']) copyFileSync(join(first.d.dataDir, f), join(dataDir, f));
  }
  const base = ownerCatalog(marks);
  const more = extra(marks);
  const commands = { ...(base.commands as object), ...((more.commands as object | undefined) ?? {}) };
  const d = await startDaemon({
    dataDir,
    timeoutMs: 60_000,
    env: { OGF_BROKER_DATABASE_URL: url },
    config: { ...base, ...more, commands, node_name: name },
  });
  daemons.push(d);
  return { d, marks };
}
