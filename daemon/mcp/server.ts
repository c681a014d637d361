/**
 * One SDK `Server` speaking for one client. We use the low-level `Server` with our own `tools/list` and
 * `tools/call` handlers (not `McpServer`) so the published schemas are exactly ours and the SDK never
 * answers a bad input with its own text: refusals are the product's (contract 3.2).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { TOOLS } from './schemas.js';
import type { ToolHandler } from './tools.js';

export const SERVER_INSTRUCTIONS =
  'ogf-broker is an approval gate: every command or avatar cue you request waits for its owner to approve it. ' +
  'Use list_commands to see what you may ask for. A PENDING result is normal: keep its pending_id and call ' +
  'await_command_result; never resend the request. ERROR and UNKNOWN are final: never retry or replay them.';

/** Builds a server whose tool calls run as `client`. */
export function createMcpServer(handler: ToolHandler, client: string, version: string): Server {
  const server = new Server(
    { name: 'ogf-broker', title: 'ogf-broker', version },
    { capabilities: { tools: { listChanged: false } }, instructions: SERVER_INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const token = request.params._meta?.progressToken;
    return handler(request.params.name, request.params.arguments, {
      client,
      signal: extra.signal,
      progress: { token, send: (n) => extra.sendNotification(n) },
    });
  });
  return server;
}
