/**
 * The core (architecture.md "The house"): the broker as the edges see it (api.ts) and the one that writes
 * command state, the lifecycle and its views, grants, executors' interface, the store's ports, retention and
 * fault points. core/ never names a kind; it asks kind-policy.ts.
 */

export type {
  ActionResult,
  ApproveGrant,
  BrokerApi,
  GrantResult,
  GrantSpec,
  SubmitRequest,
  SubmitResult,
} from './api.js';
export { Broker } from './broker.js';
export type { ExecutionIo, ExecutionReport, Executor } from './executor.js';
export { faultsFromEnv } from './fault.js';
export { GRANT_TTL_MAX_S, GRANT_TTL_MIN_S, GRANT_USES_MAX, type Grant } from './grants.js';
export type { KindPolicies, KindPolicy, KindView } from './kind-policy.js';
export {
  type Actor,
  type Command,
  isFinal,
  type KindFields,
  type Outcome,
  type State,
  type Tool,
} from './lifecycle.js';
export type {
  AuditEntry,
  AuditStore,
  Awaitable,
  CommandStore,
  CommittedReads,
  GrantStore,
  PushStore,
  PushSubscriptionRecord,
  RetentionRow,
  StoreChange,
  StoredAudit,
  StorePorts,
  TasksPage,
  TokenHashStore,
} from './ports.js';
export { type CommandResult, cutUtf8, summaryLine, toResult } from './result.js';
export { RetentionPass } from './retention-pass.js';
export { type View, viewJson } from './view.js';
