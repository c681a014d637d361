/**
 * Testing a rule or a grant against the past (contracts.md 11): of the newest N commands (all clients),
 * which it would have matched, counted by the state they ended in. A rule is asked as it would have been
 * at the command's submit (`now` = its `created_at`).
 *
 * Never holds up the broker: history is read in pages through the store's port, and the event loop is
 * given back between pages (5,000 commands replayed must not delay a submit by more than a few ms).
 */
import { type Command, type Grant, jsonEqual, type KindPolicies } from '../core/index.js';
import type { CompiledRule, RuleBook } from './book.js';
import { compileExpression } from './environment.js';
import { factsOf } from './facts.js';

/** Contract 11: `limit` 1..5000, default 500. */
export const POLICY_TEST_MAX = 5000;
export const POLICY_TEST_DEFAULT = 500;
/** Commands read and tested per turn of the event loop. */
const PAGE = 50;
const SAMPLE = 20;

export interface PolicyTestAnswer {
  of: number;
  matched: number;
  by_state: Record<string, number>;
  sample: string[];
}

/** A page of history, newest first, before a pending_id (the broker's or the store's `history`). */
export type HistoryPage = (limit: number, before?: string) => Promise<Command[]> | Command[];

/** Calls `each` on the newest `limit` commands, newest first, a page per turn of the event loop. */
export async function replay(read: HistoryPage, limit: number, each: (c: Command) => void): Promise<number> {
  let seen = 0;
  let before: string | undefined;
  while (seen < limit) {
    const page = await read(Math.min(PAGE, limit - seen), before);
    if (page.length === 0) break;
    for (const c of page) each(c);
    seen += page.length;
    before = page.at(-1)!.id;
    // Give the broker its turn: a submit waiting behind this replay is served before the next page.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return seen;
}

/** The policy_test answer for `matches` over the newest `limit` commands. */
export async function policyTest(
  read: HistoryPage,
  limit: number,
  matches: (c: Command) => boolean,
): Promise<PolicyTestAnswer> {
  const answer: PolicyTestAnswer = { of: 0, matched: 0, by_state: {}, sample: [] };
  answer.of = await replay(read, limit, (c) => {
    if (!matches(c)) return;
    answer.matched++;
    const state = c.phase.state;
    answer.by_state[state] = (answer.by_state[state] ?? 0) + 1;
    if (answer.sample.length < SAMPLE) answer.sample.push(c.id);
  });
  return answer;
}

/** A rule's expression as it would have answered at each command's submit (a failing one: not matched). */
export function ruleMatcher(when: string, kinds: KindPolicies): (c: Command) => boolean {
  const compiled = compileExpression(when);
  if (!compiled.ok) return () => false;
  return (c) => compiled.run(factsOf(c, kinds, Date.parse(c.created_at))) === true;
}

/** A grant as contract 8/11 match it: its command, its client (or `*`), its args (or any) or its `when`. */
export function grantMatcher(
  g: Pick<Grant, 'command' | 'client' | 'args' | 'when' | 'node'>,
  kinds: KindPolicies,
): (c: Command) => boolean {
  const when = g.when === undefined ? undefined : ruleMatcher(g.when, kinds);
  return (c) =>
    c.command === g.command &&
    (g.client === '*' || g.client === c.client) &&
    // Contract 16 (v4): a grant for one node is tested against that node's past commands only.
    (g.node === undefined || g.node === '*' || g.node === c.node) &&
    (when !== undefined ? when(c) : g.args === undefined || jsonEqual(g.args, c.args));
}

/** How a command actually ended, as a rule's decision compares with it (`policy test`). */
export function actualDecision(c: Command): 'approved' | 'denied' | 'waiting' {
  const s = c.phase.state;
  if (s === 'denied') return 'denied';
  if (s === 'awaiting_review') return 'waiting';
  return 'approved';
}

/**
 * Whether `decision` differs from how `c` ended: allow vs not approved, deny vs not denied, ask vs decided
 * without the owners (a grant, a policy or a rule approved it at once).
 */
export function decidedOtherwise(rule: Pick<CompiledRule, 'decision'>, c: Command): boolean {
  const actual = actualDecision(c);
  if (rule.decision === 'allow') return actual !== 'approved';
  if (rule.decision === 'deny') return actual !== 'denied';
  const by = 'decided_by' in c.phase ? c.phase.decided_by : '';
  return /^(?:grant|policy|rule):/.test(by);
}

/** One rule's line of `policy test`, and the commands the whole book would decide otherwise. */
export interface RuleReport {
  id: string;
  matched: number;
  otherwise: number;
}

export interface BookReport {
  of: number;
  rules: RuleReport[];
  /** Commands whose decision the book (first true rule decides) would change, newest first. */
  changed: Array<{ command: Command; rule: string; decision: string }>;
}

/** `ogf-broker policy test`: every rule of a config against the recorded history. */
export async function testBook(
  book: RuleBook,
  kinds: KindPolicies,
  read: HistoryPage,
  limit: number,
): Promise<BookReport> {
  const rules = book.rules.map((r) => ({ id: r.id, matched: 0, otherwise: 0 }));
  const changed: BookReport['changed'] = [];
  const of = await replay(read, limit, (c) => {
    const facts = factsOf(c, kinds, Date.parse(c.created_at));
    book.rules.forEach((rule, i) => {
      if (rule.run(facts) !== true) return;
      rules[i]!.matched++;
      if (decidedOtherwise(rule, c)) rules[i]!.otherwise++;
    });
    const verdict = book.decide(facts);
    if (verdict.kind === 'none') return;
    const rule = book.rules.find((r) => r.id === verdict.rule)!;
    if (decidedOtherwise(rule, c)) changed.push({ command: c, rule: rule.id, decision: rule.decision });
  });
  return { of, rules, changed };
}
