/**
 * The MCP edge (contracts.md 3, 10): the sources' tools and its own lifecycle tools over Streamable HTTP
 * at `/mcp` and `/mcp/<token>`, in both protocol generations, mounted on the daemon's one HTTP server. The
 * stdio front end (./stdio.ts) relays to this same endpoint.
 */
import type { ServerResponse } from 'node:http';
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

/** The MCP edge, and how to cut one client off at once. */
export interface McpEdge extends Edge {
  /**
   * Closes every MCP session of `client` and ends its 2026-07-28 requests in flight (contract 15:
   * Disconnect closes that client's MCP sessions at once, both generations).
   */
  closeClient(client: string): void;
}

/** Builds the MCP edge; `close()` ends every session and is harmless twice. */
export function createMcpEdge(ctx: EdgeContext, opts: McpEdgeOptions = {}): McpEdge {
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
  const open = new Map<string, Set<ServerResponse>>();
  const trackModern = (client: string, res: ServerResponse) => {
    const set = open.get(client) ?? new Set<ServerResponse>();
    open.set(client, set);
    set.add(res);
    res.once('close', () => {
      set.delete(res);
      if (set.size === 0 && open.get(client) === set) open.delete(client);
    });
  };
  const route = createMcpHttpRoute({ ...ctx, sessions, newServer, modern, trackModern });
  return {
    routes: [route],
    closeClient: (client) => {
      sessions.closeClient(client);
      for (const res of open.get(client) ?? []) res.destroy();
      open.delete(client);
    },
    upgrades: [],
    close: async () => {
      stopFollowing();
      await Promise.all([sessions.close(), modern.close()]);
    },
  };
}
