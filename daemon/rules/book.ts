/**
 * The config's rules, compiled (contracts.md 11): evaluated in order at submit, the first whose expression
 * is true decides. A rule whose expression fails for a request (a missing field, a wrong type, a pattern
 * RE2 refuses) is not true; a failed `deny` rule makes the verdict fail closed (rule-port.ts). A failing
 * rule is logged once per rule per minute, not per request: an AI that sends what breaks a rule cannot
 * flood the log.
 */
import type { Clock, Logger } from '../base/index.js';
import type { RuleVerdict } from '../core/index.js';
import { type Compiled, compileExpression, type RuleFacts } from './environment.js';

export type RuleDecision = 'allow' | 'deny' | 'ask';

/** A rule as the config gives it (daemon/config/rules.ts checks the shape). */
export interface RuleEntry {
  id: string;
  when: string;
  decision: RuleDecision;
  note?: string;
  approvals?: number;
}

export interface CompiledRule extends RuleEntry {
  run: Extract<Compiled, { ok: true }>['run'];
}

/** Every rule compiled, or why the first bad one is refused: `rules[i] (id X): when …` (contract 11: exit 2). */
export function compileRules(
  entries: readonly RuleEntry[],
): { ok: true; rules: CompiledRule[] } | { ok: false; why: string } {
  const rules: CompiledRule[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    const at = `rules[${i}] (id ${entry.id})`;
    if (seen.has(entry.id)) return { ok: false, why: `${at}: id must be unique; ${entry.id} is used twice` };
    seen.add(entry.id);
    if (entry.approvals !== undefined && entry.decision !== 'ask') {
      return { ok: false, why: `${at}: approvals is accepted only with decision "ask"` };
    }
    const c = compileExpression(entry.when);
    if (!c.ok) return { ok: false, why: `${at}: when ${c.why}` };
    rules.push({ ...entry, run: c.run });
  }
  return { ok: true, rules };
}

/** How often a failing rule is logged (contract 11: once per rule per minute). */
export const RULE_ERROR_LOG_MS = 60_000;

export class RuleBook {
  readonly #rules: readonly CompiledRule[];
  readonly #log: Logger;
  readonly #clock: Clock;
  /** When each failing rule was last logged. */
  readonly #logged = new Map<string, number>();

  constructor(rules: readonly CompiledRule[], log: Logger, clock: Clock) {
    this.#rules = rules;
    this.#log = log;
    this.#clock = clock;
  }

  get count(): number {
    return this.#rules.length;
  }

  get rules(): readonly CompiledRule[] {
    return this.#rules;
  }

  /** The verdict on one request (rule-port.ts). Never throws. */
  decide(facts: RuleFacts): RuleVerdict {
    let failClosed = false;
    for (const rule of this.#rules) {
      const r = rule.run(facts);
      if (r instanceof Error) {
        this.#failed(rule, facts, r);
        if (rule.decision === 'deny') failClosed = true;
        continue;
      }
      if (!r) continue;
      if (rule.decision === 'deny') {
        return rule.note === undefined
          ? { kind: 'deny', rule: rule.id }
          : { kind: 'deny', rule: rule.id, note: rule.note };
      }
      if (rule.decision === 'allow') return { kind: 'allow', rule: rule.id, failClosed };
      return rule.approvals === undefined
        ? { kind: 'ask', rule: rule.id, failClosed }
        : { kind: 'ask', rule: rule.id, approvals: rule.approvals, failClosed };
    }
    return { kind: 'none', failClosed };
  }

  /** One log line per rule per minute (the request's command and client say where, never its arguments). */
  #failed(rule: CompiledRule, facts: RuleFacts, e: Error): void {
    const now = this.#clock.now();
    const last = this.#logged.get(rule.id);
    if (last !== undefined && now - last < RULE_ERROR_LOG_MS) return;
    this.#logged.set(rule.id, now);
    this.#log.log('warn', 'rule_failed', {
      rule: rule.id,
      decision: rule.decision,
      command: facts.command,
      client: facts.client,
      error: e.message,
    });
  }
}
