/**
 * The core (architecture.md "The house"): the broker as the edges see it (api.ts) and the one that writes
 * command state, the lifecycle and its views, grants, executors' interface, the store's ports, retention and
 * fault points. core/ never names a kind; it asks kind-policy.ts.
 */

export type {
  ActionResult,
  Amendment,
  ApproveGrant,
  BrokerApi,
  GrantResult,
  GrantSpec,
  PasskeyEvidence,
  SubmitRequest,
  SubmitResult,
} from './api.js';
export {
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
export { Broker } from './broker.js';
export type { ExecutionIo, ExecutionReport, Executor } from './executor.js';
export { faultsFromEnv } from './fault.js';
export { GRANT_TTL_MAX_S, GRANT_TTL_MIN_S, GRANT_USES_MAX, type Grant, jsonEqual } from './grants.js';
export type { KindPolicies, KindPolicy, KindView } from './kind-policy.js';
export {
  type Actor,
  type Command,
  isFinal,
  type KindFields,
  type Outcome,
  type Preview,
  type State,
  type Tool,
} from './lifecycle.js';
export { CONFIG_LOADED, PASSKEY_KEY_EVENTS, PasskeyLedger, type PresentedKey } from './passkey-ledger.js';
export type {
  AuditAction,
  AuditEntry,
  AuditSigner,
  AuditStore,
  Awaitable,
  CommandStore,
  CommittedReads,
  GrantStore,
  HistorySearch,
  OAuthConnection,
  OAuthNameUse,
  OAuthPendingRegistration,
  OAuthRegisteredClient,
  OAuthStore,
  OAuthTokenRecord,
  PasskeyStore,
  PendingCaps,
  PushStore,
  PushSubscriptionRecord,
  RetentionRow,
  StoreChange,
  StoredAudit,
  StoredPasskey,
  StorePorts,
  TasksPage,
  TokenBook,
  TokenHashStore,
} from './ports.js';
export { type CommandResult, cutUtf8, summaryLine, toResult } from './result.js';
export { RetentionPass } from './retention-pass.js';
export {
  type CompiledWhen,
  noRules,
  type RulePort,
  type RuleSubject,
  type RuleVerdict,
  type WhenTest,
} from './rule-port.js';
export { isStaleWrite, StaleWrite } from './stale.js';
export { type View, viewJson } from './view.js';
