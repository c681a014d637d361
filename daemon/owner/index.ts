/**
 * The owner side's public face (contracts.md 5, 9): the owner edge the daemon mounts (panel, login,
 * `/owner/ws`), the first-run setup feed it greets owners with, and the terminal client's payload bound. Everything else in owner/ is how these work.
 *
 * Two callers import a module directly, on purpose: daemon/context.ts takes `SetupFeed` from setup.ts,
 * because the edge named here depends on context.ts, so going through this file would add an import circle
 * (architecture.md rule 8: none, types included; setup.ts → kinds/source.ts → context.ts is one already,
 * left to whoever untangles context.ts); and the panel (owner-ui/) takes the wire types from
 * messages.ts, because it is compiled for the browser (tsconfig.ui.json, no Node types) and must not
 * type-check the daemon's Node modules this file names.
 */
export { OWNER_CLIENT_MAX_PAYLOAD } from './client.js';
export { createOwnerEdge, type OwnerEdgeOptions } from './edge.js';
export type { ServerMessage, View } from './messages.js';
export { createSetupFeed, type OwnerContext, type SetupDeps, type SetupFeed } from './setup.js';
