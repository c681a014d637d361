/**
 * The queue: the only writer of command state (architecture.md). It decides nothing alone: a submit is
 * intake.ts's tagged result (applied by submit-actions.ts), an owner's decision is checked by
 * owner-decisions.ts (command-actions.ts, grant-actions.ts), every change is `transition()`; the broker
 * applies what they return through its one `#apply` and its one group commit (group-commit.ts): the changes
 * of one event-loop turn are written in one transaction, then each goes out as one event to every
 * subscriber, in commit order, and only then are its callers answered (example 3). Launches (launches.ts)
 * follow rule 6 and await the commit of `running` before the executor spawns (rule 3). Two views of memory
 * (command-views.ts; grant-book.ts): the working view changes at once, so a later request of the same turn
 * sees it; edges read the committed view; a failed batch puts the working view back and every caller gets
 * the error. Recovery is recovery.ts's, deadlines expiry.ts's, waiters waiters.ts's, other nodes (contract
 * 16) fleet.ts's. The actions and reads are written once, in their classes, and handed out here as they are
 * (issue 37 item 4: no layer restating each signature), every action through the fleet's retry.
 */
import { type Clock, iso, type Logger, silentLogger, systemClock } from '../../base/index.js';
import { type Also, auditOf, logChange } from '../decisions/index.js';
import type { Command, CommandPolicy, ConfigGrant, Grant, KindPolicies } from '../model/index.js';
import { type Actor, type Event, isFinal, transition } from '../model/index.js';
import type {
  ActionResult,
  AuditEntry,
  BrokerApi,
  BrokerDeps,
  Queued,
  RulePort,
  StorePorts,
} from '../ports/index.js';
import { noRules } from '../ports/index.js';
import { type CommandActionName, CommandActions } from './command-actions.js';
import { Views } from './command-views.js';
import { Expiry } from './expiry.js';
import { noFaults } from './fault-points.js';
import { Fleet } from './fleet.js';
import { type GrantActionName, GrantActions } from './grant-actions.js';
import { GrantBook } from './grant-book.js';
import { allOf, type Change, GroupCommit } from './group-commit.js';
import { Launches } from './launches.js';
import { Listeners } from './listeners.js';
import { type ReadName, Reads } from './reads.js';
import { recover } from './recovery.js';
import { SubmitActions } from './submit-actions.js';
import { Waiters } from './waiters.js';

/** How long `close()` lets running children finish (contract 17: the daemon exits within 5 s of a stop). */
export const SHUTDOWN_GRACE_MS = 3_500;

const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };
/**
 * Contract 20: how long an approval's commit may wait for the launch-time preview its launch makes, so
 * `running` shares its transaction (one fsync, not two). A slower read lets the approval commit alone.
 */
const LAUNCH_HOLD_MS = 50;

/**
 * The actions the broker hands out, each written once in its class (BrokerApi says what each means):
 * submit-actions.ts, command-actions.ts, grant-actions.ts, and the daemon's own prune and reload. Every one
 * runs through the fleet's retry (fleet.ts `again`), so a write another node changed first is run again.
 */
type Actions = Pick<BrokerApi, 'submit' | CommandActionName | GrantActionName> &
  Pick<CommandActions, 'prune'> & {
    /** Contract 17: a reload's config grants, made or revoked through the group commit (grant-book.ts). */
    reloadConfigGrants: GrantBook['reloadConfig'];
  };

/**
 * The committed reads (reads.ts), handed out as they are: edges never see a change before its commit. A
 * record, so the compiler says when one of ReadName is missing.
 */
const READS: Record<ReadName, true> = {
  get: true,
  snapshot: true,
  history: true,
  search: true,
  auditFor: true,
  tasksOf: true,
  counts: true,
  liveGrants: true,
  recentGrants: true,
};

export interface Broker extends Actions, Pick<Reads, ReadName> {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns all of them (Actions is checked whole, READS too)
export class Broker implements BrokerApi {
  readonly #store: StorePorts;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #views = new Views();
  /** Session secrets, in memory only (rule 4). */
  readonly #secrets = new Map<string, unknown>();
  readonly #expiry: Expiry;
  readonly #launches: Launches;
  readonly #listeners: Listeners<Command>;
  readonly #queued: Listeners<Queued>;
  readonly #grantListeners: Listeners<Grant>;
  readonly #grants: GrantBook;
  readonly #grantActions: GrantActions;
  readonly #commandActions: CommandActions;
  readonly #submits: SubmitActions;
  readonly #reads: Reads;
  readonly #commit: GroupCommit;
  readonly #waiters: Waiters;
  readonly #configGrants: readonly ConfigGrant[];
  readonly #commandPolicy: CommandPolicy;
  readonly #kinds: KindPolicies;
  readonly #rules: RulePort;
  readonly #fleet: Fleet;
  #started = false;
  #closing = false;

  constructor(deps: BrokerDeps) {
    this.#store = deps.store;
    this.#clock = deps.clock ?? systemClock;
    this.#log = deps.log ?? silentLogger;
    this.#kinds = deps.kinds;
    this.#configGrants = deps.configGrants ?? [];
    this.#rules = deps.rules ?? noRules;
    this.#commandPolicy = deps.commandPolicy ?? (() => undefined);
    this.#waiters = new Waiters(this.#clock);
    this.#listeners = new Listeners(this.#log);
    this.#queued = new Listeners(this.#log);
    this.#grantListeners = new Listeners(this.#log);
    this.#expiry = new Expiry({
      clock: this.#clock,
      log: this.#log,
      active: (id) => this.#views.active(id),
      expire: (current, at) => this.#apply(current, { type: 'expire', at }, DAEMON),
    });
    this.#commit = this.#groupCommit(deps);
    this.#launches = this.#launchesOf(deps);
    this.#grants = this.#grantBook(deps);
    this.#fleet = this.#fleetOf(deps);
    this.#reads = new Reads({ store: this.#store, views: this.#views, grants: this.#grants });
    this.#grantActions = new GrantActions({
      grants: this.#grants,
      kinds: this.#kinds,
      clock: this.#clock,
      settled: (answer) => this.#settled(answer),
    });
    this.#commandActions = new CommandActions({
      clock: this.#clock,
      grantActions: this.#grantActions,
      current: (id) => this.#current(id),
      get: (id) => this.get(id),
      settled: (answer) => this.#settled(answer),
      apply: (c, event, actor, also) => this.#apply(c, event, actor, also),
    });
    this.#submits = this.#submitsOf(deps);
    const fleet = this.#fleet;
    const actions: Actions = {
      ...fleet.retrying(this.#submits, ['submit']),
      ...fleet.retrying(this.#commandActions, ['approve', 'deny', 'cancel', 'reconcile', 'amend', 'prune']),
      ...fleet.retrying(this.#grantActions, ['grant', 'revoke']),
      reloadConfigGrants: (grants) => fleet.again(() => this.#grants.reloadConfig(grants)),
    };
    const reads = this.#reads;
    Object.assign(
      this,
      actions,
      Object.fromEntries(Object.keys(READS).map((name) => [name, reads[name as ReadName].bind(reads)])),
    );
  }

  /** Recovery at start (recovery.ts): the store's commands after a restart, timers, launches, grants. */
  start(): Promise<void> {
    if (this.#started) throw new Error('Broker.start() called twice');
    this.#started = true;
    const fleet = this.#fleet;
    return recover({
      own: (c) => fleet.own(c),
      store: this.#store,
      clock: this.#clock,
      log: this.#log,
      kinds: this.#kinds,
      views: this.#views,
      expiry: this.#expiry,
      launches: this.#launches,
      grants: this.#grants,
      configGrants: this.#configGrants,
    }).then(() => fleet.start());
  }

  subscribeGrants(listener: (grant: Grant) => void): () => void {
    return this.#grantListeners.add(listener);
  }

  wait(id: string, seconds: number, signal?: AbortSignal): Promise<Command> {
    const current = this.get(id);
    if (!current) return Promise.reject(new Error(`no command ${id}`));
    if (isFinal(current) || seconds <= 0 || signal?.aborted || this.#closing) return Promise.resolve(current);
    return this.#waiters.wait(id, seconds, signal, () => this.get(id) ?? current);
  }

  subscribe(listener: (command: Command) => void): () => void {
    return this.#listeners.add(listener);
  }

  subscribeQueued(listener: (queued: Queued) => void): () => void {
    return this.#queued.add(listener);
  }

  audit(entry: AuditEntry): void {
    // Nobody awaits a cue's or a refused login's entry: a store refusing it is logged, never thrown at them.
    this.#store.audits.append(entry).catch((e: unknown) =>
      this.#log.log('error', 'audit_failed', {
        action: entry.action,
        error: (e as Error)?.message ?? String(e),
      }),
    );
  }

  /** Settles once every change queued so far has committed (rejects if its batch failed). For tests. */
  committed(): Promise<void> {
    return this.#commit.barrier();
  }

  /** Number of launches in flight (for shutdown and tests). */
  get running(): number {
    return this.#launches.running;
  }

  /**
   * Answers every caller waiting for a decision at once (contract 17: a clean stop), stops launches and
   * timers, commits what is queued, and lets running children finish for up to `graceMs`. Idempotent.
   */
  async close(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#waiters.stop();
    this.#fleet.close();
    this.#grants.close();
    this.#expiry.close();
    // The daemon closes the store once this returns: what this turn queued commits first.
    await this.#commit.flush();
    await this.#launches.drain(graceMs);
    await this.#commit.flush();
  }

  // ---- the parts, built once by the constructor --------------------------------------------------

  /** One transaction per event-loop turn (group-commit.ts); a failed batch rolls the working views back. */
  #groupCommit(deps: BrokerDeps): GroupCommit {
    return new GroupCommit({
      transaction: (fn) => this.#store.transaction(fn),
      committed: () => {
        this.#views.saved();
        this.#grants.saved();
      },
      rollback: (e) => this.#rollback(e),
      onError: (e) =>
        this.#log.log('error', 'after_commit_failed', { error: (e as Error)?.message ?? String(e) }),
      ...(deps.commitSchedule === undefined ? {} : { schedule: deps.commitSchedule }),
    });
  }

  /** Rule 6 lanes and rule 3's committed `running` before a spawn (launches.ts); changes through `#apply`. */
  #launchesOf(deps: BrokerDeps): Launches {
    return new Launches({
      executors: deps.executors,
      laneKey: (c) => this.#kinds.laneKey(c),
      clock: this.#clock,
      log: this.#log,
      faults: deps.faults ?? noFaults,
      reviewMs: deps.reviewTimeoutS * 1000,
      host: {
        active: (id) => this.#views.active(id),
        apply: (c, event) => this.#apply(c, event, DAEMON).then((r) => r.ok),
        secret: (id) => this.#secrets.get(id),
        closing: () => this.#closing,
        hold: (work) => this.#commit.hold(work, LAUNCH_HOLD_MS),
      },
    });
  }

  /** The grants in memory (grant-book.ts), their changes queued on the group commit. */
  #grantBook(deps: BrokerDeps): GrantBook {
    return new GrantBook({
      store: this.#store,
      clock: this.#clock,
      log: this.#log,
      policy: this.#commandPolicy,
      passkey: deps.passkeyRequired ?? (() => false),
      kindRefusal: (command: string) => this.#kinds.refusal(command),
      rules: this.#rules,
      commit: (change: Change) => this.#commit.add(change),
      emit: (g: Grant) => this.#grantListeners.emit(g),
      ...(deps.node === undefined ? {} : { node: deps.node }),
      shared: deps.shared === true,
      ...(deps.randomGrantId === undefined ? {} : { randomId: deps.randomGrantId }),
    });
  }

  /** Contract 16: this broker among the nodes of one database (fleet.ts). */
  #fleetOf(deps: BrokerDeps): Fleet {
    return new Fleet({
      store: this.#store,
      log: this.#log,
      node: deps.node,
      shared: deps.shared === true,
      views: this.#views,
      grants: this.#grants,
      expiry: this.#expiry,
      launches: this.#launches,
      secrets: this.#secrets,
      emit: (c) => this.#emit(c),
      closing: () => this.#closing,
    });
  }

  /** The submit path (submit-actions.ts): intake.ts decides, it applies. */
  #submitsOf(deps: BrokerDeps): SubmitActions {
    return new SubmitActions({
      ...deps, // kinds, randomId and the PENDING caps as the daemon gave them
      rules: this.#rules,
      store: this.#store,
      clock: this.#clock,
      log: this.#log,
      policy: this.#commandPolicy,
      passkey: deps.passkeyRequired ?? (() => false),
      views: this.#views,
      grants: this.#grants,
      expiry: this.#expiry,
      secrets: this.#secrets,
      reviewMs: deps.reviewTimeoutS * 1000,
      commit: (change) => this.#commit.add(change),
      settled: (answer) => this.#settled(answer),
      get: (id) => this.get(id),
      emit: (c) => this.#emit(c),
      queued: (q) => this.#queued.emit(q),
      launch: (c) => this.#launches.schedule(c),
    });
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** The command as the working view has it: changed by this turn or not. */
  #current(id: string): Command | undefined {
    return this.#views.working(id) ?? this.#store.committedReads.command(id);
  }

  /** An answer that queued nothing (a refusal, a twin) may reflect this turn: given after its commit. */
  #settled<T>(answer: () => T): Promise<T> {
    return this.#commit.barrier().then(answer);
  }

  /**
   * A batch failed and nothing of it is stored: the working view goes back to the committed one (commands,
   * caps, grants' uses). An expiry that fired while its command was changed by the failed batch is armed again.
   */
  #rollback(error: unknown): void {
    this.#views.rollback();
    // A secret handed in by a submit the batch lost belongs to no command.
    for (const id of [...this.#secrets.keys()]) if (!this.#views.active(id)) this.#secrets.delete(id);
    this.#grants.rollback();
    this.#expiry.rearm(this.#views.actives());
    this.#log.log('error', 'commit_rolled_back', { error: (error as Error)?.message ?? String(error) });
  }

  /**
   * transition → the working view at once → queued on the group commit → after the commit: the committed
   * view, timers, the log line, one event. Rejections carry their code; nothing changes.
   */
  #apply(c: Command, event: Event, actor: Actor, also: Also = {}): Promise<ActionResult> {
    const r = transition(c, event);
    if (!r.ok) {
      const code = r.code === 'NotReconcilable' || r.code === 'AlreadyApproved' ? r.code : 'AlreadyDecided';
      return this.#settled(() => ({ ok: false, code, message: r.message }));
    }
    const next = r.command;
    const action = event.type === 'amend' ? event.action : event.type;
    const audit = auditOf(next, action, actor, iso(this.#clock.now()), event);
    // An amend keeps the version (transition.ts): the store replaces the row at that version.
    const save = next.version === c.version ? 'amend' : 'update';
    this.#views.changed(next);
    also.apply?.();
    const change: Change = {
      write: () => allOf(this.#store.commands[save](next, audit), also.write?.()),
      after: () => {
        this.#views.show(next);
        if (isFinal(next)) this.#secrets.delete(next.id);
        if (next.phase.state !== 'awaiting_review') this.#expiry.cancel(next.id);
        // Contract 20: back to awaiting review (the file changed before launch): its new deadline applies.
        else if (c.phase.state !== 'awaiting_review') this.#expiry.arm(next);
        logChange(this.#log, next, actor);
        this.#emit(next);
        also.after?.(next);
      },
    };
    const done = this.#commit.add(change).then(() => ({ ok: true as const, command: next }));
    // Contract 16: another node's command is launched by that node, once it hears of the approval.
    if (next.phase.state === 'approved' && this.#fleet.own(next)) this.#launches.schedule(next);
    return done;
  }

  /** One committed change to waiters and listeners, from a batch's `after`s (so in commit order). */
  #emit(c: Command): void {
    if (isFinal(c)) this.#waiters.release(c.id);
    this.#listeners.emit(c);
  }
}
