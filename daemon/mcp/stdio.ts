/**
 * `ogf-broker mcp-stdio [--data-dir D]` (contract 1.1): an MCP server on stdin/stdout for clients that spawn
 * their servers (Claude Desktop). It acts as client `local` and relays `tools/list` and `tools/call` to the
 * daemon of its data dir over Streamable HTTP, so both transports share one broker, one validation and one
 * set of schemas; progress notifications are forwarded. stdout is the protocol: logs go to stderr only.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { parseFlags, stringFlag } from '../args.js';
import { resolveDataDir } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import { VERSION } from '../version.js';
import { WAIT_MAX_S } from './schemas.js';
import { SERVER_INSTRUCTIONS } from './server.js';
import { Upstream } from './upstream.js';

/** Longer than the longest wait, so a relayed call never gives up before the daemon answers. */
const RELAY_TIMEOUT_MS = (WAIT_MAX_S + 60) * 1000;

function unavailable(e: unknown): McpError {
  if (e instanceof McpError) return e;
  return new McpError(ErrorCode.InternalError, `ogf-broker daemon unavailable: ${(e as Error).message}`);
}

/** The stdio-side server, relaying to `upstream`. */
export function createRelayServer(upstream: Upstream, log: Logger): Server {
  const server = new Server(
    { name: 'ogf-broker', title: 'ogf-broker', version: VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: SERVER_INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    try {
      return await upstream.call((c) => c.listTools(request.params, { signal: extra.signal }));
    } catch (e) {
      log.log('warn', 'mcp_stdio_relay_failed', { method: 'tools/list', error: (e as Error).message });
      throw unavailable(e);
    }
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    const params = { name: request.params.name, arguments: request.params.arguments ?? {} };
    const onprogress =
      token === undefined
        ? undefined
        : (p: Progress) => {
            // Re-labelled with the downstream client's own token (the upstream one is the relay's).
            void extra
              .sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } })
              .catch(() => {});
          };
    try {
      return (await upstream.call((c) =>
        c.callTool(params, undefined, {
          signal: extra.signal,
          timeout: RELAY_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          ...(onprogress === undefined ? {} : { onprogress }),
        }),
      )) as CallToolResult;
    } catch (e) {
      log.log('warn', 'mcp_stdio_relay_failed', { method: 'tools/call', error: (e as Error).message });
      throw unavailable(e);
    }
  });
  return server;
}

/** Runs until stdin closes or a signal arrives; resolves to the exit code. */
export async function runMcpStdio(argv: string[]): Promise<number> {
  const flags = parseFlags('mcp-stdio', argv, { 'data-dir': { type: 'string' } });
  const dataDir = resolveDataDir(stringFlag(flags, 'data-dir'));
  const log = createLogger(process.stderr);
  const upstream = new Upstream({ dataDir, version: VERSION, log });
  const server = createRelayServer(upstream, log);
  const transport = new StdioServerTransport();

  // Connect to (or start) the daemon right away, so the client's first request does not wait for it.
  upstream
    .client()
    .catch((e: Error) => log.log('warn', 'mcp_stdio_daemon_unavailable', { error: e.message }));

  return new Promise<number>((resolve) => {
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      process.stdin.off('end', onEnd);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      void Promise.allSettled([server.close(), upstream.close()]).then(() => {
        process.stdin.pause();
        resolve(code);
      });
    };
    const onEnd = () => finish(0);
    const onSignal = () => finish(0);
    process.stdin.once('end', onEnd);
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    server.onclose = () => finish(0);
    server.connect(transport).catch((e: Error) => {
      log.log('error', 'mcp_stdio_failed', { error: e.message });
      finish(1);
    });
  });
}
