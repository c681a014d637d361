/**
 * The variables of a rule (contracts.md 11) for a request or a recorded command: `upstream` and `tool` are
 * what its kind says it targets (core/kind-policy.ts `target`), `""` for other commands.
 */
import type { KindPolicies, RuleSubject } from '../core/index.js';
import type { RuleFacts } from './environment.js';

export function factsOf(s: RuleSubject, kinds: KindPolicies, nowMs: number): RuleFacts {
  const target = kinds.target(s);
  return {
    client: s.client,
    command: s.command,
    upstream: target?.server ?? '',
    tool: target?.tool ?? '',
    args: s.args,
    justification: s.justification ?? '',
    now: new Date(nowMs),
  };
}
