/**
 * The MCP edge (contracts.md 3): the five tools over Streamable HTTP at `/mcp` and `/mcp/<token>`, mounted
 * on the daemon's one HTTP server. The stdio front end (./stdio.ts) relays to this same endpoint.
 */
import type { Edge, EdgeContext } from '../context.js';
import { createMcpHttpRoute } from './http.js';
import { SessionRegistry } from './sessions.js';
import { createToolHandler } from './tools.js';

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
  const route = createMcpHttpRoute({ ...ctx, sessions, handler });
  return { routes: [route], upgrades: [], close: () => sessions.close() };
}
