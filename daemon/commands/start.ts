/**
 * `ogf-broker start`: the daemon in the foreground. Prints where it listens, the exact command that prints
 * the MCP token (self-command.ts) and the owner login URL on stdout (for the person); logs JSON lines on
 * stderr (for machines; never a token). SIGTERM/SIGINT shut it down cleanly; SIGHUP reloads the config (app/reload.ts).
 */

import { setFlagsFromString } from 'node:v8';
import { Daemon } from '../app/index.js';
import { createLogger, parseFlags, stringFlag } from '../base/index.js';
import { currentInvocation, loadConfig, mcpTokenLine } from '../config/index.js';

/** The daemon's own URL under the name `localhost` (same port): the origin where passkeys work. */
function localhostUrl(url: string): string {
  const u = new URL(url);
  return `http://localhost:${u.port}`;
}

/**
 * Issue 41 (row 5): V8 let the old space grow to about twice what was live before collecting it — 10,000
 * awaiting commands held 254 MiB RSS, of which 130 MiB was garbage a full collection freed (live: 2.5 KB
 * per awaiting command). A daemon that idles for months between bursts should not keep that. Growing the
 * heap by 20 % per step instead collects sooner: 143–161 MiB at the same point, the same live size.
 * It has a price, measured at issue 41's twelfth stop (docs/performance-history.md): each mark-compact walks
 * everything live, and 20 % makes them come almost twice as often as 50 % — with thousands of commands
 * awaiting, 9–13 % more CPU per durable submission at ten submitters. But at 50 % what an allow rule adds
 * to a submission's decision grew from ~0.47 to ~0.63 ms (row 11's allow rule 1.16× → 1.20× a held
 * command's, its goal ≤ 1.2×, six alternated pairs), so the step stays at 20 %.
 * Read by V8 at each limit computation, so setting it here, before the daemon allocates, is enough; an
 * operator's own `--heap-growing-percent` on node's command line (or NODE_OPTIONS) wins.
 */
const HEAP_GROWING = '--heap-growing-percent=20';

export async function runStart(argv: string[]): Promise<number> {
  if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent'))) setFlagsFromString(HEAP_GROWING);
  const p = parseFlags('start', argv, {
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
  const config = loadConfig(flags);
  const log = createLogger();
  // Contract 17: a reload reads the config as this start did (the same flags and environment).
  const daemon = new Daemon(config, { log, reread: () => loadConfig(flags) });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.log('info', 'signal', { signal });
    daemon.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.log('error', 'shutdown_failed', { error: (e as Error).message });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Contract 17: SIGHUP reloads the config and never stops the daemon (Node's default ends the process);
  // the reload logs what it applied, or why it kept the old config.
  process.on('SIGHUP', () => {
    log.log('info', 'signal', { signal: 'SIGHUP' });
    void daemon.reload();
  });
  try {
    const info = await daemon.start();
    const bare = await daemon.ownersWithoutPasskey();
    process.stdout.write(
      [
        `ogf-broker ${info.version} listening on ${info.url} (data dir ${config.dataDir})`,
        `MCP endpoint: ${info.mcp_url}  (connecting an AI client: docs/clients.md)`,
        // Issue 19: the exact command, --data-dir included when not the default, shell-quoted.
        mcpTokenLine(config.dataDir, currentInvocation()),
        `OGF Bridge: ${config.ogf_bridge ? config.ogf_bridge.url : 'off (set ogf_bridge.url in config or OGF_BRIDGE_URL)'}`,
        // Contract 13.3: WebAuthn refuses an IP address as relying party, so passkeys live at localhost.
        `Passkeys: use the panel at ${localhostUrl(info.url)}/ (WebAuthn does not accept an IP address; docs/owner.md)`,
        ...(bare.length === 0
          ? []
          : [
              `require_passkey is on and ${bare.join(', ')} ${bare.length === 1 ? 'has' : 'have'} no passkey yet: add one there now (until then a token login may add the first)`,
            ]),
        'Owner panel — open this URL to log in:',
        daemon.ownerLoginUrl,
        '',
      ].join('\n'),
    );
  } catch (e) {
    await daemon.close().catch(() => {});
    throw e;
  }
  return new Promise<number>(() => {
    // Runs until a signal ends the process.
  });
}
