/**
 * The queue: the only writer of command state (architecture.md). It decides nothing alone: what becomes of
 * a submit is intake.ts's tagged result, an owner's decision is checked by decisions.ts, every change is
 * `transition()` (transition.ts); the broker applies what they return. Each change is queued on the group commit (commit.ts): the changes of one event-loop turn are written in
 * one SQLite transaction, then each goes out as one event to every subscriber, in commit order, and only
 * then are its callers answered (architecture.md example 3: batched, never skipped; nobody hears of a
 * change before its commit). How an approved command runs is an Executor's business; the launch path
 * (launches.ts) orders launches (per-session FIFO, rule 6), awaits the commit of `running` before the
 * executor spawns (rule 3), and records the one outcome the executor reports. An approval starts its
 * launch in its own turn, so with a free lane `running` shares the approval's transaction (#launchNow).
 *
 * Two views of memory (views.ts; grant-book.ts for grants). The working view (active commands, the caps,
 * the grants' uses) changes at once, so a later request of the same turn sees it (a grant with 3 uses
 * approves 3 of 50 requests arriving together). What edges read (`get`, `snapshot`, `wait`, `liveGrants`)
 * is the committed view (and the store). If a batch fails, the working view is put back from the committed
 * one and every caller gets the error. Review deadlines are expiry.ts's timers, `wait()` callers
 * waiters.ts's, subscribers listeners.ts's.
 */
import { nanoid } from 'nanoid';
import { type Clock, iso, type Logger, silentLogger, systemClock } from '../base/index.js';
import type {
  ActionResult,
  ApproveGrant,
  BrokerApi,
  GrantResult,
  GrantSpec,
  SubmitRequest,
  SubmitResult,
} from './api.js';
import { allOf, type Change, GroupCommit } from './commit.js';
import { decisionRefusal, grantRefusal, grantSpecOf, revokeAnswer } from './decisions.js';
import { sha256Digest } from './digest.js';
import type { Executor } from './executor.js';
import { Expiry } from './expiry.js';
import { type Faults, noFaults } from './fault.js';
import { type CommandPolicy, type ConfigGrant, GrantBook } from './grant-book.js';
import { end, type Grant, use } from './grants.js';
import { commandOf, intake } from './intake.js';
import type { KindPolicies } from './kind-policy.js';
import { Launches } from './launches.js';
import { type Actor, type Command, type Event, isFinal, type State } from './lifecycle.js';
import { Listeners } from './listeners.js';
import type { AuditEntry, Awaitable, StorePorts } from './ports.js';
import { auditOf, logChange } from './records.js';
import { transition } from './transition.js';
import { Views } from './views.js';
import { Waiters } from './waiters.js';

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
  /** Contract 8: the config's grants, made live at start under their stable ids. */
  configGrants?: readonly ConfigGrant[];
  clock?: Clock;
  log?: Logger;
  randomId?: () => string;
  randomGrantId?: () => string;
  /** When a batch of changes is committed (commit.ts; default: setImmediate, the end of the turn). */
  commitSchedule?: (run: () => void) => void;
  /** Test-only crash points on the launch path (fault.ts; default: none). */
  faults?: Faults;
}

/** How long `close()` lets running children finish before it returns (issue 2: up to 10 s). */
export const SHUTDOWN_GRACE_MS = 10_000;

const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };

/** What a command change carries besides its own row: applied, written and announced with it. */
interface Also {
  /** Working memory, at once (a grant made live). */
  apply?(): void;
  /** Store writes in the same transaction. */
  write?(): Awaitable<void>;
  /** After the commit, after the command's own event (a launch, a grant's event). */
  after?(next: Command): void;
}

export class Broker implements BrokerApi {
  readonly #store: StorePorts;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #randomId: () => string;
  readonly #reviewMs: number;
  readonly #maxPerClient: number;
  readonly #maxPending: number;
  /** The working and the committed view of non-final commands (views.ts). */
  readonly #views = new Views();
  /** Clients (and `*` for the broker-wide cap) refused since their last accepted submit: logged once. */
  readonly #capped = new Set<string>();
  /** Session secrets, in memory only (rule 4). */
  readonly #secrets = new Map<string, unknown>();
  /** Review deadlines (expiry.ts). */
  readonly #expiry: Expiry;
  /** The launch/outcome path (launches.ts): lanes, `running` before the spawn, the one outcome. */
  readonly #launches: Launches;
  readonly #listeners: Listeners<Command>;
  readonly #grantListeners: Listeners<Grant>;
  readonly #grants: GrantBook;
  readonly #commit: GroupCommit;
  /** `wait()` callers (waiters.ts), released when their command turns final (or on their deadline). */
  readonly #waiters: Waiters;
  readonly #configGrants: readonly ConfigGrant[];
  readonly #commandPolicy: CommandPolicy;
  readonly #kinds: KindPolicies;
  #started = false;
  #closing = false;

  constructor(deps: BrokerDeps) {
    this.#store = deps.store;
    this.#clock = deps.clock ?? systemClock;
    this.#log = deps.log ?? silentLogger;
    this.#randomId = deps.randomId ?? (() => `c_${nanoid(21)}`);
    this.#reviewMs = deps.reviewTimeoutS * 1000;
    this.#kinds = deps.kinds;
    this.#waiters = new Waiters(this.#clock);
    this.#listeners = new Listeners(this.#log);
    this.#grantListeners = new Listeners(this.#log);
    this.#expiry = new Expiry({
      clock: this.#clock,
      log: this.#log,
      active: (id) => this.#views.active(id),
      expire: (current, at) => this.#apply(current, { type: 'expire', at }, DAEMON),
    });
    this.#commit = new GroupCommit({
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
    this.#launches = new Launches({
      executors: deps.executors,
      laneKey: (c) => this.#kinds.laneKey(c),
      clock: this.#clock,
      log: this.#log,
      faults: deps.faults ?? noFaults,
      host: {
        active: (id) => this.#views.active(id),
        apply: (c, event) => this.#apply(c, event, DAEMON).then((r) => r.ok),
        secret: (id) => this.#secrets.get(id),
        closing: () => this.#closing,
      },
    });
    this.#maxPerClient = deps.maxPendingPerClient ?? 100;
    this.#maxPending = deps.maxPending ?? 2000;
    this.#configGrants = deps.configGrants ?? [];
    this.#commandPolicy = deps.commandPolicy ?? (() => undefined);
    const grantDeps = {
      store: this.#store,
      clock: this.#clock,
      log: this.#log,
      policy: this.#commandPolicy,
      kindRefusal: (command: string) => this.#kinds.refusal(command),
      commit: (change: Change) => this.#commit.add(change),
      emit: (g: Grant) => this.#grantListeners.emit(g),
    };
    this.#grants = new GrantBook(
      deps.randomGrantId === undefined ? grantDeps : { ...grantDeps, randomId: deps.randomGrantId },
    );
  }

  /**
   * Recovery (rules 3 and 4), then timers and launches rebuilt from the store: running → unknown;
   * cues awaiting review or approved → secret not retained; other approved commands launch now (they
   * never ran); other pending commands keep their original deadline. Written at once, not batched: the
   * memory is rebuilt in this call (a request right after it sees it), and the returned Promise rejects when
   * the store refused a write, which must stop the start (daemon.ts says so in one line).
   */
  start(): Promise<void> {
    if (this.#started) throw new Error('Broker.start() called twice');
    this.#started = true;
    const at = iso(this.#clock.now());
    const recovered: Array<{ next: Command; audit: AuditEntry }> = [];
    const survivors: Command[] = [];
    const reads = this.#store.committedReads;
    for (const c of reads.active()) {
      const r = transition(c, { type: 'restart', at, carriesSecret: this.#kinds.of(c.tool).carriesSecret });
      if (r.ok) recovered.push({ next: r.command, audit: this.#auditOf(r.command, 'restart', DAEMON) });
      else survivors.push(c);
    }
    const written = recovered.length > 0 ? this.#store.commands.updateMany(recovered) : undefined;
    for (const { next } of recovered) logChange(this.#log, next, DAEMON);
    // Older restarts' orphans count too, in case the daemon died again within the window.
    this.#launches.holdForOrphans(reads.recentFinal(200));
    for (const c of survivors) {
      this.#views.load(c);
      if (c.phase.state === 'awaiting_review') this.#expiry.arm(c);
    }
    for (const c of survivors) if (c.phase.state === 'approved') this.#launches.schedule(c);
    const loaded = this.#grants.load(this.#configGrants);
    return Promise.all([written, loaded]).then(() => undefined);
  }

  submit(req: SubmitRequest): Promise<SubmitResult> {
    const decided = intake(req, {
      sameRequestId:
        req.request_id === undefined
          ? undefined
          : (this.#views.unsavedRequest(req.client, req.request_id) ??
            this.#store.committedReads.byRequest(req.client, req.request_id)),
      active: this.#views.actives(),
      pendingOfClient: this.#views.pendingOf(req.client),
      pending: this.#views.pending,
      maxPendingPerClient: this.#maxPerClient,
      maxPending: this.#maxPending,
      grants: this.#grants,
      policy: this.#commandPolicy,
      kinds: this.#kinds,
    });
    if (decided.kind === 'existing') {
      const c = decided.command;
      return this.#settled(() => ({ ok: true, command: this.get(c.id) ?? c, created: false }));
    }
    if (decided.kind === 'refused') {
      if (decided.code === 'TooManyPending') this.#capReached(req.client, decided.cap);
      const refused: SubmitResult = { ok: false, code: decided.code, message: decided.message };
      return this.#settled(() => refused);
    }
    const now = this.#clock.now();
    const command = commandOf(
      req,
      this.#randomId(),
      now,
      this.#reviewMs,
      decided.approvalsNeeded,
      this.#kinds,
    );
    const { grant, approvedBy: by } = decided;
    const actor: Actor = { kind: 'client', name: req.client };
    // Approved at submit (intake.ts: a grant, contract 8, or a policy, contract 7): in the transaction that
    // creates it, the grant's use taken with it. Owners see only the approved version.
    const submitted = this.#auditOf(command, 'submit', actor);
    let shown = command;
    let approved: AuditEntry | undefined;
    let writeUse: (() => Awaitable<void>) | undefined;
    let used: Grant | undefined;
    if (by !== undefined) {
      const event: Event = { type: 'approve', at: iso(now), by };
      const r = transition(command, event);
      if (r.ok) {
        shown = r.command;
        approved = this.#auditOf(shown, 'approve', { kind: 'daemon', name: by }, event);
        if (grant !== undefined) {
          used = use(grant, iso(now));
          writeUse = this.#grants.writer(used, 'grant_used', DAEMON, { command_id: command.id });
        }
      }
    }
    // The working view at once: the next request of this turn sees this command and the grant's use.
    this.#views.created(shown);
    if (used !== undefined) this.#grants.take(used);
    this.#capped.delete(req.client);
    this.#capped.delete('*');
    const change: Change = {
      write: () => {
        // Approved at submit (a grant, a policy): the row is written once, at the version owners see; the
        // audit log still has both steps (submit v1, approve v2), in the same transaction.
        return allOf(
          this.#store.commands.insert(shown, submitted),
          approved === undefined ? undefined : this.#store.audits.append(approved),
          writeUse?.(),
        );
      },
      after: () => {
        this.#views.show(shown);
        if (shown.phase.state === 'awaiting_review') this.#expiry.arm(shown);
        logChange(this.#log, command, actor);
        if (shown !== command) logChange(this.#log, shown, { kind: 'daemon', name: by! });
        this.#emit(shown);
        if (used !== undefined) this.#grants.committed(used);
      },
    };
    // In memory at once (rule 4: never stored), so a launch of this turn has it; a rollback drops it.
    if (req.secret !== undefined) this.#secrets.set(command.id, req.secret);
    const done = this.#commit.add(change).then(() => ({ ok: true as const, command: shown, created: true }));
    if (shown.phase.state === 'approved') this.#launchNow(shown);
    return done;
  }

  approve(id: string, version: number, by: string, grant?: ApproveGrant): Promise<ActionResult> {
    const event: Event = { type: 'approve', at: iso(this.#clock.now()), by };
    // Contract 9: an approval short of the quorum is recorded and the command keeps waiting; the one that
    // makes it `approved` launches it (#apply).
    if (grant === undefined) return this.#decide(id, version, event, by);
    // Contract 5 (v2): approve and create the grant in one transaction; a command that cannot be granted
    // is NotGrantable and nothing is approved. The approval that creates a grant takes none of its uses.
    const c = this.#current(id);
    const refused =
      c === undefined ? undefined : grantRefusal(c, this.#kinds, (name) => this.#grants.refusal(name));
    if (c !== undefined && refused !== undefined && c.phase.state === 'awaiting_review') {
      return this.#settled(() => ({ ok: false, code: 'NotGrantable', message: refused }));
    }
    const made = this.#grants.create(grantSpecOf(c, grant), by);
    const r = this.#decide(id, version, event, by, {
      apply: () => this.#grants.take(made),
      write: this.#grants.writer(made, 'grant_created', { kind: 'owner', name: by }, { command_id: id }),
      after: () => this.#grants.committed(made),
    });
    return r.then((done) => (done.ok ? { ok: true, command: done.command, grant: made } : done));
  }

  grant(spec: GrantSpec, by: string): Promise<GrantResult> {
    const refused = this.#grants.refusal(spec.command);
    if (refused !== undefined)
      return this.#settled(() => ({ ok: false, code: 'NotGrantable', message: refused }));
    const made = this.#grants.create(spec, by);
    return this.#grants
      .change(made, 'grant_created', { kind: 'owner', name: by })
      .then(() => ({ ok: true, grant: made }));
  }

  revoke(id: string, by: string): Promise<GrantResult> {
    const g = this.#grants.get(id);
    const answer = revokeAnswer(g, id);
    if (answer !== undefined) return this.#settled(() => answer);
    // No grant is an answer (NotFound): g is there.
    const ended = end(g!, 'revoked', iso(this.#clock.now()));
    return this.#grants
      .change(ended, 'grant_revoked', { kind: 'owner', name: by })
      .then(() => ({ ok: true, grant: ended }));
  }

  liveGrants(): Grant[] {
    return this.#grants.live();
  }

  recentGrants(limit: number): Promise<Grant[]> {
    return this.#store.grants.recent(limit);
  }

  subscribeGrants(listener: (grant: Grant) => void): () => void {
    return this.#grantListeners.add(listener);
  }

  deny(id: string, version: number, by: string, note?: string): Promise<ActionResult> {
    const event: Event = { type: 'deny', at: iso(this.#clock.now()), by };
    if (note !== undefined) event.note = note;
    return this.#decide(id, version, event, by);
  }

  cancel(id: string, by: string): Promise<ActionResult> {
    const c = this.#current(id);
    if (!c) return this.#settled(() => ({ ok: false, code: 'NotFound', message: `no command ${id}` }));
    if (c.phase.state !== 'awaiting_review') {
      return this.#settled(() => ({ ok: true, command: this.get(id) ?? c }));
    }
    return this.#apply(c, { type: 'cancel', at: iso(this.#clock.now()), by }, { kind: 'client', name: by });
  }

  reconcile(
    id: string,
    outcome: 'delivered' | 'not_delivered',
    by: string,
    note?: string,
  ): Promise<ActionResult> {
    const c = this.#current(id);
    if (!c) return this.#settled(() => ({ ok: false, code: 'NotFound', message: `no command ${id}` }));
    const event: Event = { type: 'reconcile', at: iso(this.#clock.now()), by, outcome };
    if (note !== undefined) event.note = note;
    return this.#apply(c, event, { kind: 'owner', name: by });
  }

  /**
   * The retention rule (retention.ts) applied to one final command, as a change of its own: version + 1,
   * an appended `prune` audit entry naming what went, an upsert to owners. `NothingToPrune` is a refusal.
   */
  prune(id: string): Promise<{ ok: boolean }> {
    const c = this.#current(id);
    if (!c) return Promise.resolve({ ok: false });
    return this.#apply(c, { type: 'prune', at: iso(this.#clock.now()), digest: sha256Digest }, DAEMON);
  }

  /** The command as last committed (edges never see a change before its commit). */
  get(id: string): Command | undefined {
    return this.#views.shown(id) ?? this.#store.committedReads.command(id);
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

  snapshot(finalLimit = 200): Command[] {
    return this.#views.shownAll().reverse().concat(this.#store.committedReads.recentFinal(finalLimit));
  }

  history(limit: number, before?: string): Promise<Command[]> {
    return this.#store.commands.history(limit, before);
  }

  tasksOf(
    client: string,
    limit: number,
    maxChars: number,
    before?: string,
  ): Promise<{ commands: Command[]; more: boolean } | undefined> {
    return this.#store.commands.tasksOf(client, limit, maxChars, before);
  }

  counts(): Promise<Partial<Record<State, number>>> {
    return this.#store.commands.counts();
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
   * Stops accepting launches, cancels expiry timers, commits what is queued, lets running children finish
   * for up to `graceMs`, and releases waiters with their current state. Idempotent.
   */
  async close(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#grants.close();
    this.#expiry.close();
    // The daemon closes the store once this returns: what this turn queued commits first.
    await this.#commit.flush();
    await this.#launches.drain(graceMs);
    await this.#commit.flush();
    this.#waiters.releaseAll();
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** The command as the working view has it: changed by this turn or not. */
  #current(id: string): Command | undefined {
    return this.#views.working(id) ?? this.#store.committedReads.command(id);
  }

  /**
   * An answer that queued nothing (a refusal, a twin, an unchanged command) may still reflect a change of
   * this turn: it is given once the pending batch committed, and fails with it.
   */
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

  /** One log line when a cap starts refusing, not one per refusal: a flood must not flood the log too. */
  #capReached(client: string, cap: 'max_pending_per_client' | 'max_pending'): void {
    const key = cap === 'max_pending' ? '*' : client;
    if (this.#capped.has(key)) return;
    this.#capped.add(key);
    this.#log.log('warn', 'pending_cap_reached', {
      client,
      cap,
      limit: cap === 'max_pending' ? this.#maxPending : this.#maxPerClient,
    });
  }

  /** An owner's decision: the checks of contracts 5 and 9 (decisions.ts), then the change. */
  #decide(id: string, version: number, event: Event, by: string, also?: Also): Promise<ActionResult> {
    const c = this.#current(id);
    const refused = decisionRefusal(c, id, version, event, by);
    if (refused !== undefined) return this.#settled(() => refused);
    // No command is a refusal (NotFound): c is there.
    return this.#apply(c!, event, { kind: 'owner', name: by }, also);
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
    const audit = this.#auditOf(next, event.type, actor, event);
    this.#views.changed(next);
    also.apply?.();
    const change: Change = {
      write: () => allOf(this.#store.commands.update(next, audit), also.write?.()),
      after: () => {
        this.#views.show(next);
        if (isFinal(next)) this.#secrets.delete(next.id);
        if (next.phase.state !== 'awaiting_review') this.#expiry.cancel(next.id);
        logChange(this.#log, next, actor);
        this.#emit(next);
        also.after?.(next);
      },
    };
    const done = this.#commit.add(change).then(() => ({ ok: true as const, command: next }));
    if (next.phase.state === 'approved') this.#launchNow(next);
    return done;
  }

  /**
   * Issue 19 finding 6: an approval queued this turn starts its launch at once, after the approval's change
   * is queued. When its lane is free and the executor reaches `markRunning` within the turn (a catalog
   * command, a connected upstream, a cue once its session file is written), `running` joins the
   * approval's batch: one transaction, one fsync, approved at version N and running at N+1, announced in
   * that order. Rule 3 holds because `markRunning` still resolves only after that commit, so nothing is
   * spawned or sent before both are durable; if the batch fails, both roll back and `markRunning` says
   * false (nothing launched, the command awaits review again). A busy lane or a slower executor commits
   * `running` in a later batch, as before.
   */
  #launchNow(c: Command): void {
    this.#launches.schedule(c);
  }

  #auditOf(c: Command, action: string, actor: Actor, event?: Event): AuditEntry {
    return auditOf(c, action, actor, iso(this.#clock.now()), event);
  }

  /**
   * One committed change to its waiters and listeners. Called only from a batch's `after`s, in queue order,
   * so events go out in commit order; a change a listener makes goes into the next batch.
   */
  #emit(c: Command): void {
    if (isFinal(c)) this.#waiters.release(c.id);
    this.#listeners.emit(c);
  }
}
