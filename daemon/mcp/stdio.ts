/**
 * The server behind `ogf-broker mcp-stdio` (contract 1.1; the command is commands/mcp-stdio.ts): one per
 * stdio connection, acting as client `local` and relaying `tools/list` and `tools/call` to the daemon of
 * its data dir over Streamable HTTP (./relay.ts), so both transports share one broker, one validation and
 * one set of schemas; progress notifications and the daemon's `notifications/tools/list_changed`
 * (contract 3.1) are forwarded, in either protocol generation (contract 10).
 */
import type { Progress } from '@modelcontextprotocol/client';
import {
  type CallToolResult,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
} from '@modelcontextprotocol/server';
import type { Logger } from '../base/index.js';
import { VERSION } from '../base/index.js';
import type { Generation } from './generations.js';
import type { Relay } from './relay.js';
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
