/**
 * The command and the grant as data, and the pure rules on them (architecture.md "The house"): the lifecycle
 * and its one `transition`, grant matching and use counts, the owner's View and the tools' result, the
 * retention rule, the audit chain's hashing and the passkey ledger, what a write refused as stale is, and the
 * questions the core asks a kind (kind-policy.ts). No clock, no I/O, never a throw on a request: everything
 * here is unit-tested alone, and decisions/ and runtime/ build on it.
 */
export {
  type AuditAction,
  type AuditEntry,
  type ChainEntry,
  type Checkpoint,
  canonicalJson,
  chainEntry,
  checkpointPayload,
  GENESIS_HASH,
  sealEntry,
  sha256Hex,
  type UnsealedEntry,
} from './audit-chain.js';
export { sha256Digest } from './digest.js';
export {
  type CommandPolicy,
  type ConfigGrant,
  end,
  GRANT_TTL_MAX_S,
  GRANT_TTL_MIN_S,
  GRANT_USES_MAX,
  type Grant,
  isLive,
  jsonEqual,
  pick,
  sortedKeysJson,
  use,
} from './grant-rules.js';
export type { KindPolicies, KindPolicy, KindView } from './kind-policy.js';
export {
  type Actor,
  type AmendAction,
  type Amended,
  type Command,
  type Event,
  type FinishResult,
  isFinal,
  type KindFields,
  type Outcome,
  type Preview,
  type RevertBase,
  type StartFields,
  type State,
  type Tool,
} from './lifecycle.js';
export { type View, viewJson } from './owner-view.js';
export { CONFIG_LOADED, PASSKEY_KEY_EVENTS, PasskeyLedger, type PresentedKey } from './passkey-ledger.js';
export { argsAsPruned, FIELD_KEEP_BYTES, RETENTION_MS } from './retention-rule.js';
export { isStaleWrite, StaleWrite } from './stale-write.js';
export { type CommandResult, cutUtf8, summaryLine, toResult } from './tool-result.js';
export { transition } from './transition.js';
