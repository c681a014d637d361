/**
 * The owner edge's public face (contracts.md 5, 9): the edge the daemon mounts (panel, login, `/owner/ws`),
 * the context it is handed and the first-run setup feed it greets owners with. Everything else in owner/ is
 * how these work. The frames an owner sends are read in owner-protocol/, the terminal's client is
 * owner-terminal/, and the frames the edge sends are typed in common/owner-messages.ts.
 */

export type { DiagnosisCheck, ServerMessage, View } from '../../common/owner-messages.js';
export type {
  Diagnose,
  NewRule,
  OwnerContext,
  OwnerPush,
  OwnerPushDevice,
  ReloadOutcome,
  RuleAnswer,
  RulePatch,
  RulesDesk,
} from './context.js';
export { createOwnerEdge, type OwnerEdgeOptions } from './edge.js';
export { createSetupFeed, type SetupDeps, type SetupFeed } from './setup.js';
