// Placeholder until issue 3 lands: the MCP edge mounts nothing yet.
import type { Edge, EdgeContext } from '../context.js';

export function createMcpEdge(_ctx: EdgeContext): Edge {
  return { routes: [], upgrades: [], close: async () => {} };
}
