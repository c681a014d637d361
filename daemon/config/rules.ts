/**
 * The rules section (contracts.md 11): `"rules":[{"id","when","decision","note"?,"approvals"?}]`, in order.
 * The shape is checked here; each `when` is compiled by daemon/rules/ (a CEL expression over the typed
 * variables), so an expression that does not compile, names an unknown variable or function, or is not
 * boolean is a config error naming the rule's id (exit 2), never a surprise on a request.
 */
import { z } from 'zod';
import { hasForbiddenCharacter } from '../base/index.js';
import { compileExpression, MAX_EXPRESSION_CHARS } from '../rules/index.js';

export const RULE_ID_RE = /^[a-z][a-z0-9-]{0,31}$/;

export const ruleSchema = z
  .strictObject({
    id: z.string().regex(RULE_ID_RE, 'must match ^[a-z][a-z0-9-]{0,31}$'),
    when: z
      .string('must be a CEL expression (a string)')
      .max(MAX_EXPRESSION_CHARS, `must be at most ${MAX_EXPRESSION_CHARS} characters`),
    decision: z.enum(['allow', 'deny', 'ask'], 'must be "allow", "deny" or "ask"'),
    note: z
      .string()
      .max(500, 'must be at most 500 characters')
      .refine((t) => !hasForbiddenCharacter(t), 'must hold no control or bidirectional characters')
      .optional(),
    approvals: z
      .number()
      .int('must be an integer from 1 to 5')
      .min(1, 'must be an integer from 1 to 5')
      .max(5, 'must be an integer from 1 to 5')
      .optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.approvals !== undefined && rule.decision !== 'ask') {
      ctx.addIssue({
        code: 'custom',
        path: ['approvals'],
        message: `rule ${rule.id}: approvals is accepted only with decision "ask"`,
      });
    }
    const c = compileExpression(rule.when);
    if (!c.ok) ctx.addIssue({ code: 'custom', path: ['when'], message: `rule ${rule.id}: ${c.why}` });
  });

export type RuleConfigEntry = z.infer<typeof ruleSchema>;

/** Contract 11: ids are unique. The index of the first repeated one, or -1. */
export function repeatedRuleId(rules: readonly { id: string }[]): number {
  const seen = new Set<string>();
  return rules.findIndex((r) => {
    if (seen.has(r.id)) return true;
    seen.add(r.id);
    return false;
  });
}
