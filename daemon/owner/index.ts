/**
 * The owner side's public face (contracts.md 5, 9): the owner edge the daemon mounts (panel, login,
 * `/owner/ws`), the first-run setup feed it greets owners with, the terminal client's payload
 * bound and the wire types the terminal commands read. Everything else in owner/ is how these work.
 *
 * The terminal client's commands (commands/owner-actions.ts, commands/grant.ts) import client.ts, format.ts
 * and terminal.ts directly, so that they load the WebSocket client alone and not the edge named here; and
 * the panel (owner-ui/) takes the wire types from messages.ts, because it is compiled for the browser
 * (tsconfig.ui.json, no Node types) and must not type-check the daemon's Node modules this file names.
 * test/structure-imports.test.ts lists both.
 */

export type { DiagnosisCheck, ServerMessage, View } from '../../common/owner-messages.js';
export { OWNER_CLIENT_MAX_PAYLOAD } from './client.js';
export { createOwnerEdge, type OwnerEdgeOptions } from './edge.js';
export {
  createSetupFeed,
  type Diagnose,
  type OwnerContext,
  type OwnerPush,
  type OwnerPushDevice,
  type ReloadOutcome,
  type SetupDeps,
  type SetupFeed,
} from './setup.js';
