/**
 * The queue: the only writer of command state (architecture.md). Every change is `transition()` from
 * lifecycle.ts, then one SQLite transaction (row + audit entry), then one event to every subscriber, in
 * commit order. How an approved command runs is an Executor's business; the launch path (launches.ts)
 * orders launches (per-session FIFO, rule 6), commits `running` through the broker before the executor
 * spawns (rule 3), and records the one outcome the executor reports.
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
import type { Executor } from '../executors/executor.js';
import { type Logger, silentLogger } from '../log.js';
import { type CommandPolicy, type ConfigGrant, GrantBook } from './grant-book.js';
import { end, type Grant, use } from './grants.js';
import { Launches } from './launches.js';
import { type Actor, type Command, type Event, isFinal, type State, transition } from './lifecycle.js';
import type { AuditEntry, Store } from './store.js';

export interface BrokerDeps {
  store: Store;
  reviewTimeoutS: number;
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
}

/** One committed change, delivered to listeners in commit order. */
type Change = { command: Command } | { grant: Grant };

/** How long `close()` lets running children finish before it returns (issue 2: up to 10 s). */
export const SHUTDOWN_GRACE_MS = 10_000;

const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };

function sameRequest(c: Command, r: SubmitRequest): boolean {
  return (
    c.tool === r.tool &&
    c.command === r.command &&
    JSON.stringify(c.args) === JSON.stringify(r.args) &&
    (c.justification ?? null) === (r.justification ?? null) &&
    (c.session_key ?? null) === (r.session_key ?? null)
  );
}

export class Broker implements BrokerApi {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #randomId: () => string;
  readonly #reviewMs: number;
  readonly #maxPerClient: number;
  readonly #maxPending: number;
  /** Every non-final command, in creation order. Its size is the PENDING count the caps bound. */
  readonly #active = new Map<string, Command>();
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
  /** `wait()` callers by command id, released when it turns final (or on their deadline). */
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #pendingEvents: Change[] = [];
  #emitting = false;
  #started = false;
  #closing = false;

  constructor(deps: BrokerDeps) {
    this.#store = deps.store;
    this.#clock = deps.clock ?? systemClock;
    this.#log = deps.log ?? silentLogger;
    this.#randomId = deps.randomId ?? (() => `c_${nanoid(21)}`);
    this.#reviewMs = deps.reviewTimeoutS * 1000;
    this.#launches = new Launches({
      executors: deps.executors,
      clock: this.#clock,
      log: this.#log,
      host: {
        active: (id) => this.#active.get(id),
        apply: (c, event) => this.#apply(c, event, DAEMON).ok,
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
      emit: (g: Grant) => this.#emitChange({ grant: g }),
    };
    this.#grants = new GrantBook(
      deps.randomGrantId === undefined ? grantDeps : { ...grantDeps, randomId: deps.randomGrantId },
    );
  }

  readonly #configGrants: readonly ConfigGrant[];
  readonly #commandPolicy: CommandPolicy;

  /**
   * Recovery (rules 3 and 4), then timers and launches rebuilt from the store: running → unknown;
   * cues awaiting review or approved → secret not retained; other approved commands launch now (they
   * never ran); other pending commands keep their original deadline.
   */
  start(): void {
    if (this.#started) throw new Error('Broker.start() called twice');
    this.#started = true;
    const at = iso(this.#clock.now());
    const recovered: Array<{ next: Command; audit: AuditEntry }> = [];
    const survivors: Command[] = [];
    for (const c of this.#store.active()) {
      const r = transition(c, { type: 'restart', at });
      if (r.ok) recovered.push({ next: r.command, audit: this.#auditOf(r.command, 'restart', DAEMON) });
      else survivors.push(c);
    }
    if (recovered.length > 0) this.#store.updateMany(recovered);
    for (const { next } of recovered) this.#logChange(next, DAEMON);
    // Older restarts' orphans count too, in case the daemon died again within the window.
    this.#launches.holdForOrphans(this.#store.recentFinal(200));
    for (const c of survivors) {
      this.#track(c);
      if (c.phase.state === 'awaiting_review') this.#armExpiry(c);
    }
    for (const c of survivors) if (c.phase.state === 'approved') this.#launches.schedule(c);
    this.#grants.load(this.#configGrants);
  }

  submit(req: SubmitRequest): SubmitResult {
    if (req.request_id !== undefined) {
      const existing = this.#store.byRequest(req.client, req.request_id);
      if (existing) {
        if (sameRequest(existing, req)) return { ok: true, command: existing, created: false };
        return {
          ok: false,
          code: 'RequestIdReused',
          message: `request_id ${req.request_id} was already used by this client for different arguments (pending_id ${existing.id}); use a new request_id`,
        };
      }
    }
    if (req.tool === 'ogf_cue' || req.tool === 'upstream') {
      // The twin rule (contracts 3.1, 7): an identical cue or upstream call still PENDING is returned
      // instead of queued again (a model that resends must not make the owner approve twice).
      for (const c of this.#active.values()) {
        if (c.tool === req.tool && c.client === req.client && sameRequest(c, req)) {
          return { ok: true, command: c, created: false };
        }
      }
    }
    // Contract 1.3/3.2 (v2): after the request_id and twin rules (a repeat is not a new command), and in
    // the same synchronous step as the insert below, so no interleaving of requests (a JSON-RPC batch,
    // parallel POSTs, many sessions) can pass a cap.
    const refused = this.#overCap(req.client);
    if (refused !== undefined) return refused;
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
    };
    if (req.session_file !== undefined) command.session_file = req.session_file;
    if (req.session_key !== undefined) command.session_key = req.session_key;
    if (req.session_fingerprint !== undefined) command.session_fingerprint = req.session_fingerprint;
    if (req.justification !== undefined) command.justification = req.justification;
    if (req.request_id !== undefined) command.request_id = req.request_id;
    if (req.task !== undefined) command.task = req.task;
    if (req.upstream !== undefined) command.upstream = req.upstream;
    // Contract 9: fixed at submit from the config of the day, so a later config change never alters what a
    // waiting command needs.
    const needed = this.#commandPolicy(req.command)?.approvals ?? 1;
    if (needed > 1 && req.tool !== 'ogf_cue') {
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
    let shown = command;
    let used: Grant | undefined;
    this.#store.transaction(() => {
      this.#store.insert(command, this.#auditOf(command, 'submit', actor));
      if (by === undefined) return;
      const event: Event = { type: 'approve', at: iso(now), by };
      const r = transition(command, event);
      if (!r.ok) return;
      shown = r.command;
      this.#store.update(shown, this.#auditOf(shown, 'approve', { kind: 'daemon', name: by }, event));
      if (grant !== undefined) {
        used = use(grant, iso(now));
        this.#grants.write(
          used,
          'grant_used',
          { kind: 'daemon', name: 'daemon' },
          { command_id: command.id },
        );
      }
    });
    if (req.secret !== undefined) this.#secrets.set(command.id, req.secret);
    this.#track(shown);
    this.#capped.delete(req.client);
    this.#capped.delete('*');
    if (shown.phase.state === 'awaiting_review') this.#armExpiry(shown);
    this.#logChange(command, actor);
    if (shown !== command) this.#logChange(shown, { kind: 'daemon', name: by! });
    this.#emit(shown);
    if (used !== undefined) this.#grants.adopt(used);
    if (shown.phase.state === 'approved') this.#launches.schedule(shown);
    return { ok: true, command: shown, created: true };
  }

  /** The grant that approves this request at submit, if any: never a cue (contract 8). */
  #grantFor(req: SubmitRequest): Grant | undefined {
    if (req.tool === 'ogf_cue' || req.approved_by !== undefined) return undefined;
    return this.#grants.match({ command: req.command, client: req.client, args: req.args });
  }

  approve(id: string, version: number, by: string, grant?: ApproveGrant): ActionResult {
    const event: Event = { type: 'approve', at: iso(this.#clock.now()), by };
    if (grant === undefined) {
      const r = this.#decide(id, version, event, by);
      // Contract 9: an approval short of the quorum is recorded and the command keeps waiting.
      if (r.ok && r.command.phase.state === 'approved') this.#launches.schedule(r.command);
      return r;
    }
    // Contract 5 (v2): approve and create the grant in one transaction; a command that cannot be granted
    // is NotGrantable and nothing is approved. The approval that creates a grant takes none of its uses.
    const c = this.get(id);
    const refused = c === undefined ? undefined : this.#grantRefusal(c);
    if (c !== undefined && refused !== undefined && c.phase.state === 'awaiting_review') {
      return { ok: false, code: 'NotGrantable', message: refused };
    }
    const spec: GrantSpec = { command: c?.command ?? '', client: c?.client ?? '', ttl_s: grant.ttl_s };
    if (grant.same_args && c !== undefined) spec.args = c.args;
    if (grant.uses !== undefined) spec.uses = grant.uses;
    if (grant.note !== undefined) spec.note = grant.note;
    const made = this.#grants.create(spec, by);
    const r = this.#decide(id, version, event, by, () =>
      this.#grants.write(made, 'grant_created', { kind: 'owner', name: by }, { command_id: id }),
    );
    if (!r.ok) return r;
    this.#grants.adopt(made);
    this.#launches.schedule(r.command);
    return { ok: true, command: r.command, grant: made };
  }

  grant(spec: GrantSpec, by: string): GrantResult {
    const refused = this.#grants.refusal(spec.command);
    if (refused !== undefined) return { ok: false, code: 'NotGrantable', message: refused };
    const made = this.#grants.create(spec, by);
    this.#grants.write(made, 'grant_created', { kind: 'owner', name: by });
    this.#grants.adopt(made);
    return { ok: true, grant: made };
  }

  revoke(id: string, by: string): GrantResult {
    const g = this.#grants.get(id);
    if (g === undefined) return { ok: false, code: 'NotFound', message: `no grant ${id}` };
    if (g.source === 'config') {
      return {
        ok: false,
        code: 'NotRevocable',
        message: `grant ${id} comes from the config file; remove its entry from "grants" there and restart`,
      };
    }
    if (g.state !== 'live') return { ok: true, grant: g };
    const ended = end(g, 'revoked', iso(this.#clock.now()));
    this.#grants.write(ended, 'grant_revoked', { kind: 'owner', name: by });
    this.#grants.adopt(ended);
    return { ok: true, grant: ended };
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
    if (c.tool === 'ogf_cue') return this.#grants.refusal('ogf.cue');
    if (c.approvals_needed !== undefined) {
      return `${c.command} needs ${c.approvals_needed} owners to approve each call, so it cannot be granted`;
    }
    return this.#grants.refusal(c.command);
  }

  deny(id: string, version: number, by: string, note?: string): ActionResult {
    const event: Event = { type: 'deny', at: iso(this.#clock.now()), by };
    if (note !== undefined) event.note = note;
    return this.#decide(id, version, event, by);
  }

  cancel(id: string, by: string): ActionResult {
    const c = this.get(id);
    if (!c) return { ok: false, code: 'NotFound', message: `no command ${id}` };
    if (c.phase.state !== 'awaiting_review') return { ok: true, command: c };
    return this.#apply(c, { type: 'cancel', at: iso(this.#clock.now()), by }, { kind: 'client', name: by });
  }

  reconcile(id: string, outcome: 'delivered' | 'not_delivered', by: string, note?: string): ActionResult {
    const c = this.get(id);
    if (!c) return { ok: false, code: 'NotFound', message: `no command ${id}` };
    const event: Event = { type: 'reconcile', at: iso(this.#clock.now()), by, outcome };
    if (note !== undefined) event.note = note;
    return this.#apply(c, event, { kind: 'owner', name: by });
  }

  get(id: string): Command | undefined {
    return this.#active.get(id) ?? this.#store.get(id);
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
    return [...this.#active.values()].reverse().concat(this.#store.recentFinal(finalLimit));
  }

  history(limit: number, before?: string): Command[] {
    return this.#store.history(limit, before);
  }

  counts(): Partial<Record<State, number>> {
    return this.#store.counts();
  }

  audit(entry: AuditEntry): void {
    this.#store.audit(entry);
  }

  /** Number of launches in flight (for shutdown and tests). */
  get running(): number {
    return this.#launches.running;
  }

  /**
   * Stops accepting launches, cancels expiry timers, lets running children finish for up to `graceMs`,
   * and releases waiters with their current state. Idempotent.
   */
  async close(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#grants.close();
    for (const t of this.#timers.values()) t.cancel();
    this.#timers.clear();
    await this.#launches.drain(graceMs);
    for (const set of [...this.#waiters.values()]) for (const f of [...set]) f();
  }

  // ---- internals ----------------------------------------------------------------------------------

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

  /** `also` runs in the same transaction as the change, after the checks passed (approve with a grant). */
  #decide(id: string, version: number, event: Event, by: string, also?: () => void): ActionResult {
    const c = this.get(id);
    if (!c) return { ok: false, code: 'NotFound', message: `no command ${id}` };
    // Contract 5: AlreadyDecided is checked first, then the version.
    if (c.phase.state !== 'awaiting_review') {
      return {
        ok: false,
        code: 'AlreadyDecided',
        message: `command ${id} was already decided: it is ${c.phase.state}`,
      };
    }
    // Contract 9: a repeat approval by the same owner is AlreadyApproved, checked before the version.
    if (event.type === 'approve' && c.approvals?.some((a) => a.by === by)) {
      return {
        ok: false,
        code: 'AlreadyApproved',
        message: `you (${by}) already approved command ${id}; it waits for ${c.approvals_needed! - c.approvals.length} more owner approval${c.approvals_needed! - c.approvals.length === 1 ? '' : 's'}`,
      };
    }
    if (version !== c.version) {
      return {
        ok: false,
        code: 'VersionConflict',
        message: `command ${id} is at version ${c.version}, not ${version}; look at it again before deciding`,
      };
    }
    return this.#apply(c, event, { kind: 'owner', name: by }, also);
  }

  /** transition → one transaction → one event. Rejections carry their code; nothing changes. */
  #apply(c: Command, event: Event, actor: Actor, also?: () => void): ActionResult {
    const r = transition(c, event);
    if (!r.ok) {
      const code = r.code === 'NotReconcilable' || r.code === 'AlreadyApproved' ? r.code : 'AlreadyDecided';
      return { ok: false, code, message: r.message };
    }
    const next = r.command;
    const audit = this.#auditOf(next, event.type, actor, event);
    if (also === undefined) this.#store.update(next, audit);
    else
      this.#store.transaction(() => {
        this.#store.update(next, audit);
        also();
      });
    if (isFinal(next)) {
      this.#untrack(next);
      this.#secrets.delete(next.id);
      this.#timers.get(next.id)?.cancel();
      this.#timers.delete(next.id);
    } else {
      this.#track(next);
    }
    if (next.phase.state !== 'awaiting_review') {
      this.#timers.get(next.id)?.cancel();
      this.#timers.delete(next.id);
    }
    this.#logChange(next, actor);
    this.#emit(next);
    return { ok: true, command: next };
  }

  #auditOf(c: Command, action: string, actor: Actor, event?: Event): AuditEntry {
    const detail: Record<string, unknown> = { state: c.phase.state, command: c.command };
    if ('reason' in c.phase) detail.reason = c.phase.reason;
    if (event && 'note' in event && event.note !== undefined) detail.note = event.note;
    if (event?.type === 'reconcile') detail.outcome = event.outcome;
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

  #emit(c: Command): void {
    this.#emitChange({ command: c });
  }

  /** Delivers changes in commit order even when a listener causes another change. */
  #emitChange(change: Change): void {
    this.#pendingEvents.push(change);
    if (this.#emitting) return;
    this.#emitting = true;
    try {
      for (let next = this.#pendingEvents.shift(); next; next = this.#pendingEvents.shift()) {
        if ('grant' in next) {
          for (const l of [...this.#grantListeners]) this.#call(l, next.grant);
          continue;
        }
        const c = next.command;
        if (isFinal(c)) for (const f of [...(this.#waiters.get(c.id) ?? [])]) f();
        for (const l of [...this.#listeners]) this.#call(l, c);
      }
    } finally {
      this.#emitting = false;
    }
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
    const ms = Date.parse(c.review_expires_at) - this.#clock.now();
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(c.id);
      const current = this.#active.get(c.id);
      if (!current || this.#closing || current.phase.state !== 'awaiting_review') return;
      try {
        this.#apply(current, { type: 'expire', at: iso(this.#clock.now()) }, DAEMON);
      } catch (e) {
        // The store refused the write (read-only, disk full): retry shortly rather than lose the expiry.
        this.#log.log('error', 'commit_failed', { id: c.id, error: (e as Error).message });
        this.#armExpiryRetry(current);
      }
    }, ms);
    this.#timers.set(c.id, timer);
  }

  #armExpiryRetry(c: Command): void {
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
