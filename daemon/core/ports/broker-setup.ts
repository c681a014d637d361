/**
 * What a broker is built from (runtime/broker.ts): the store's ports, the kinds' policies and executors, the
 * caps and the config's grants, and the world (clock, log, ids, commit schedule, fault points) with
 * production defaults. The daemon fills it in, tests inject what they control (issue 20 item 6). The fault
 * points are named here and armed by runtime/fault-points.ts.
 */
import type { Clock, Logger } from '../../base/index.js';
import type { Command, CommandPolicy, ConfigGrant, KindPolicies } from '../model/index.js';
import type { Executor } from './executor.js';
import type { RulePort } from './rules.js';
import type { StorePorts } from './store.js';

/** The named points, in a command's life. */
export type FaultPoint =
  /**
   * Approved and about to commit `running` (for a cue: its session file is already written). When the
   * launch starts in its approval's turn (free lane, issue 19 finding 6) the approval is not durable yet
   * either: both commit in one transaction, so a crash here loses the unanswered approval.
   */
  | 'before_mark_running'
  /** `running` is durable; the child is not spawned yet. */
  | 'after_mark_running'
  /** The child has exited (its outcome is known); the outcome is not committed yet. */
  | 'before_finish_commit';

/** What the launch path calls at each point: crash there, or do nothing. */
export type Faults = (point: FaultPoint) => void;

export interface BrokerDeps {
  store: StorePorts;
  reviewTimeoutS: number;
  /** What each kind of tool means to the core (kinds/index.ts): twin rule, grants, quorum, lanes, secrets. */
  kinds: KindPolicies;
  /** Executors by tool. A tool without one cannot be submitted. */
  executors: Partial<Record<Command['tool'], Executor>>;
  /** Contract 1.3 (v2): PENDING commands one client may have (default 100). */
  maxPendingPerClient?: number;
  /** Contract 1.3 (v2): PENDING commands all clients together may have (default 2000). */
  maxPending?: number;
  /**
   * What the broker knows of a command name (catalog commands and upstream tools): its `approvals`, or
   * undefined when there is no such command. Grants consult it (contract 8: `NotGrantable`). Default: none.
   */
  commandPolicy?: CommandPolicy;
  /** Contract 11: the owner's rules and `when` grants (daemon/rules/; default: none). */
  rules?: RulePort;
  /**
   * Contract 13.3: whether approving a command name needs a passkey assertion (`require_passkey`): such a
   * command is never approved at submit, never granted, and its owner approvals need `PasskeyEvidence`.
   * Default: never.
   */
  passkeyRequired?: (command: string) => boolean;
  /** Contract 8: the config's grants, made live at start under their stable ids. */
  configGrants?: readonly ConfigGrant[];
  /**
   * Contract 16: this daemon's node name, stamped on every command it receives. With `shared`, the broker
   * launches, expires and recovers only its own node's commands, and hears the others' from the store.
   */
  node?: string;
  /** Contract 16: the store is shared with other nodes (PostgreSQL); default false (every command is ours). */
  shared?: boolean;
  clock?: Clock;
  log?: Logger;
  randomId?: () => string;
  randomGrantId?: () => string;
  /** When a batch of changes is committed (group-commit.ts; default: setImmediate, the end of the turn). */
  commitSchedule?: (run: () => void) => void;
  /** Test-only crash points on the launch path (fault-points.ts; default: none). */
  faults?: Faults;
}
