/**
 * The MCP edge (contracts.md 3, 10): the five tools over Streamable HTTP at `/mcp` and `/mcp/<token>`, in
 * both protocol generations, mounted on the daemon's one HTTP server. The stdio front end (./stdio.ts)
 * relays to this same endpoint.
 */
import type { Edge, EdgeContext } from '../context.js';
import { toResult } from '../core/result.js';
import { createModernLeg, type Generation } from './generations.js';
import { createMcpHttpRoute } from './http.js';
import { toolsFor } from './schemas.js';
import { createMcpServer } from './server.js';
import { SessionRegistry } from './sessions.js';
import { createToolHandler, resultContent } from './tools.js';
import { ToolSet } from './toolset.js';

export interface McpEdgeOptions {
  /** A memory bound on the MCP sessions of all clients together (default 1000); never evicts another client's. */
  maxSessions?: number;
  /** Sessions idle this long are closed (default 30 minutes). */
  idleMs?: number;
}

/** Builds the MCP edge; `close()` ends every session and is harmless twice. */
export function createMcpEdge(ctx: EdgeContext, opts: McpEdgeOptions = {}): Edge {
  const sessions = new SessionRegistry({ max: opts.maxSessions, idleMs: opts.idleMs, log: ctx.log });
  const handler = createToolHandler(ctx);
  // One set for every client; sources that change it (upstreams, section 7) call tools.replace().
  const tools = new ToolSet(toolsFor({ cues: ctx.cues !== undefined }));
  const newServer = (client: string, generation: Generation) =>
    createMcpServer({
      handler,
      tools,
      broker: ctx.broker,
      client,
      version: ctx.version,
      generation,
      answer: (c) => resultContent(toResult(c)),
    });
  const modern = createModernLeg((client) => newServer(client, 'modern'), tools, ctx.log);
  const route = createMcpHttpRoute({ ...ctx, sessions, newServer, modern });
  return {
    routes: [route],
    upgrades: [],
    close: async () => {
      await Promise.all([sessions.close(), modern.close()]);
    },
  };
}
