/**
 * The grant owner frames (contracts 8 and 11): `grant`, `revoke`, `grants` and `policy_test`, and the fields
 * a grant is made of, which `approve` also carries when the owner allows again (decisions.ts). Every refusal
 * names the field and what it accepts (`ttl_s must be an integer number of seconds from 60 to 2592000, got
 * a string`), the same wording the MCP edge uses, so an owner reading a BadMessage knows what to fix.
 */
import { z } from 'zod';
import { describeInput } from '../../common/field-errors.js';
import { hasForbiddenCharacter } from '../base/index.js';
import { GRANT_TTL_MAX_S, GRANT_TTL_MIN_S, GRANT_USES_MAX } from '../core/index.js';
import {
  compileExpression,
  MAX_EXPRESSION_CHARS,
  POLICY_TEST_DEFAULT,
  POLICY_TEST_MAX,
} from '../rules/index.js';
import { must, reqId, strict } from './fields.js';

// Contract 8: grants. ttl_s 60..2592000 (required), uses 1..10000 (optional), a client name or `*`.
const TTL = `an integer number of seconds from ${GRANT_TTL_MIN_S} to ${GRANT_TTL_MAX_S}`;
const ttlS = z
  .number(must('ttl_s', TTL))
  .int(must('ttl_s', TTL))
  .min(GRANT_TTL_MIN_S, must('ttl_s', TTL))
  .max(GRANT_TTL_MAX_S, must('ttl_s', TTL));
const USES = `an integer from 1 to ${GRANT_USES_MAX}`;
const uses = z
  .number(must('uses', USES))
  .int(must('uses', USES))
  .min(1, must('uses', USES))
  .max(GRANT_USES_MAX, must('uses', USES));
const GRANT_NOTE = 'a string of at most 500 characters without control or bidirectional characters';
const grantNote = z
  .string(must('note', GRANT_NOTE))
  .max(500, must('note', GRANT_NOTE))
  .refine((t) => !hasForbiddenCharacter(t), must('note', GRANT_NOTE));
const COMMAND = 'a command name (1 to 128 characters): a catalog command or an upstream tool';
const command = z
  .string(must('command', COMMAND))
  .min(1, must('command', COMMAND))
  .max(128, must('command', COMMAND));
const CLIENT = 'a client name (^[a-z0-9][a-z0-9_-]{0,31}$) or * for every client';
const client = z
  .string(must('client', CLIENT))
  .regex(/^(?:\*|[a-z0-9][a-z0-9_-]{0,31})$/, must('client', CLIENT));
const ARGS = 'an object of the exact arguments to allow (omit it to allow any)';
const args = z.record(z.string(), z.unknown(), must('args', ARGS));
const SAME_ARGS = 'true (only these exact arguments) or false (any arguments)';
const WHEN = `a boolean CEL expression of at most ${MAX_EXPRESSION_CHARS} characters (contract 11)`;
/**
 * Contract 11: a grant's `when`, compiled here (edges validate): an expression that does not compile, names
 * an unknown variable or function, or is not boolean is a BadMessage saying what is wrong.
 */
const when = z
  .string(must('when', WHEN))
  .max(MAX_EXPRESSION_CHARS, must('when', WHEN))
  .superRefine((text, ctx) => {
    const c = compileExpression(text);
    if (!c.ok) ctx.addIssue({ code: 'custom', message: `when ${c.why}` });
  });
const GRANT_ID = 'a grant id (8 to 64 of A-Z a-z 0-9 _ -)';
/**
 * Contract 16 (v4): the node whose commands a grant approves — a node name (config `node_name`'s pattern)
 * or `*` on purpose for every node. Absent: the node of the card or terminal it is made from.
 */
const NODE = 'a node name (^[a-z][a-z0-9-]{0,31}$) or * for every node';
const grantNode = (field: string) =>
  z.string(must(field, NODE)).regex(/^(?:\*|[a-z][a-z0-9-]{0,31})$/, must(field, NODE));

export const approveGrant = z
  .strictObject(
    {
      same_args: z.boolean(must('grant.same_args', SAME_ARGS)).optional(),
      when: when.optional(),
      ttl_s: ttlS,
      uses: uses.optional(),
      note: grantNote.optional(),
      node: grantNode('grant.node').optional(),
    },
    {
      error: (issue) =>
        issue.code === 'invalid_type'
          ? `grant must be an object {same_args | when, ttl_s, uses?, note?, node?}, got ${describeInput(issue.input)}`
          : strict.error(issue as { code?: string; keys?: string[] }),
    },
  )
  // Contract 11: `when` instead of `same_args`; exactly one of them.
  .superRefine((g, ctx) => {
    if (g.same_args === undefined && g.when === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `grant.same_args must be ${SAME_ARGS}, got nothing (or give grant.when, a CEL expression)`,
      });
    } else if (g.same_args !== undefined && g.when !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message:
          'grant must carry exactly one of same_args (true: these exact arguments; false: any) and when (a CEL expression)',
      });
    }
  });

export const grantFrame = z
  .strictObject(
    {
      type: z.literal('grant'),
      req_id: reqId,
      command,
      client,
      args: args.optional(),
      when: when.optional(),
      ttl_s: ttlS,
      uses: uses.optional(),
      note: grantNote.optional(),
      node: grantNode('node').optional(),
    },
    strict,
  )
  .refine((g) => g.args === undefined || g.when === undefined, {
    message: 'args and when cannot both be given: a grant matches exact arguments, or a CEL expression',
  });
export const revokeFrame = z.strictObject(
  {
    type: z.literal('revoke'),
    req_id: reqId,
    grant_id: z.string(must('grant_id', GRANT_ID)).regex(/^[A-Za-z0-9_-]{8,64}$/, must('grant_id', GRANT_ID)),
  },
  strict,
);
/** Not in contract 5: `grant list --all` needs ended grants too, which the snapshot does not carry. */
export const grantsFrame = z.strictObject(
  {
    type: z.literal('grants'),
    req_id: reqId,
    all: z.boolean(must('all', 'true or false')).optional(),
  },
  strict,
);
const TEST_LIMIT = `an integer from 1 to ${POLICY_TEST_MAX} (default ${POLICY_TEST_DEFAULT})`;
/**
 * Contract 11: a rule (`{when, decision}`) or a grant (`{command, client, args? | when?}`) against the newest
 * `limit` commands.
 */
export const policyTestFrame = z
  .strictObject(
    {
      type: z.literal('policy_test'),
      req_id: reqId,
      rule: z
        .strictObject(
          { when, decision: z.enum(['allow', 'deny', 'ask'], must('rule.decision', 'allow, deny or ask')) },
          strict,
        )
        .optional(),
      grant: z
        .strictObject(
          {
            command,
            client,
            args: args.optional(),
            when: when.optional(),
            node: grantNode('grant.node').optional(),
          },
          strict,
        )
        .refine((g) => g.args === undefined || g.when === undefined, {
          message: 'grant.args and grant.when cannot both be given',
        })
        .optional(),
      limit: z
        .number(must('limit', TEST_LIMIT))
        .int(must('limit', TEST_LIMIT))
        .min(1, must('limit', TEST_LIMIT))
        .max(POLICY_TEST_MAX, must('limit', TEST_LIMIT))
        .optional(),
    },
    strict,
  )
  .refine((f) => (f.rule === undefined) !== (f.grant === undefined), {
    message:
      'policy_test must carry exactly one of rule {when, decision} and grant {command, client, args? | when?}',
  });
export type GrantFrame = z.infer<typeof grantFrame>;
export type RevokeFrame = z.infer<typeof revokeFrame>;
export type GrantsFrame = z.infer<typeof grantsFrame>;
export type PolicyTestFrame = z.infer<typeof policyTestFrame>;
