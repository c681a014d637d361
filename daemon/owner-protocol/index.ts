/**
 * The owner protocol's public face (contracts.md 5): the frames an owner may send, proved by their zod
 * schemas, and the one function that reads a text frame. The owner edge (daemon/owner/) acts on what this
 * folder proved; the frames the daemon sends back are typed in common/owner-messages.ts. Kept apart from the
 * edge so that the wire is read in one place, and the edge holds no schema and this folder no socket.
 */

export type { ApproveFrame, ArgsFrame, DenyFrame, ReconcileFrame } from './decisions.js';
export type { DoctorFrame, NotifyTestFrame, ReloadFrame } from './diagnose.js';
export type { GrantFrame, GrantsFrame, PolicyTestFrame, RevokeFrame } from './grants.js';
export { type AuditFrame, HISTORY_DEFAULT, HISTORY_MAX, type HistoryFrame } from './history.js';
export {
  CLIENT_TYPES,
  type ClientFrame,
  type ClientType,
  type FrameOf,
  MAX_FRAME_BYTES,
  type ParsedFrame,
  parseClientFrame,
} from './parse.js';
export type { ApproveChallengeFrame, PasskeyFrame } from './passkeys.js';
export type { PushListFrame, PushSubscribeFrame, PushUnsubscribeFrame } from './push.js';
export {
  RULE_ID_PATTERN,
  RULE_POSITION_MAX,
  type RuleAddFrame,
  type RuleRemoveFrame,
  type RulesFrame,
  type RuleUpdateFrame,
} from './rules.js';
