/**
 * The queue: the only writer of command state (architecture.md). Every change is `transition()` from
 * lifecycle.ts, queued on the group commit (commit.ts): the changes of one event-loop turn are written in
 * one SQLite transaction, then each goes out as one event to every subscriber, in commit order, and only
 * then are its callers answered (architecture.md example 3: batched, never skipped; nobody hears of a
 * change before its commit). How an approved command runs is an Executor's business; the launch path
 * (launches.ts) orders launches (per-session FIFO, rule 6), awaits the commit of `running` before the
 * executor spawns (rule 3), and records the one outcome the executor reports. An approval starts its
 * launch in its own turn, so with a free lane `running` shares the approval's transaction (#launchNow).
 *
 * Two views of memory. The working view (`#active`, the caps, the grants' uses) changes at once, so a later
 * request of the same turn sees it (a grant with 3 uses approves 3 of 50 requests arriving together). What
 * edges read (`get`, `snapshot`, `wait`, `liveGrants`) is the committed view (`#committed`, the store). If a
 * batch fails, the working view is put back from the committed one and every caller gets the error.
 */
import { nanoid } from 'nanoid';
import { type Clock, iso, systemClock } from '../clock.js';
import type {
  ActionResult,
  ApproveGrant,
  BrokerApi,
  GrantResult,
  GrantSpec,
  SubmitRequest,
  SubmitResult,
} from '../context.js';
import { type Logger, silentLogger } from '../log.js';
import { type Change, GroupCommit } from './commit.js';
import { sha256Digest } from './digest.js';
import type { Executor } from './executor.js';
import { type CommandPolicy, type ConfigGrant, GrantBook } from './grant-book.js';
import { end, type Grant, use } from './grants.js';
import type { KindPolicies } from './kind-policy.js';
import { Launches } from './launches.js';
import { type Actor, type Command, type Event, isFinal, type State, transition } from './lifecycle.js';
import { argsAsPruned } from './retention.js';
import type { AuditEntry, Store } from './store.js';

export interface BrokerDeps {
  store: Store;
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
}

/** How long `close()` lets running children finish before it returns (issue 2: up to 10 s). */
export const SHUTDOWN_GRACE_MS = 10_000;

const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };

function sameRequest(kinds: KindPolicies, c: Command, r: SubmitRequest): boolean {
  return (
    c.tool === r.tool &&
    c.command === r.command &&
    // A pruned command's large arguments are markers with their hash (retention.ts): compare those.
    JSON.stringify(c.args) === JSON.stringify(argsAsPruned(r.args, c, sha256Digest)) &&
    (c.justification ?? null) === (r.justification ?? null) &&
    kinds.sameFields(c, r)
  );
}

/** What a command change carries besides its own row: applied, written and announced with it. */
interface Also {
  /** Working memory, at once (a grant made live). */
  apply?(): void;
  /** Store writes in the same transaction. */
  write?(): void;
  /** After the commit, after the command's own event (a launch, a grant's event). */
  after?(next: Command): void;
}

const requestKey = (client: string, requestId: string) => `${client}\n${requestId}`;

export class Broker implements BrokerApi {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #randomId: () => string;
  readonly #reviewMs: number;
  readonly #maxPerClient: number;
  readonly #maxPending: number;
  /**
   * The working view: every non-final command as of the last change, committed or not, in creation order.
   * Decisions read it; its size is the PENDING count the caps bound.
   */
  #active = new Map<string, Command>();
  /** The committed view: every non-final command as of the last commit, in creation order. Edges read it. */
  readonly #committed = new Map<string, Command>();
  /** Commands the pending batch changed (finals too), at their latest version: not in the store yet. */
  readonly #unsaved = new Map<string, Command>();
  /** Commands the pending batch created, by client and request_id (the store has them after the commit). */
  readonly #unsavedRequests = new Map<string, Command>();
  /** PENDING commands by client, kept with #active (contract 1.3's per-client cap). */
  readonly #pendingByClient = new Map<string, number>();
  /** Clients (and `*` for the broker-wide cap) refused since their last accepted submit: logged once. */
  readonly #capped = new Set<string>();
  /** Session secrets, in memory only (rule 4). */
  readonly #secrets = new Map<string, unknown>();
  readonly #timers = new Map<string, { cancel(): void }>();
  /** The launch/outcome path (launches.ts): lanes, `running` before the spawn, the one outcome. */
  readonly #launches: Launches;
  readonly #listeners = new Set<(c: Command) => void>();
  readonly #grantListeners = new Set<(g: Grant) => void>();
  readonly #grants: GrantBook;
  readonly #commit: GroupCommit;
  /** `wait()` callers by command id, released when it turns final (or on their deadline). */
  readonly #waiters = new Map<string, Set<() => void>>();
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
    this.#commit = new GroupCommit({
      transaction: (fn) => this.#store.transaction(fn),
      committed: () => {
        this.#unsaved.clear();
        this.#unsavedRequests.clear();
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
      host: {
        active: (id) => this.#active.get(id),
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
      emit: (g: Grant) => {
        for (const l of [...this.#grantListeners]) this.#call(l, g);
      },
    };
    this.#grants = new GrantBook(
      deps.randomGrantId === undefined ? grantDeps : { ...grantDeps, randomId: deps.randomGrantId },
    );
  }

  /**
   * Recovery (rules 3 and 4), then timers and launches rebuilt from the store: running → unknown;
   * cues awaiting review or approved → secret not retained; other approved commands launch now (they
   * never ran); other pending commands keep their original deadline. Written at once, not batched: start
   * is synchronous, and a store that refuses the write must stop the start (daemon.ts says so in one line).
   */
  start(): void {
    if (this.#started) throw new Error('Broker.start() called twice');
    this.#started = true;
    const at = iso(this.#clock.now());
    const recovered: Array<{ next: Command; audit: AuditEntry }> = [];
    const survivors: Command[] = [];
    for (const c of this.#store.active()) {
      const r = transition(c, { type: 'restart', at, carriesSecret: this.#kinds.of(c.tool).carriesSecret });
      if (r.ok) recovered.push({ next: r.command, audit: this.#auditOf(r.command, 'restart', DAEMON) });
      else survivors.push(c);
    }
    if (recovered.length > 0) this.#store.updateMany(recovered);
    for (const { next } of recovered) this.#logChange(next, DAEMON);
    // Older restarts' orphans count too, in case the daemon died again within the window.
    this.#launches.holdForOrphans(this.#store.recentFinal(200));
    for (const c of survivors) {
      this.#track(c);
      this.#committed.set(c.id, c);
      if (c.phase.state === 'awaiting_review') this.#armExpiry(c);
    }
    for (const c of survivors) if (c.phase.state === 'approved') this.#launches.schedule(c);
    this.#grants.load(this.#configGrants);
  }

  submit(req: SubmitRequest): Promise<SubmitResult> {
    if (req.request_id !== undefined) {
      const existing =
        this.#unsavedRequests.get(requestKey(req.client, req.request_id)) ??
        this.#store.byRequest(req.client, req.request_id);
      if (existing) {
        if (sameRequest(this.#kinds, existing, req)) {
          return this.#settled(() => ({
            ok: true,
            command: this.get(existing.id) ?? existing,
            created: false,
          }));
        }
        const refused: SubmitResult = {
          ok: false,
          code: 'RequestIdReused',
          message: `request_id ${req.request_id} was already used by this client for different arguments (pending_id ${existing.id}); use a new request_id`,
        };
        return this.#settled(() => refused);
      }
    }
    const kind = this.#kinds.of(req.tool);
    if (kind.twinRule) {
      // The twin rule (contracts 3.1, 7): an identical cue or upstream call still PENDING is returned
      // instead of queued again (a model that resends must not make the owner approve twice).
      for (const c of this.#active.values()) {
        if (c.tool === req.tool && c.client === req.client && sameRequest(this.#kinds, c, req)) {
          return this.#settled(() => ({ ok: true, command: this.get(c.id) ?? c, created: false }));
        }
      }
    }
    // Contract 1.3/3.2 (v2): after the request_id and twin rules (a repeat is not a new command), and in
    // the same synchronous step as the insert below, so no interleaving of requests (a JSON-RPC batch,
    // parallel POSTs, many sessions) can pass a cap.
    const refused = this.#overCap(req.client);
    if (refused !== undefined) return this.#settled(() => refused);
    const now = this.#clock.now();
    const command: Command = {
      id: this.#randomId(),
      version: 1,
      tool: req.tool,
      command: req.command,
      args: req.args,
      display: req.display,
      client: req.client,
      created_at: iso(now),
      review_expires_at: iso(now + this.#reviewMs),
      phase: { state: 'awaiting_review' },
      ...this.#kinds.fields(req),
    };
    if (req.justification !== undefined) command.justification = req.justification;
    if (req.request_id !== undefined) command.request_id = req.request_id;
    if (req.task !== undefined) command.task = req.task;
    // Contract 9: fixed at submit from the config of the day, so a later config change never alters what a
    // waiting command needs.
    const needed = this.#commandPolicy(req.command)?.approvals ?? 1;
    if (needed > 1 && kind.quorum) {
      command.approvals_needed = needed;
      command.approvals = [];
    }
    const actor: Actor = { kind: 'client', name: req.client };
    // Contract 8: after validation and the request_id/twin rules, the oldest live grant that matches approves
    // the command in the transaction that creates it and takes its use. A policy approval (contract 7
    // trust_read_only_hint) is made the same way. Owners see only the approved version.
    // Rule 1 (v2): a command needing several owners is approved by them only — no grant, no policy.
    const grant = command.approvals_needed === undefined ? this.#grantFor(req) : undefined;
    const by =
      grant !== undefined
        ? `grant:${grant.id}`
        : command.approvals_needed === undefined
          ? req.approved_by
          : undefined;
    const submitted = this.#auditOf(command, 'submit', actor);
    let shown = command;
    let approved: AuditEntry | undefined;
    let writeUse: (() => void) | undefined;
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
    this.#track(shown);
    this.#unsaved.set(shown.id, shown);
    if (req.request_id !== undefined)
      this.#unsavedRequests.set(requestKey(req.client, req.request_id), shown);
    if (used !== undefined) this.#grants.take(used);
    this.#capped.delete(req.client);
    this.#capped.delete('*');
    const change: Change = {
      write: () => {
        // Approved at submit (a grant, a policy): the row is written once, at the version owners see; the
        // audit log still has both steps (submit v1, approve v2), in the same transaction.
        this.#store.insert(shown, submitted);
        if (approved !== undefined) this.#store.audit(approved);
        writeUse?.();
      },
      after: () => {
        this.#committed.set(shown.id, shown);
        if (shown.phase.state === 'awaiting_review') this.#armExpiry(shown);
        this.#logChange(command, actor);
        if (shown !== command) this.#logChange(shown, { kind: 'daemon', name: by! });
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

  /** The grant that approves this request at submit, if any: never one of a kind that cannot be granted (contract 8). */
  #grantFor(req: SubmitRequest): Grant | undefined {
    if (this.#kinds.of(req.tool).grantRefusal !== undefined || req.approved_by !== undefined)
      return undefined;
    return this.#grants.match({ command: req.command, client: req.client, args: req.args });
  }

  approve(id: string, version: number, by: string, grant?: ApproveGrant): Promise<ActionResult> {
    const event: Event = { type: 'approve', at: iso(this.#clock.now()), by };
    // Contract 9: an approval short of the quorum is recorded and the command keeps waiting; the one that
    // makes it `approved` launches it (#apply).
    if (grant === undefined) return this.#decide(id, version, event, by);
    // Contract 5 (v2): approve and create the grant in one transaction; a command that cannot be granted
    // is NotGrantable and nothing is approved. The approval that creates a grant takes none of its uses.
    const c = this.#current(id);
    const refused = c === undefined ? undefined : this.#grantRefusal(c);
    if (c !== undefined && refused !== undefined && c.phase.state === 'awaiting_review') {
      return this.#settled(() => ({ ok: false, code: 'NotGrantable', message: refused }));
    }
    const spec: GrantSpec = { command: c?.command ?? '', client: c?.client ?? '', ttl_s: grant.ttl_s };
    if (grant.same_args && c !== undefined) spec.args = c.args;
    if (grant.uses !== undefined) spec.uses = grant.uses;
    if (grant.note !== undefined) spec.note = grant.note;
    const made = this.#grants.create(spec, by);
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
    if (g === undefined)
      return this.#settled(() => ({ ok: false, code: 'NotFound', message: `no grant ${id}` }));
    if (g.source === 'config') {
      return this.#settled(() => ({
        ok: false,
        code: 'NotRevocable',
        message: `grant ${id} comes from the config file; remove its entry from "grants" there and restart`,
      }));
    }
    if (g.state !== 'live') return this.#settled(() => ({ ok: true, grant: g }));
    const ended = end(g, 'revoked', iso(this.#clock.now()));
    return this.#grants
      .change(ended, 'grant_revoked', { kind: 'owner', name: by })
      .then(() => ({ ok: true, grant: ended }));
  }

  liveGrants(): Grant[] {
    return this.#grants.live();
  }

  recentGrants(limit: number): Grant[] {
    return this.#store.recentGrants(limit);
  }

  subscribeGrants(listener: (grant: Grant) => void): () => void {
    this.#grantListeners.add(listener);
    return () => this.#grantListeners.delete(listener);
  }

  /** Why this command cannot be granted (contract 8), or undefined. */
  #grantRefusal(c: Command): string | undefined {
    const never = this.#kinds.of(c.tool).grantRefusal;
    if (never !== undefined) return never;
    if (c.approvals_needed !== undefined) {
      return `${c.command} needs ${c.approvals_needed} owners to approve each call, so it cannot be granted`;
    }
    return this.#grants.refusal(c.command);
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
    return this.#committed.get(id) ?? this.#store.get(id);
  }

  wait(id: string, seconds: number, signal?: AbortSignal): Promise<Command> {
    const current = this.get(id);
    if (!current) return Promise.reject(new Error(`no command ${id}`));
    if (isFinal(current) || seconds <= 0 || signal?.aborted || this.#closing) return Promise.resolve(current);
    return new Promise((resolve) => {
      const finish = () => {
        timer.cancel();
        signal?.removeEventListener('abort', finish);
        const set = this.#waiters.get(id);
        set?.delete(finish);
        if (set?.size === 0) this.#waiters.delete(id);
        resolve(this.get(id) ?? current);
      };
      const set = this.#waiters.get(id) ?? new Set();
      set.add(finish);
      this.#waiters.set(id, set);
      const timer = this.#clock.setTimeout(finish, seconds * 1000);
      signal?.addEventListener('abort', finish, { once: true });
    });
  }

  subscribe(listener: (command: Command) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  snapshot(finalLimit = 200): Command[] {
    return [...this.#committed.values()].reverse().concat(this.#store.recentFinal(finalLimit));
  }

  history(limit: number, before?: string): Command[] {
    return this.#store.history(limit, before);
  }

  tasksOf(
    client: string,
    limit: number,
    maxChars: number,
    before?: string,
  ): { commands: Command[]; more: boolean } | undefined {
    return this.#store.tasksOf(client, limit, maxChars, before);
  }

  counts(): Partial<Record<State, number>> {
    return this.#store.counts();
  }

  audit(entry: AuditEntry): void {
    this.#store.audit(entry);
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
    for (const t of this.#timers.values()) t.cancel();
    this.#timers.clear();
    // The daemon closes the store once this returns: what this turn queued commits first.
    this.#commit.flush();
    await this.#launches.drain(graceMs);
    this.#commit.flush();
    for (const set of [...this.#waiters.values()]) for (const f of [...set]) f();
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** The command as the working view has it: changed by this turn or not. */
  #current(id: string): Command | undefined {
    return this.#active.get(id) ?? this.#unsaved.get(id) ?? this.#store.get(id);
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
    this.#active = new Map(this.#committed);
    this.#pendingByClient.clear();
    for (const c of this.#active.values()) {
      this.#pendingByClient.set(c.client, (this.#pendingByClient.get(c.client) ?? 0) + 1);
    }
    this.#unsaved.clear();
    this.#unsavedRequests.clear();
    // A secret handed in by a submit the batch lost belongs to no command.
    for (const id of [...this.#secrets.keys()]) if (!this.#active.has(id)) this.#secrets.delete(id);
    this.#grants.rollback();
    for (const c of this.#active.values()) {
      if (c.phase.state === 'awaiting_review' && !this.#timers.has(c.id)) this.#armExpiryRetry(c);
    }
    this.#log.log('error', 'commit_rolled_back', { error: (error as Error)?.message ?? String(error) });
  }

  /** The TooManyPending refusal when `client` may not queue one more command now, else undefined. */
  #overCap(client: string): SubmitResult | undefined {
    const mine = this.#pendingByClient.get(client) ?? 0;
    let message: string | undefined;
    let key = client;
    if (mine >= this.#maxPerClient) {
      message = `max_pending_per_client is ${this.#maxPerClient} and this client already has ${mine} PENDING commands, so nothing was queued; wait for your pending commands to be decided (await_command_result) before queueing more`;
    } else if (this.#active.size >= this.#maxPending) {
      key = '*';
      message = `max_pending is ${this.#maxPending} and all clients together already have ${this.#active.size} PENDING commands, so nothing was queued; wait for pending commands (yours: ${mine}) to be decided (await_command_result) before queueing more`;
    }
    if (message === undefined) return undefined;
    // One log line when a cap starts refusing, not one per refusal: a flood must not flood the log too.
    if (!this.#capped.has(key)) {
      this.#capped.add(key);
      this.#log.log('warn', 'pending_cap_reached', {
        client,
        cap: key === '*' ? 'max_pending' : 'max_pending_per_client',
        limit: key === '*' ? this.#maxPending : this.#maxPerClient,
      });
    }
    return { ok: false, code: 'TooManyPending', message };
  }

  #track(c: Command): void {
    if (!this.#active.has(c.id)) {
      this.#pendingByClient.set(c.client, (this.#pendingByClient.get(c.client) ?? 0) + 1);
    }
    this.#active.set(c.id, c);
  }

  #untrack(c: Command): void {
    if (!this.#active.delete(c.id)) return;
    const n = (this.#pendingByClient.get(c.client) ?? 1) - 1;
    if (n > 0) this.#pendingByClient.set(c.client, n);
    else this.#pendingByClient.delete(c.client);
  }

  /** An owner's decision: the checks of contracts 5 and 9, then the change. */
  #decide(id: string, version: number, event: Event, by: string, also?: Also): Promise<ActionResult> {
    const c = this.#current(id);
    if (!c) return this.#settled(() => ({ ok: false, code: 'NotFound', message: `no command ${id}` }));
    // Contract 5: AlreadyDecided is checked first, then the version.
    if (c.phase.state !== 'awaiting_review') {
      const state = c.phase.state;
      return this.#settled(() => ({
        ok: false,
        code: 'AlreadyDecided',
        message: `command ${id} was already decided: it is ${state}`,
      }));
    }
    // Contract 9: a repeat approval by the same owner is AlreadyApproved, checked before the version.
    if (event.type === 'approve' && c.approvals?.some((a) => a.by === by)) {
      const left = c.approvals_needed! - c.approvals.length;
      return this.#settled(() => ({
        ok: false,
        code: 'AlreadyApproved',
        message: `you (${by}) already approved command ${id}; it waits for ${left} more owner approval${left === 1 ? '' : 's'}`,
      }));
    }
    if (version !== c.version) {
      const at = c.version;
      return this.#settled(() => ({
        ok: false,
        code: 'VersionConflict',
        message: `command ${id} is at version ${at}, not ${version}; look at it again before deciding`,
      }));
    }
    return this.#apply(c, event, { kind: 'owner', name: by }, also);
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
    if (isFinal(next)) this.#untrack(next);
    else this.#track(next);
    this.#unsaved.set(next.id, next);
    also.apply?.();
    const change: Change = {
      write: () => {
        this.#store.update(next, audit);
        also.write?.();
      },
      after: () => {
        if (isFinal(next)) {
          this.#committed.delete(next.id);
          this.#secrets.delete(next.id);
        } else {
          this.#committed.set(next.id, next);
        }
        if (next.phase.state !== 'awaiting_review') {
          this.#timers.get(next.id)?.cancel();
          this.#timers.delete(next.id);
        }
        this.#logChange(next, actor);
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
    const detail: Record<string, unknown> = { state: c.phase.state, command: c.command };
    if ('reason' in c.phase) detail.reason = c.phase.reason;
    if (event && 'note' in event && event.note !== undefined) detail.note = event.note;
    if (event?.type === 'reconcile') detail.outcome = event.outcome;
    if (event?.type === 'prune' && c.pruned !== undefined) detail.pruned = c.pruned.fields;
    return { at: iso(this.#clock.now()), actor, action, command_id: c.id, version: c.version, detail };
  }

  #logChange(c: Command, actor: Actor): void {
    const fields: Record<string, unknown> = {
      id: c.id,
      version: c.version,
      command: c.command,
      client: c.client,
      state: c.phase.state,
      actor: `${actor.kind}:${actor.name}`,
    };
    if ('reason' in c.phase) fields.reason = c.phase.reason;
    this.#log.log('info', 'command', fields);
  }

  /**
   * One committed change to its waiters and listeners. Called only from a batch's `after`s, in queue order,
   * so events go out in commit order; a change a listener makes goes into the next batch.
   */
  #emit(c: Command): void {
    if (isFinal(c)) for (const f of [...(this.#waiters.get(c.id) ?? [])]) f();
    for (const l of [...this.#listeners]) this.#call(l, c);
  }

  #call<T>(listener: (value: T) => void, value: T): void {
    try {
      listener(value);
    } catch (e) {
      this.#log.log('error', 'listener_failed', { error: (e as Error).message });
    }
  }

  #armExpiry(c: Command): void {
    if (this.#closing) return;
    this.#timers.get(c.id)?.cancel();
    const ms = Date.parse(c.review_expires_at) - this.#clock.now();
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(c.id);
      const current = this.#active.get(c.id);
      if (!current || this.#closing || current.phase.state !== 'awaiting_review') return;
      // The store refused the write (read-only, disk full): the rollback arms a retry shortly rather than
      // lose the expiry.
      this.#apply(current, { type: 'expire', at: iso(this.#clock.now()) }, DAEMON).catch((e: unknown) =>
        this.#log.log('error', 'commit_failed', { id: c.id, error: (e as Error).message }),
      );
    }, ms);
    this.#timers.set(c.id, timer);
  }

  #armExpiryRetry(c: Command): void {
    if (this.#closing) return;
    this.#timers.get(c.id)?.cancel();
    this.#timers.set(
      c.id,
      this.#clock.setTimeout(() => {
        this.#timers.delete(c.id);
        const current = this.#active.get(c.id);
        if (current && !this.#closing) this.#armExpiry(current);
      }, 1000),
    );
  }
}
