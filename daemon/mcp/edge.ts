/**
 * The MCP edge (contracts.md 3, 10): the sources' tools and its own lifecycle tools over Streamable HTTP
 * at `/mcp` and `/mcp/<token>`, in both protocol generations, mounted on the daemon's one HTTP server. The
 * stdio front end (./stdio.ts) relays to this same endpoint.
 */
import type { Edge, EdgeContext } from '../http/index.js';
import { createModernLeg, type Generation } from './generations.js';
import { createMcpHttpRoute } from './http.js';
import { createMcpServer } from './server.js';
import { SessionRegistry } from './sessions.js';
import { createEdgeTools } from './tools.js';

export interface McpEdgeOptions {
  /** A memory bound on the MCP sessions of all clients together (default 1000); never evicts another client's. */
  maxSessions?: number;
  /** Sessions idle this long are closed (default 30 minutes). */
  idleMs?: number;
}

/** Builds the MCP edge; `close()` ends every session and is harmless twice. */
export function createMcpEdge(ctx: EdgeContext, opts: McpEdgeOptions = {}): Edge {
  const sessions = new SessionRegistry({ max: opts.maxSessions, idleMs: opts.idleMs, log: ctx.log });
  // One set for every client: every source's tools and the edge's own; when a source's tools change,
  // every client hears notifications/tools/list_changed (ToolSet.replace).
  const { tools, answer, close: stopFollowing } = createEdgeTools(ctx);
  const newServer = (client: string, generation: Generation) =>
    createMcpServer({
      tools,
      broker: ctx.broker,
      client,
      version: ctx.version,
      generation,
      answer,
    });
  const modern = createModernLeg((client) => newServer(client, 'modern'), tools, ctx.log);
  const route = createMcpHttpRoute({ ...ctx, sessions, newServer, modern });
  return {
    routes: [route],
    upgrades: [],
    close: async () => {
      stopFollowing();
      await Promise.all([sessions.close(), modern.close()]);
    },
  };
}
