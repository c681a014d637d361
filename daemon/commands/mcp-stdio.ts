/**
 * `ogf-broker mcp-stdio [--data-dir D]` (contract 1.1): an MCP server on stdin/stdout for clients that spawn
 * their servers (Claude Desktop), relaying to the daemon of its data dir (../mcp/stdio.ts, ../mcp/relay.ts).
 * Both protocol generations are served (contract 10): the SDK's `serveStdio` pins each connection to the
 * generation its opening speaks. stdout is the protocol: logs go to stderr only.
 */
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { createLogger, parseFlags, stringFlag, VERSION } from '../base/index.js';
import { resolveDataDir } from '../config/index.js';
import { createRelayServer, protoKeysInSight, Relay } from '../mcp/index.js';

/** Runs until stdin closes or a signal arrives; resolves to the exit code. */
export async function runMcpStdio(argv: string[]): Promise<number> {
  const flags = parseFlags('mcp-stdio', argv, { 'data-dir': { type: 'string' } });
  const dataDir = resolveDataDir(stringFlag(flags, 'data-dir'));
  const log = createLogger(process.stderr);
  const relay = new Relay({ dataDir, version: VERSION, log });

  // Connect to (or start) the daemon right away, so the client's first request does not wait for it.
  relay.client().catch((e: Error) => log.log('warn', 'mcp_stdio_daemon_unavailable', { error: e.message }));

  return new Promise<number>((resolve) => {
    // One relay server per connection (and per discarded server/discover probe): both generations.
    // stdin through protoKeysInSight: a `__proto__` key of a call is refused, as over HTTP, not dropped.
    const lines = process.stdin.pipe(protoKeysInSight());
    process.stdin.once('error', (e) => lines.destroy(e)); // the transport hears stdin's error, as before
    const transport = new StdioServerTransport(lines, process.stdout);
    const served = serveStdio(({ era }) => createRelayServer(relay, log, era), {
      transport,
      onerror: (e) => log.log('warn', 'mcp_stdio_error', { error: e.message }),
    });
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      process.stdin.off('end', onEnd);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      void Promise.allSettled([served.close(), relay.close()]).then(() => {
        process.stdin.pause();
        resolve(code);
      });
    };
    const onEnd = () => finish(0);
    const onSignal = () => finish(0);
    process.stdin.once('end', onEnd);
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
}
