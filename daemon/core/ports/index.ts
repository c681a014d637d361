/**
 * What the core is given and what it gives (issue 20 item 2, item 4): the store's ports (store.ts), an
 * executor's interface, the owner's rules as a port (rules.ts), and the broker as the edges see it
 * (broker-api.ts). Interfaces only, so the stores, the kinds and the edges depend on these and not on how
 * the broker is built.
 */
export type { ActionRecord, ActionStore } from './actions.js';
export type {
  ActionResult,
  Amendment,
  ApproveGrant,
  BrokerApi,
  GrantResult,
  GrantSpec,
  PasskeyEvidence,
  Queued,
  SubmitRequest,
  SubmitResult,
} from './broker-api.js';
export type { BrokerDeps, FaultPoint, Faults } from './broker-setup.js';
export type { Bound, ExecutionIo, ExecutionReport, Executor, Rebound } from './executor.js';
export type { OwnerRule, OwnerRuleStore } from './owner-rule-store.js';
export {
  type CompiledWhen,
  noRules,
  type RulePort,
  type RuleSubject,
  type RuleVerdict,
  type WhenTest,
} from './rules.js';
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
} from './store.js';
