/**
 * What the owner edge is handed (contracts.md 5, 9, 13, 17): every edge's context, and what only owners
 * use — the kinds' policies for their Views, passkeys, Web Push, the running daemon's doctor and reload,
 * the first-run help. The composition root (app/owner-context.ts) builds it; nothing in owner/ reaches for
 * a global instead.
 */
import type { DiagnosisCheck, NotifyTestMessage, RuleInfo } from '../../common/owner-messages.js';
import type { ActionDesk } from '../actions/index.js';
import type { Command, KindPolicies, PasskeyStore, SubmitRequest } from '../core/index.js';
import type { EdgeContext } from '../http/index.js';
import type { OAuthServer } from '../oauth/index.js';
import type { SetupFeed } from './setup.js';

/** What the owner edge is handed: every edge's context, and the panel's first-run help. */
export interface OwnerContext extends EdgeContext {
  /**
   * The kinds of tool as the owner's Views and policy tests ask them (kinds/index.ts's registry, handed in
   * by the composition root, app/owner-context.ts): the edge names no kind and imports no kind's folder.
   */
  kinds: KindPolicies;
  /** The owner panel's first-run help (issue 19); absent: hello carries none. */
  setup?: SetupFeed;
  /** Contract 15: the OAuth authorization server whose consents the owner gives (absent: OAuth off). */
  oauth?: OAuthServer;
  /** Contract 13.3: the owners' passkeys (the store's port). */
  passkeys: PasskeyStore;
  /** Web Push (contract 13.2): the owners' devices; absent, the push frames and key answer NotFound. */
  push?: OwnerPush;
  /** Contract 17: what `doctor` and `notify test` ask the running daemon (app/diagnose.ts); absent: NotFound. */
  diagnose?: Diagnose;
  /** Contract 19 (v4): a notification's one-time actions (`/act/<token>`); absent: every /act/ is 404. */
  actions?: ActionDesk;
  /** Contract 17: `ogf-broker reload` — the config read again (app/reload.ts); absent: NotFound. */
  reload?: () => Promise<ReloadOutcome>;
  /** Contract 18: the rules, and the owners' changes of theirs (app/owner-rules.ts); absent: NotFound. */
  rules?: RulesDesk;
  /**
   * Contract 20: the owner's revert of a command — the request to queue as the owner's own (its file checked),
   * or why there is none (kinds/upstream/revert.ts); absent: every revert is NotRevertible.
   */
  revert?: (command: Command | undefined) => Promise<RevertPlan>;
}

/** A rule an owner adds (contract 18: `rule_add`'s `rule`). */
export interface NewRule {
  id?: string;
  when: string;
  decision: 'allow' | 'deny' | 'ask';
  note?: string;
  approvals?: number;
}

/** What `rule_update` changes (contract 18): each field given replaces the rule's; an empty note removes it. */
export interface RulePatch {
  when?: string;
  decision?: 'allow' | 'deny' | 'ask';
  note?: string;
  approvals?: number;
  enabled?: boolean;
}

/** The rule a change made, or why none was made. */
export type RuleAnswer =
  | { ok: true; rule: RuleInfo }
  | { ok: false; code: 'BadMessage' | 'NotFound'; message: string };

/** The rules as the owner edge reads and changes them (contract 18). */
export interface RulesDesk {
  /** Every rule: the config's first, then the owners' in their order. */
  list(): Promise<RuleInfo[]>;
  add(rule: NewRule, position: number | undefined, by: string): Promise<RuleAnswer>;
  update(id: string, patch: RulePatch, by: string): Promise<RuleAnswer>;
  remove(id: string, by: string): Promise<RuleAnswer>;
}

/** Contract 20: what the owner edge queues for a revert, or why it cannot. */
export type RevertPlan =
  | { ok: true; request: Omit<SubmitRequest, 'client'> }
  | { ok: false; code: 'NotFound' | 'NotRevertible'; message: string };

/** A reload's outcome as the `reload` frame carries it (common/owner-messages.ts). */
export type ReloadOutcome =
  | { ok: true; config_sha256: string | null; changed: string[]; restart_needed: string[] }
  | { ok: false; error: string };

/** The running daemon's own checks, with its environment, channels and bridge (app/diagnose.ts). */
export interface Diagnose {
  doctor(): Promise<DiagnosisCheck[]>;
  /** The SHA-256 of the config file the daemon loaded, or null. */
  readonly configSha256: string | null;
  /** A test message through each channel (or `channel`); a string when there is none to test (BadMessage). */
  notifyTest(channel?: string): Promise<NotifyTestMessage['results'] | string>;
}

/** An owner's device that gets Web Push notifications, as the panel lists it (contract 13.2). */
export interface OwnerPushDevice {
  endpoint: string;
  created_at: string;
  user_agent?: string;
}

/** The owners' Web Push devices as the owner edge needs them (notify/push.ts implements it). */
export interface OwnerPush {
  /** The VAPID public key (base64url) browsers subscribe with. */
  readonly publicKey: string;
  subscribe(
    owner: string,
    sub: { endpoint: string; keys: { p256dh: string; auth: string } },
    userAgent?: string,
  ): Promise<void>;
  /** False when `owner` has no such endpoint. */
  unsubscribe(owner: string, endpoint: string): Promise<boolean>;
  list(owner: string): OwnerPushDevice[];
}
