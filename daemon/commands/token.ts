/**
 * `ogf-broker token owner [--name NAME] [--rotate]` / `token mcp [--client NAME] [--rotate]` (contract 1.1,
 * 9): prints an owner's login URL or an MCP token as the last line of stdout, alone; creates it when absent.
 * Works with or without a running daemon: tokens are checked through the store, so a running daemon honours
 * a creation or rotation at once (and ends a rotated owner's sessions and sockets, owner/edge.ts).
 * The login URL is the running daemon's real address when one runs.
 */
import { existsSync } from 'node:fs';
import { parseFlags, stringFlag, UsageError } from '../base/index.js';
import { loadConfig } from '../config/index.js';
import { type DaemonInfo, openDataDir, runningDaemon } from '../datadir/index.js';
import { openStore } from '../store/index.js';
import { checkClientName, checkOwnerName, FIRST_OWNER, LOCAL_CLIENT, Tokens } from '../tokens/index.js';

/**
 * Issue 19: which data dir this token belongs to and whether a daemon serves it — on stderr, so stdout's
 * last line stays the URL or token alone (contract 1.1). A token made in a data dir no daemon serves is
 * refused by a daemon on another one (401); this says so instead of staying silent.
 */
function whereLine(root: string, existed: boolean, info: DaemonInfo | undefined): string {
  const dir = `token: data dir ${root}${existed ? '' : ' (created just now)'}`;
  if (info) return `${dir}; a daemon runs there (pid ${info.pid}, ${info.url}) and honours this at once.\n`;
  return `${dir}; no daemon runs there. A daemon started with another --data-dir refuses this token: pass its --data-dir (its start banner prints the exact command).\n`;
}

export async function runToken(argv: string[]): Promise<number> {
  const [kind, ...rest] = argv;
  if (kind !== 'owner' && kind !== 'mcp') {
    throw new UsageError(
      `token: the kind must be owner or mcp, got ${kind === undefined ? 'nothing' : JSON.stringify(kind)}`,
    );
  }
  const p =
    kind === 'owner'
      ? parseFlags('token owner', rest, {
          'data-dir': { type: 'string' },
          name: { type: 'string' },
          rotate: { type: 'boolean' },
        })
      : parseFlags('token mcp', rest, {
          'data-dir': { type: 'string' },
          client: { type: 'string' },
          rotate: { type: 'boolean' },
        });
  const client = checkClientName(stringFlag(p, 'client') ?? LOCAL_CLIENT);
  const owner = checkOwnerName(stringFlag(p, 'name') ?? FIRST_OWNER);
  const rotate = p.values.rotate === true;
  const config = loadConfig({ dataDir: stringFlag(p, 'data-dir') });
  const existed = existsSync(config.dataDir);
  const paths = openDataDir(config.dataDir);
  // Contract 16: with a shared PostgreSQL configured, its token hashes are every daemon's.
  const store = await openStore(config, paths);
  try {
    const tokens = new Tokens(paths, store);
    const info = runningDaemon(paths.daemonJson);
    // After the token exists (a refusal stays one line on stderr, contract 1.1), before stdout's lines.
    const where = () => process.stderr.write(whereLine(paths.root, existed, info));
    // The terminal acts as owner `owner` (contract 9): it holds the data dir, owner.token included.
    if (kind === 'owner') {
      const { token, outcome } = await tokens.ownerTokenFor(owner, rotate, FIRST_OWNER);
      where();
      const base = info?.url ?? `http://${config.host}:${config.port}`;
      if (outcome === 'created')
        process.stdout.write(
          `Created owner ${owner}. This login URL holds their token and is shown only this once: send it over a channel you trust.\n`,
        );
      if (outcome === 'rotated')
        process.stdout.write(
          `Rotated the token of owner ${owner}: the old one no longer logs in, and their panel sessions and sockets end, and their passkeys are removed (log in with this URL and add new ones).${owner === FIRST_OWNER ? '' : ' This new URL is shown only this once.'}\n`,
        );
      if (!info)
        process.stdout.write(
          `No daemon runs yet; this is the URL once \`ogf-broker start\` listens on ${base}:\n`,
        );
      process.stdout.write(`${base}/login#token=${token}\n`);
      return 0;
    }
    const token = await tokens.mcpTokenFor(client, rotate, FIRST_OWNER);
    where();
    if (rotate)
      process.stdout.write(`Rotated the MCP token of client ${client}; the old one no longer works.\n`);
    process.stdout.write(`${token}\n`);
    return 0;
  } finally {
    store.close();
  }
}
