/**
 * `ogf-broker token owner` / `token mcp [--client NAME] [--rotate]` (contract 1.1): prints the owner
 * login URL or an MCP token as the last line of stdout, alone; creates it when absent. Works with or
 * without a running daemon: tokens are checked through the store, so a running daemon honours a rotation
 * at once.
 */
import { parseFlags, stringFlag } from '../args.js';
import { loadConfig } from '../config.js';
import { Store } from '../core/store.js';
import { runningDaemon } from '../daemon-info.js';
import { openDataDir } from '../datadir.js';
import { UsageError } from '../errors.js';
import { checkClientName, LOCAL_CLIENT, Tokens } from '../tokens.js';

export async function runToken(argv: string[]): Promise<number> {
  const [kind, ...rest] = argv;
  if (kind !== 'owner' && kind !== 'mcp') {
    throw new UsageError(
      `token: the kind must be owner or mcp, got ${kind === undefined ? 'nothing' : JSON.stringify(kind)}`,
    );
  }
  const p =
    kind === 'owner'
      ? parseFlags('token owner', rest, { 'data-dir': { type: 'string' } })
      : parseFlags('token mcp', rest, {
          'data-dir': { type: 'string' },
          client: { type: 'string' },
          rotate: { type: 'boolean' },
        });
  const client = checkClientName(stringFlag(p, 'client') ?? LOCAL_CLIENT);
  const config = loadConfig({ dataDir: stringFlag(p, 'data-dir') });
  const paths = openDataDir(config.dataDir);
  const store = new Store(paths.db);
  try {
    const tokens = new Tokens(paths, store);
    if (kind === 'owner') {
      const info = runningDaemon(paths.daemonJson);
      const base = info?.url ?? `http://${config.host}:${config.port}`;
      if (!info)
        process.stdout.write(
          `No daemon runs yet; this is the URL once \`ogf-broker start\` listens on ${base}:\n`,
        );
      process.stdout.write(`${base}/login#token=${tokens.ownerToken}\n`);
      return 0;
    }
    const rotate = p.values.rotate === true;
    const token = tokens.mcpTokenFor(client, rotate, 'owner:terminal');
    if (rotate)
      process.stdout.write(`Rotated the MCP token of client ${client}; the old one no longer works.\n`);
    process.stdout.write(`${token}\n`);
    return 0;
  } finally {
    store.close();
  }
}
