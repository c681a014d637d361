/**
 * `ogf-broker mcp-stdio [--data-dir D]` (contract 1.1): an MCP server on stdin/stdout for clients that spawn
 * their servers (Claude Desktop). It acts as client `local` and relays `tools/list` and `tools/call` to the
 * daemon of its data dir over Streamable HTTP (./relay.ts), so both transports share one broker, one
 * validation and one set of schemas; progress notifications and the daemon's
 * `notifications/tools/list_changed` (contract 3.1) are forwarded. Both protocol generations are
 * served (contract 10): the SDK's `serveStdio` pins each connection to the generation its opening speaks.
 * stdout is the protocol: logs go to stderr only.
 */
import type { Progress } from '@modelcontextprotocol/client';
import {
  type CallToolResult,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { parseFlags, stringFlag } from '../args.js';
import { resolveDataDir } from '../config/index.js';
import { createLogger, type Logger } from '../log.js';
import { VERSION } from '../version.js';
import type { Generation } from './generations.js';
import { Relay } from './relay.js';
import { WAIT_MAX_S } from './schemas.js';
import { GateServer, SERVER_INSTRUCTIONS, taskAnswer } from './server.js';
import { registerRelayTaskHandlers, relayTaskCall } from './stdio-tasks.js';
import { TASKS_EXTENSION } from './tasks.js';

/** Longer than the longest wait, so a relayed call never gives up before the daemon answers. */
const RELAY_TIMEOUT_MS = (WAIT_MAX_S + 60) * 1000;
/** Tools whose call changes nothing, so it may be resent after a connection reset (relay.ts isReconnectable). */
const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(['await_command_result', 'list_commands']);

/** The daemon's own protocol errors (an unknown tool's -32602) pass through unchanged. */
function unavailable(e: unknown): ProtocolError {
  if (e instanceof ProtocolError) return e;
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    `ogf-broker daemon unavailable: ${(e as Error).message}`,
  );
}

/** The stdio-side server of one connection in `generation`, relaying to the daemon through `relay`. */
export function createRelayServer(relay: Relay, log: Logger, generation: Generation = 'legacy'): Server {
  // The same capabilities the daemon declares in this generation: tools with list_changed (contract 3.1),
  // and its task capability (contract 10).
  const capabilities =
    generation === 'modern'
      ? { tools: { listChanged: true }, extensions: { [TASKS_EXTENSION]: {} } }
      : { tools: { listChanged: true }, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };
  const server = new GateServer(
    { name: 'ogf-broker', title: 'ogf-broker', version: VERSION },
    { capabilities, instructions: SERVER_INSTRUCTIONS },
  );
  registerRelayTaskHandlers(server, generation, relay);
  // Contract 3.1: the daemon's tool set changed. A 2025-era client hears it unsolicited; on a 2026-07-28
  // connection serveStdio delivers it on the client's open subscriptions/listen streams (none: nothing).
  const stop = relay.onToolsChanged(() => void server.sendToolListChanged().catch(() => {}));
  const previous = server.onclose;
  server.onclose = () => {
    stop();
    previous?.();
  };
  server.setRequestHandler('tools/list', async (request, ctx) => {
    try {
      return await relay.call((c) => c.listTools(request.params, { signal: ctx.mcpReq.signal }), true);
    } catch (e) {
      log.log('warn', 'mcp_stdio_relay_failed', { method: 'tools/list', error: (e as Error).message });
      throw unavailable(e);
    }
  });
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    const params = { name: request.params.name, arguments: request.params.arguments ?? {} };
    try {
      const handle = await relayTaskCall(
        relay,
        generation,
        request.params as typeof params & { task?: unknown },
        ctx,
      );
      if (handle !== undefined) return taskAnswer(handle);
    } catch (e) {
      log.log('warn', 'mcp_stdio_relay_failed', { method: 'tools/call', error: (e as Error).message });
      throw unavailable(e);
    }
    const onprogress =
      token === undefined
        ? undefined
        : (p: Progress) => {
            // Re-labelled with the downstream client's own token (the upstream one is the relay's).
            void ctx.mcpReq
              .notify({ method: 'notifications/progress', params: { ...p, progressToken: token } })
              .catch(() => {});
          };
    try {
      return (await relay.call(
        (c) =>
          c.callTool(params, {
            signal: ctx.mcpReq.signal,
            timeout: RELAY_TIMEOUT_MS,
            resetTimeoutOnProgress: true,
            ...(onprogress === undefined ? {} : { onprogress }),
          }),
        READ_ONLY_TOOLS.has(params.name),
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
  const relay = new Relay({ dataDir, version: VERSION, log });

  // Connect to (or start) the daemon right away, so the client's first request does not wait for it.
  relay.client().catch((e: Error) => log.log('warn', 'mcp_stdio_daemon_unavailable', { error: e.message }));

  return new Promise<number>((resolve) => {
    // One relay server per connection (and per discarded server/discover probe): both generations.
    const served = serveStdio(({ era }) => createRelayServer(relay, log, era), {
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
