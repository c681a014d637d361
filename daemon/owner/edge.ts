// Placeholder until issue 4 lands: the owner edge mounts nothing yet.
import type { Edge, EdgeContext } from '../context.js';

export function createOwnerEdge(_ctx: EdgeContext): Edge {
  return { routes: [], upgrades: [], close: async () => {} };
}
