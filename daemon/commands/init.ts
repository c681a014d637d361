/**
 * `ogf-broker init [--data-dir D] [--folder DIR]` (contract 17): writes a starter `config.json` (0600, never
 * over an existing one: exit 2) that puts the official filesystem server behind the gate over DIR (default
 * a new `~/ogf-notes` with a `drafts/` folder), then prints what it wrote and the next steps.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseFlags, stringFlag, UsageError } from '../base/index.js';
import {
  brokerProgram,
  currentInvocation,
  describeConfinement,
  loadConfig,
  shellQuote,
  tokenMcpCommand,
} from '../config/index.js';
import { defaultDataDir, openDataDir, resolveDataDir, writePrivateFileExclusive } from '../datadir/index.js';
import { probeBubblewrap } from '../sandbox/index.js';
import { starterConfig } from './init-config.js';

const FILESYSTEM_PACKAGE = '@modelcontextprotocol/server-filesystem';

/**
 * The filesystem server's argv: the copy installed beside this package when it resolves (no download at
 * each start, docs/upstreams.md), else `npx -y` (fetches it at the first start).
 */
function filesystemServer(): { argv: string[]; installed: boolean } {
  try {
    const entry = createRequire(import.meta.url).resolve(`${FILESYSTEM_PACKAGE}/dist/index.js`);
    return { argv: [process.execPath, entry], installed: true };
  } catch {
    return { argv: ['npx', '-y', FILESYSTEM_PACKAGE], installed: false };
  }
}

/** What the owner must do when bubblewrap cannot confine here (start would refuse the config). */
function confinable(): string {
  const p = probeBubblewrap(process.env);
  return p.ok
    ? ''
    : `\n    but ${p.why}: start refuses the config until it can (or remove "sandbox" to run it unconfined)`;
}

export async function runInit(argv: string[]): Promise<number> {
  const p = parseFlags('init', argv, { 'data-dir': { type: 'string' }, folder: { type: 'string' } });
  const dataDir = resolveDataDir(stringFlag(p, 'data-dir'));
  const folderFlag = stringFlag(p, 'folder');
  const folder = resolve(folderFlag ?? join(homedir(), 'ogf-notes'));
  const configFile = join(dataDir, 'config.json');
  if (existsSync(configFile))
    throw new UsageError(
      `init: ${configFile} exists already; it is left as it is (move it away to start over)`,
    );
  // The folder is the owner's, made before the data dir turns the umask private: it gets their usual mode.
  const folderExisted = existsSync(folder);
  mkdirSync(join(folder, 'drafts'), { recursive: true });
  const paths = openDataDir(dataDir);
  const server = filesystemServer();
  // Contract 21: confined to the folder. A server fetched by npx also writes npx's cache and needs the network.
  const sandbox = server.installed
    ? { writable: [folder], network: false }
    : { writable: [folder, join(homedir(), '.npm')], network: true };
  if (!server.installed) mkdirSync(join(homedir(), '.npm'), { recursive: true });
  writePrivateFileExclusive(
    configFile,
    `${JSON.stringify(starterConfig(folder, server.argv, sandbox), null, 2)}\n`,
  );
  try {
    // The config a start would load: a starter that the daemon refuses would be no start at all.
    loadConfig({ dataDir: paths.root, config: configFile });
  } catch (e) {
    rmSync(configFile, { force: true });
    throw e;
  }
  const inv = currentInvocation();
  const program = brokerProgram(inv);
  const dirFlag = dataDir === defaultDataDir() ? [] : ['--data-dir', dataDir];
  const cmd = (...args: string[]) => [...program, ...args, ...dirFlag].map(shellQuote).join(' ');
  process.stdout.write(
    [
      `Wrote ${configFile} (0600):`,
      `  upstream notes: ${FILESYSTEM_PACKAGE} over ${folder}${folderExisted ? '' : ' (created, with drafts/)'}`,
      `    run as: ${server.argv.map(shellQuote).join(' ')} ${shellQuote(folder)}${server.installed ? '' : ' (downloaded by npx at the first start)'}`,
      `  confined (bubblewrap): ${describeConfinement(sandbox)}${confinable()}`,
      '  reads: allowed without asking (the server marks them read-only; each is still recorded)',
      `  writes under ${join(folder, 'drafts')}: allowed by rule notes-drafts`,
      '  everything else: waits for your approval',
      'Next:',
      `  1. start the daemon:        ${cmd('start')}`,
      '  2. open the panel:          the login URL the start prints (again at any time: ' +
        `${cmd('token', 'owner')})`,
      `  3. connect an AI client:    its MCP URL is printed at start; its token: ${tokenMcpCommand(dataDir, inv)}`,
      '     (docs/clients.md: ChatGPT, Claude and others)',
      '',
    ].join('\n'),
  );
  return 0;
}
