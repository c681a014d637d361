/**
 * The broker's grants (contracts.md 8): the live ones in memory (oldest first, so the oldest match wins),
 * their expiry timers, which commands may be granted, and the config grants reconciled at start. It decides
 * nothing itself — matching and use counts are grant-rules.ts's pure functions.
 *
 * Two views, as the broker's commands (group-commit.ts): the working one (`take`, at once, so the next request of
 * the same turn sees a use taken: contract 8, concurrent requests never take more uses than a grant has) is
 * what `match` reads; the committed one (`committed`, after the batch's commit) is what owners see and hear
 * of. A failed batch puts the working view back from the committed one (`rollback`), uses included.
 */
import { createHash } from 'node:crypto';
import { nanoid } from 'nanoid';
import type { Logger } from '../../base/index.js';
import { type Clock, iso } from '../../base/index.js';
import type { Actor } from '../model/index.js';
import {
  type CommandPolicy,
  type ConfigGrant,
  end,
  type Grant,
  isLive,
  pick,
  sortedKeysJson,
} from '../model/index.js';
import type {
  AuditAction,
  AuditEntry,
  Awaitable,
  GrantSpec,
  RulePort,
  RuleSubject,
  StorePorts,
  WhenTest,
} from '../ports/index.js';
import type { Change } from './group-commit.js';

export interface GrantBookDeps {
  store: StorePorts;
  clock: Clock;
  log: Logger;
  policy: CommandPolicy;
  /** Contract 13.3: a command whose approvals need a passkey is never granted. */
  passkey: (command: string) => boolean;
  /** Contract 8: a kind's name that can never be granted, with why (core/model/kind-policy.ts `refusal`). */
  kindRefusal: (command: string) => string | undefined;
  /** Contract 11: compiles a grant's `when` (daemon/rules/). */
  rules: RulePort;
  /** Called with every committed grant change, in commit order (from the batch's `after`s). */
  emit: (grant: Grant) => void;
  /** Queues a change on the broker's group commit. */
  commit: (change: Change) => Promise<void>;
  randomId?: () => string;
  /** Contract 16: this node, and whether the store is shared (then only this node's config grants are its). */
  node?: string;
  shared?: boolean;
}

/** Ended grants heard of whose id is remembered, so a late read-back never makes one live again. */
const ENDED_SEEN_MAX = 10_000;

const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };

/**
 * A config grant's id: `g_cfg_` + a hash of its entry, the same while the entry is unchanged (contract 8).
 * Contract 16 (v4): on a shared database the node is part of it (`node`), so two nodes whose configs hold
 * the same entry each have their own grant, for their own commands; a store of its own keeps the ids it had.
 */
export function configGrantId(
  entry: {
    command: string;
    client: string;
    args?: Record<string, unknown>;
    note?: string;
  },
  node?: string,
): string {
  const hashed = node === undefined ? entry : { ...entry, node };
  const hash = createHash('sha256').update(sortedKeysJson(hashed)).digest('base64url');
  return `g_cfg_${hash.slice(0, 22)}`;
}

export class GrantBook {
  readonly #deps: GrantBookDeps;
  readonly #randomId: () => string;
  /** The working view: live grants by id, in creation order, as of the last change (committed or not). */
  #live = new Map<string, Grant>();
  /** The committed view: live grants by id, in creation order, as of the last commit. */
  readonly #shown = new Map<string, Grant>();
  /** Grants the pending batch changed (ended ones too): not in the store yet. */
  readonly #unsaved = new Map<string, Grant>();
  readonly #timers = new Map<string, { cancel(): void }>();
  /** Ids of grants known ended, oldest first (bounded): a read-back of one as live is older news. */
  readonly #ended = new Set<string>();
  /** Contract 11: each `when` grant's expression, compiled once (a grant's `when` never changes). */
  readonly #whens = new Map<string, WhenTest>();
  #closed = false;

  constructor(deps: GrantBookDeps) {
    this.#deps = deps;
    this.#randomId = deps.randomId ?? (() => `g_${nanoid(21)}`);
  }

  /**
   * At start: live grants from the store (an expired one becomes `expired`), then the config's grants —
   * each entry's grant made live under its stable id, and a config grant whose entry is gone ended.
   */
  load(config: readonly ConfigGrant[]): Promise<void> {
    const { store, clock } = this.#deps;
    const writes: Array<Awaitable<void>> = [];
    const at = iso(clock.now());
    const shared = this.#deps.shared === true ? this.#deps.node : undefined;
    const wanted = new Map(config.map((e) => [configGrantId(e, shared), e]));
    // Contract 16: on a shared database, another node's config grants are that node's to reconcile.
    const mine = (g: Grant) => this.#deps.shared !== true || g.node === this.#deps.node;
    for (const g of store.committedReads.liveGrants()) {
      if (g.source === 'config' && !wanted.has(g.id) && mine(g)) {
        writes.push(
          this.#write(end(g, 'revoked', at), 'grant_revoked', DAEMON, { why: 'removed from the config' }),
        );
      } else if (!isLive(g, clock.now())) {
        writes.push(this.#write(end(g, 'expired', at), 'grant_expired', DAEMON));
      } else {
        this.#loaded(g);
      }
    }
    for (const [id, entry] of wanted) {
      if (this.#live.has(id)) continue;
      const g = this.#configGrant(id, entry, at);
      writes.push(this.#write(g, 'grant_created', DAEMON));
      this.#loaded(g);
    }
    return Promise.all(writes).then(() => undefined);
  }

  /**
   * A reload's config grants (contract 17), through the group commit like any change: a new entry's grant
   * is made live, a config grant whose entry is gone is revoked; the others stay as they are.
   */
  reloadConfig(config: readonly ConfigGrant[]): Promise<void> {
    const at = iso(this.#deps.clock.now());
    const shared = this.#deps.shared === true ? this.#deps.node : undefined;
    const wanted = new Map(config.map((e) => [configGrantId(e, shared), e]));
    const mine = (g: Grant) => this.#deps.shared !== true || g.node === this.#deps.node;
    const writes: Array<Promise<void>> = [];
    const apply = (g: Grant, action: AuditAction, detail?: Record<string, unknown>) => {
      const write = this.writer(g, action, DAEMON, detail);
      this.take(g);
      writes.push(this.#deps.commit({ write, after: () => this.committed(g) }));
    };
    for (const g of [...this.#live.values()]) {
      if (g.source === 'config' && !wanted.has(g.id) && mine(g))
        apply(end(g, 'revoked', at), 'grant_revoked', { why: 'removed from the config' });
    }
    for (const [id, entry] of wanted) {
      if (!this.#live.has(id)) apply(this.#configGrant(id, entry, at), 'grant_created');
    }
    return Promise.all(writes).then(() => undefined);
  }

  #configGrant(id: string, entry: ConfigGrant, at: string): Grant {
    const g: Grant = {
      id,
      command: entry.command,
      client: entry.client,
      state: 'live',
      source: 'config',
      created_by: 'config',
      created_at: at,
    };
    if (entry.args !== undefined) g.args = entry.args;
    if (entry.note !== undefined) g.note = entry.note;
    if (this.#deps.node !== undefined) g.node = this.#deps.node;
    return g;
  }

  /**
   * Why `command` cannot be granted (contract 8: a kind never granted, quorum commands, unknown names;
   * contract 13.3: passkey-required commands), or undefined.
   */
  refusal(command: string): string | undefined {
    const never = this.#deps.kindRefusal(command);
    if (never !== undefined) return never;
    const policy = this.#deps.policy(command);
    if (policy === undefined) {
      return `command must name a catalog command or an upstream tool (<upstream>__<tool>), got ${JSON.stringify(command.slice(0, 128))}`;
    }
    if (policy.approvals > 1) {
      return `${command} needs ${policy.approvals} owners to approve each call, so it cannot be granted`;
    }
    if (this.#deps.passkey(command)) {
      return `${command} needs the owner's passkey for each approval (require_passkey), so it cannot be granted`;
    }
    return undefined;
  }

  /** The oldest live grant that approves this request, if any (a `when` grant: its expression is true). */
  match(req: RuleSubject): Grant | undefined {
    const now = this.#deps.clock.now();
    // Contract 16 (v4): on a shared database a grant approves the commands of its node (or `*`) only; on a
    // store of its own every command is this node's, so the node never narrows a match (as before v4).
    const asked = this.#deps.shared === true ? { ...req, node: this.#deps.node ?? '' } : req;
    return pick(this.#live.values(), asked, now, (g) => this.#whenOf(g)(req, now));
  }

  /**
   * A `when` grant's compiled expression. One that no longer compiles (a stored grant after an upgrade of
   * the language) matches nothing, and says so once in the log.
   */
  #whenOf(g: Grant): WhenTest {
    const known = this.#whens.get(g.id);
    if (known !== undefined) return known;
    const c = this.#deps.rules.when(g.when ?? 'false');
    let test: WhenTest = () => false;
    if (c.ok) test = c.test;
    else this.#deps.log.log('warn', 'grant_when_refused', { grant_id: g.id, why: c.why });
    this.#whens.set(g.id, test);
    return test;
  }

  /** A new owner grant (not yet stored: the caller takes it, writes it in its batch, then announces it). */
  create(spec: GrantSpec, by: string): Grant {
    const now = this.#deps.clock.now();
    const g: Grant = {
      id: this.#randomId(),
      command: spec.command,
      client: spec.client,
      state: 'live',
      source: 'owner',
      created_by: by,
      created_at: iso(now),
      expires_at: iso(now + spec.ttl_s * 1000),
    };
    if (spec.args !== undefined) g.args = spec.args;
    if (spec.when !== undefined) g.when = spec.when;
    if (spec.uses !== undefined) g.uses_left = spec.uses;
    if (spec.note !== undefined && spec.note !== '') g.note = spec.note;
    // Contract 16 (v4): absent from the spec, the node this owner acts from.
    const node = spec.node ?? this.#deps.node;
    if (node !== undefined) g.node = node;
    return g;
  }

  /** A grant by id as the working view has it (changed by this turn or not), else the stored one. */
  get(id: string): Grant | undefined {
    return this.#unsaved.get(id) ?? this.#live.get(id) ?? this.#deps.store.committedReads.grant(id);
  }

  /** Every live grant as last committed, oldest first (the owner snapshot). */
  live(): Grant[] {
    return [...this.#shown.values()];
  }

  /** The store write of a grant change with its audit entry, made now, to run in the caller's batch. */
  writer(
    g: Grant,
    action: AuditAction,
    actor: Actor,
    detail: Record<string, unknown> = {},
  ): () => Awaitable<void> {
    const audit: AuditEntry = {
      at: iso(this.#deps.clock.now()),
      actor,
      action,
      detail: { grant_id: g.id, command: g.command, client: g.client, state: g.state, ...detail },
    };
    if (g.uses_left !== undefined) audit.detail!.uses_left = g.uses_left;
    return () => this.#deps.store.grants.put(g, audit);
  }

  /** The working view follows a change at once (a use taken, a grant made or ended). */
  take(g: Grant): void {
    this.#unsaved.set(g.id, g);
    if (g.state === 'live') this.#live.set(g.id, g);
    else this.#live.delete(g.id);
  }

  /** After its commit: the committed view follows, its expiry timer too, and every owner hears of it. */
  committed(g: Grant): void {
    this.#timers.get(g.id)?.cancel();
    this.#timers.delete(g.id);
    if (g.state === 'live') {
      this.#shown.set(g.id, g);
      this.#armExpiry(g);
    } else {
      this.#shown.delete(g.id);
      // An ended grant never matches again: its compiled `when` goes with it.
      this.#whens.delete(g.id);
      this.#ended.add(g.id);
      if (this.#ended.size > ENDED_SEEN_MAX) this.#ended.delete(this.#ended.values().next().value!);
    }
    this.#deps.emit(g);
  }

  /**
   * Contract 16: another node's committed grant change, as the store read it back — a new grant, a use
   * taken (fewer `uses_left`), an end. Both views follow (the working one unless the pending batch changed
   * the grant: that batch then fails on the database and its rollback takes the committed view); owners
   * hear of it. Older news (a use count not lower, a live read of an ended grant) changes nothing.
   */
  heard(g: Grant): void {
    const known = this.#shown.get(g.id);
    if (g.state === 'live') {
      if (this.#ended.has(g.id)) return;
      const fewer =
        g.uses_left !== undefined && known?.uses_left !== undefined && g.uses_left < known.uses_left;
      if (known !== undefined && !fewer) return;
    } else if (known === undefined) {
      this.#ended.add(g.id);
      return;
    }
    if (!this.#unsaved.has(g.id)) {
      if (g.state === 'live') this.#live.set(g.id, g);
      else this.#live.delete(g.id);
    }
    this.committed(g);
  }

  /** A grant change of its own (created, revoked, expired): taken now, committed in the turn's batch. */
  change(g: Grant, action: AuditAction, actor: Actor): Promise<void> {
    const write = this.writer(g, action, actor);
    this.take(g);
    return this.#deps.commit({ write, after: () => this.committed(g) });
  }

  /** The pending batch committed: the store has what it changed. */
  saved(): void {
    this.#unsaved.clear();
  }

  /** The pending batch failed: the working view goes back to the committed one, uses included. */
  rollback(): void {
    this.#live = new Map(this.#shown);
    this.#unsaved.clear();
  }

  close(): void {
    this.#closed = true;
    for (const t of this.#timers.values()) t.cancel();
    this.#timers.clear();
  }

  /** At start only (before any batch): issued at once; `load` settles with the writes. */
  #write(g: Grant, action: AuditAction, actor: Actor, detail?: Record<string, unknown>): Awaitable<void> {
    const written = this.writer(g, action, actor, detail)();
    if (g.state !== 'live') this.#live.delete(g.id);
    return written;
  }

  /** At start: a stored (or just written) live grant, in both views, with its expiry timer. */
  #loaded(g: Grant): void {
    this.#live.set(g.id, g);
    this.committed(g);
  }

  /** Expiry on the clock: the grant stops matching at expires_at anyway; this records and announces it. */
  #armExpiry(g: Grant): void {
    if (g.expires_at === undefined || this.#closed) return;
    const ms = Date.parse(g.expires_at) - this.#deps.clock.now();
    this.#timers.set(
      g.id,
      this.#deps.clock.setTimeout(() => {
        this.#timers.delete(g.id);
        const current = this.#live.get(g.id);
        if (this.#closed || current === undefined) return;
        const ended = end(current, 'expired', iso(this.#deps.clock.now()));
        this.change(ended, 'grant_expired', DAEMON).catch((e: unknown) => {
          // The store refused the write (disk full): the grant already matches nothing; retry the record.
          this.#deps.log.log('error', 'commit_failed', { grant_id: g.id, error: (e as Error).message });
          if (this.#closed) return;
          this.#timers.set(
            g.id,
            this.#deps.clock.setTimeout(() => {
              const again = this.#live.get(g.id);
              if (again !== undefined) this.#armExpiry(again);
            }, 1000),
          );
        });
      }, ms),
    );
  }
}
