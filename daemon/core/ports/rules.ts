/**
 * What the core asks of the owner's rules (contracts.md 11), as a port the daemon fills in (daemon/rules/):
 * the core stays pure and names no expression language. `decide` is asked in intake's synchronous step;
 * `when` compiles a grant's expression once, when the grant is made or loaded.
 */
import type { Command, KindFields } from '../model/index.js';

/** What a rule or a `when` grant is asked about: a new request, or a recorded command (`policy_test`). */
export type RuleSubject = Pick<Command, 'tool' | 'command' | 'client' | 'args' | 'justification'> &
  KindFields;

/**
 * The rules' verdict on one request: the first rule whose expression is true decides. `failClosed` is set
 * when a `deny` rule failed to evaluate before the deciding one (or before the end): then nothing may
 * approve the request without the owners — no `allow` rule, grant or policy (contract 11).
 */
export type RuleVerdict =
  | { kind: 'none'; failClosed: boolean }
  | { kind: 'deny'; rule: string; note?: string }
  | { kind: 'allow'; rule: string; failClosed: boolean }
  | { kind: 'ask'; rule: string; approvals?: number; failClosed: boolean };

/** A compiled `when`: true when it matches; a failing expression is not true. */
export type WhenTest = (subject: RuleSubject, nowMs: number) => boolean;

export type CompiledWhen = { ok: true; test: WhenTest } | { ok: false; why: string };

export interface RulePort {
  /** Contract 11: the config rules' verdict on a new request. Never throws. */
  decide(subject: RuleSubject, nowMs: number): RuleVerdict;
  /** A grant's `when`, compiled once; `why` says what is wrong with it (one line). */
  when(expression: string): CompiledWhen;
  /** How many rules are active (`status`). */
  readonly count: number;
}

/** No rules (tests, and a daemon built without them): every request goes the v2 way; no `when` compiles. */
export const noRules: RulePort = {
  decide: () => ({ kind: 'none', failClosed: false }),
  when: () => ({ ok: false, why: 'cannot be used here: this broker was built without rules' }),
  count: 0,
};
