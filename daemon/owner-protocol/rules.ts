/**
 * The owners' rule frames (contract 18): `rules`, `rule_add`, `rule_update`, `rule_remove`. A rule's `when`
 * is compiled here, as a grant's is (grants.ts): an expression that does not compile, names an unknown
 * variable or function, or is not boolean is a BadMessage saying what is wrong; `approvals` goes with `ask`
 * only (contract 11). Every refusal names the field and what it accepts.
 */
import { z } from 'zod';
import { hasForbiddenCharacter } from '../base/index.js';
import { compileExpression, MAX_EXPRESSION_CHARS } from '../rules/index.js';
import { must, reqId, strict } from './fields.js';

/** Contract 11: a rule's id. */
export const RULE_ID_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;
/** Where an added rule may go among the owners' rules (0: first; absent: last). */
export const RULE_POSITION_MAX = 10_000;

const ID = 'a rule id (^[a-z][a-z0-9-]{0,31}$)';
const ruleId = (field: string) => z.string(must(field, ID)).regex(RULE_ID_PATTERN, must(field, ID));
const WHEN = `a boolean CEL expression of at most ${MAX_EXPRESSION_CHARS} characters (contract 11)`;
const when = (field: string) =>
  z
    .string(must(field, WHEN))
    .max(MAX_EXPRESSION_CHARS, must(field, WHEN))
    .superRefine((text, ctx) => {
      const c = compileExpression(text);
      if (!c.ok) ctx.addIssue({ code: 'custom', message: `${field} ${c.why}` });
    });
const decision = (field: string) => z.enum(['allow', 'deny', 'ask'], must(field, 'allow, deny or ask'));
const NOTE = 'a string of at most 500 characters without control or bidirectional characters';
const note = (field: string) =>
  z
    .string(must(field, NOTE))
    .max(500, must(field, NOTE))
    .refine((t) => !hasForbiddenCharacter(t), must(field, NOTE));
const APPROVALS = 'an integer from 1 to 5 (with decision "ask" only)';
const approvals = (field: string) =>
  z
    .number(must(field, APPROVALS))
    .int(must(field, APPROVALS))
    .min(1, must(field, APPROVALS))
    .max(5, must(field, APPROVALS));
const POSITION = `an integer from 0 (first of the owners' rules) to ${RULE_POSITION_MAX}`;

export const rulesFrame = z.strictObject({ type: z.literal('rules'), req_id: reqId }, strict);

export const ruleAddFrame = z.strictObject(
  {
    type: z.literal('rule_add'),
    req_id: reqId,
    rule: z
      .strictObject(
        {
          id: ruleId('rule.id').optional(),
          when: when('rule.when'),
          decision: decision('rule.decision'),
          note: note('rule.note').optional(),
          approvals: approvals('rule.approvals').optional(),
        },
        strict,
      )
      .refine((r) => r.approvals === undefined || r.decision === 'ask', {
        message: 'rule.approvals is accepted only with decision "ask"',
      }),
    position: z
      .number(must('position', POSITION))
      .int(must('position', POSITION))
      .min(0, must('position', POSITION))
      .max(RULE_POSITION_MAX, must('position', POSITION))
      .optional(),
  },
  strict,
);

export const ruleUpdateFrame = z.strictObject(
  {
    type: z.literal('rule_update'),
    req_id: reqId,
    id: ruleId('id'),
    when: when('when').optional(),
    decision: decision('decision').optional(),
    /** An empty note removes it. */
    note: note('note').optional(),
    approvals: approvals('approvals').optional(),
    enabled: z.boolean(must('enabled', 'true or false')).optional(),
  },
  strict,
);

export const ruleRemoveFrame = z.strictObject(
  { type: z.literal('rule_remove'), req_id: reqId, id: ruleId('id') },
  strict,
);

export type RulesFrame = z.infer<typeof rulesFrame>;
export type RuleAddFrame = z.infer<typeof ruleAddFrame>;
export type RuleUpdateFrame = z.infer<typeof ruleUpdateFrame>;
export type RuleRemoveFrame = z.infer<typeof ruleRemoveFrame>;
