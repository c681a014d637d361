/**
 * TODO
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
} from './broker-api.js';
export type { ExecutionIo, ExecutionReport, Executor } from './executor.js';
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
