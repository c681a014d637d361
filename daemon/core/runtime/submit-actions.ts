/**
 * The submit path: intake.ts decides what becomes of a request (a tagged result); this file applies it.
 * A repeat or a refusal is answered once the pending batch committed (nothing of this turn is heard early);
 * a new command goes into the working view at once (the next request of the same turn sees it: caps, twins,
 * a grant's uses) and is queued on the broker's group commit (group-commit.ts) — its row, its audit entries and a
 * grant's use in one transaction — and only after that commit is it shown, timed, logged and announced.
 * If the batch fails, the broker's rollback takes it back out of the working view (and its secret).
 *
 * Its own file (issue 20 item 3): the broker stays the one writer (every write goes through its one
 * commit queue and its views); this is the submit half of it, as `#apply` is the change half.
 */
import { nanoid } from 'nanoid';
import type { Logger } from '../../base/index.js';
import { type Clock, iso } from '../../base/index.js';
import { auditOf, commandOf, type Intake, intake, logChange } from '../decisions/index.js';
import type { CommandPolicy, KindPolicies } from '../model/index.js';
import {
  type Actor,
  type Command,
  type Event,
  type Grant,
  isFinal,
  transition,
  use,
} from '../model/index.js';
import type {
  AuditEntry,
  Awaitable,
  BrokerApi,
  Queued,
  RulePort,
  StorePorts,
  SubmitRequest,
  SubmitResult,
} from '../ports/index.js';
import type { Views } from './command-views.js';
import type { Expiry } from './expiry.js';
import type { GrantBook } from './grant-book.js';
import { allOf, type Change } from './group-commit.js';

export interface SubmitActionsDeps {
  store: StorePorts;
  clock: Clock;
  log: Logger;
  kinds: KindPolicies;
  policy: CommandPolicy;
  /** Contract 13.3: whether approving a command name needs a passkey assertion. */
  passkey: (command: string) => boolean;
  views: Views;
  grants: GrantBook;
  /** Contract 11: the owner's rules (core/ports/rules.ts). */
  rules: RulePort;
  expiry: Expiry;
  /** Session secrets, in memory only (rule 4); the broker drops them when their command turns final. */
  secrets: Map<string, unknown>;
  randomId?: () => string;
  /** Contract 16: this daemon's node name, stamped on every command it receives. */
  node?: string;
  reviewMs: number;
  /** Contract 1.3 (v2): PENDING commands one client may have (default 100). */
  maxPendingPerClient?: number;
  /** Contract 1.3 (v2): PENDING commands all clients together may have (default 2000). */
  maxPending?: number;
  /** Queues a change on the broker's group commit. */
  commit(change: Change): Promise<void>;
  /** An answer given once the pending batch committed (the broker's `#settled`). */
  settled<T>(answer: () => T): Promise<T>;
  /** The command as last committed (the broker's `get`). */
  get(id: string): Command | undefined;
  /** One committed change to waiters and listeners (from the batch's `after`, in commit order). */
  emit(c: Command): void;
  /** A new command awaiting review, queued and not yet durable (BrokerApi.subscribeQueued). */
  queued(q: Queued): void;
  /** An approved command's launch, started in the turn that queued it (the broker's `#launchNow`). */
  launch(c: Command): void;
}

const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };

/** What intake.ts decided of a request that makes a command. */
type Made = Extract<Intake, { kind: 'create' | 'deny' }>;

/** The command as owners first see it, and what it writes beside its row. */
interface AtSubmit {
  shown: Command;
  /** Its `submit` audit entry. */
  submitted: AuditEntry;
  /** Who decided it at submit (a grant, a policy, a rule), if anyone. */
  by?: string;
  approved?: AuditEntry;
  /** A grant's use, taken with it. */
  used?: Grant;
  writeUse?: () => Awaitable<void>;
}

export class SubmitActions implements Pick<BrokerApi, 'submit'> {
  readonly #deps: SubmitActionsDeps;
  readonly #randomId: () => string;
  readonly #maxPerClient: number;
  readonly #maxPending: number;
  /** Clients (and `*` for the broker-wide cap) refused since their last accepted submit: logged once. */
  readonly #capped = new Set<string>();

  constructor(deps: SubmitActionsDeps) {
    this.#deps = deps;
    this.#randomId = deps.randomId ?? (() => `c_${nanoid(21)}`);
    this.#maxPerClient = deps.maxPendingPerClient ?? 100;
    this.#maxPending = deps.maxPending ?? 2000;
  }

  /** A request: intake.ts decides; a repeat or a refusal is answered, a new command queued. */
  submit(req: SubmitRequest): Promise<SubmitResult> {
    const decided = this.#intake(req);
    if (decided.kind === 'existing') {
      const c = decided.command;
      return this.#deps.settled(() => ({ ok: true, command: this.#deps.get(c.id) ?? c, created: false }));
    }
    if (decided.kind === 'refused') {
      if (decided.code === 'TooManyPending') this.#capReached(req.client, decided.cap);
      const refused: SubmitResult = { ok: false, code: decided.code, message: decided.message };
      return this.#deps.settled(() => refused);
    }
    const { clock, views, grants, kinds } = this.#deps;
    const now = clock.now();
    const command = commandOf(
      req,
      this.#randomId(),
      now,
      this.#deps.reviewMs,
      decided.kind === 'create' ? decided.approvalsNeeded : undefined,
      kinds,
      decided.kind === 'create' && decided.passkey === true,
      this.#deps.node,
    );
    const actor: Actor = { kind: 'client', name: req.client };
    const made = this.#decidedAtSubmit(command, actor, decided, now);
    // The working view at once: the next request of this turn sees this command and the grant's use.
    views.created(made.shown);
    if (made.used !== undefined) grants.take(made.used);
    this.#capped.delete(req.client);
    this.#capped.delete('*');
    const change = this.#change(command, actor, made);
    // In memory at once (rule 4: never stored), so a launch of this turn has it; a rollback drops it.
    if (req.secret !== undefined && !isFinal(made.shown)) this.#deps.secrets.set(command.id, req.secret);
    const done = this.#deps
      .commit(change)
      .then(() => ({ ok: true as const, command: made.shown, created: true }));
    if (made.shown.phase.state === 'approved') this.#deps.launch(made.shown);
    if (made.shown.phase.state === 'awaiting_review')
      this.#deps.queued({
        command: made.shown,
        committed: done.then(
          () => true,
          () => false,
        ),
      });
    return done;
  }

  /** What intake.ts makes of the request, given what the working view and the store know. */
  #intake(req: SubmitRequest): Intake {
    const { store, clock, views, grants, kinds } = this.#deps;
    return intake(req, {
      sameRequestId:
        req.request_id === undefined
          ? undefined
          : (views.unsavedRequest(req.client, req.request_id) ??
            store.committedReads.byRequest(req.client, req.request_id)),
      active: views.actives(),
      pendingOfClient: views.pendingOf(req.client),
      pending: views.pending,
      maxPendingPerClient: this.#maxPerClient,
      maxPending: this.#maxPending,
      grants,
      policy: this.#deps.policy,
      kinds,
      rules: (r) => this.#deps.rules.decide(r, clock.now()),
      passkey: this.#deps.passkey,
    });
  }

  /**
   * Decided at submit (intake.ts: a grant, contract 8, a policy, contract 7, or a rule, contract 11): in the
   * transaction that creates it, a grant's use taken with it. Owners see only the decided version.
   */
  #decidedAtSubmit(command: Command, actor: Actor, decided: Made, now: number): AtSubmit {
    const by = decided.kind === 'create' ? decided.approvedBy : decided.deniedBy;
    const grant = decided.kind === 'create' ? decided.grant : undefined;
    const submitted = auditOf(command, 'submit', actor, iso(this.#deps.clock.now()));
    if (by === undefined) return { shown: command, submitted };
    const event: Event =
      decided.kind === 'deny'
        ? {
            type: 'deny',
            at: iso(now),
            by,
            policy: true,
            ...(decided.note === undefined ? {} : { note: decided.note }),
          }
        : { type: 'approve', at: iso(now), by };
    const r = transition(command, event);
    if (!r.ok) return { shown: command, submitted, by };
    const approved = auditOf(
      r.command,
      event.type,
      { kind: 'daemon', name: by },
      iso(this.#deps.clock.now()),
      event,
    );
    if (grant === undefined) return { shown: r.command, submitted, by, approved };
    const used = use(grant, iso(now));
    const writeUse = this.#deps.grants.writer(used, 'grant_used', DAEMON, { command_id: command.id });
    return { shown: r.command, submitted, by, approved, used, writeUse };
  }

  /** The new command's change on the group commit: its row and audit entries, then shown, timed and heard. */
  #change(command: Command, actor: Actor, made: AtSubmit): Change {
    const { store, log, views, grants } = this.#deps;
    const { shown, submitted, approved, used, writeUse, by } = made;
    return {
      write: () => {
        // Approved at submit (a grant, a policy): the row is written once, at the version owners see; the
        // audit log still has both steps (submit v1, approve v2), in the same transaction.
        return allOf(
          // Contract 16 (v4): the caps again, in the database, over every node's commands (a store of its own
          // ignores them: the working view counted exactly). A final command (a deny rule) takes no slot.
          store.commands.insert(
            shown,
            submitted,
            isFinal(shown) ? undefined : { perClient: this.#maxPerClient, all: this.#maxPending },
          ),
          approved === undefined ? undefined : store.audits.append(approved),
          writeUse?.(),
        );
      },
      after: () => {
        views.show(shown);
        if (shown.phase.state === 'awaiting_review') this.#deps.expiry.arm(shown);
        logChange(log, command, actor);
        if (shown !== command) logChange(log, shown, { kind: 'daemon', name: by! });
        this.#deps.emit(shown);
        if (used !== undefined) grants.committed(used);
      },
    };
  }

  /** One log line when a cap starts refusing, not one per refusal: a flood must not flood the log too. */
  #capReached(client: string, cap: 'max_pending_per_client' | 'max_pending'): void {
    const key = cap === 'max_pending' ? '*' : client;
    if (this.#capped.has(key)) return;
    this.#capped.add(key);
    this.#deps.log.log('warn', 'pending_cap_reached', {
      client,
      cap,
      limit: cap === 'max_pending' ? this.#maxPending : this.#maxPerClient,
    });
  }
}
