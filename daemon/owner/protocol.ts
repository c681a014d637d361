/**
 * The owner WebSocket protocol `ogf-broker-owner/1` (contracts.md section 5): zod schemas for what an
 * owner may send. What the server sends is typed in messages.ts, which the browser panel imports
 * (types only), so the schemas and zod never ship to the browser and both sides agree on one definition.
 *
 * Every refusal names the field and what it accepts (`version must be an integer >= 1, got a string`),
 * the same wording the MCP edge uses, so an owner reading a BadMessage knows what to fix.
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
import {
  type DoctorFrame,
  doctorFrame,
  type NotifyTestFrame,
  notifyTestFrame,
  type ReloadFrame,
  reloadFrame,
} from './protocol-diagnose.js';
import { id, must, reqId, strict, version } from './protocol-fields.js';
import {
  type AuditFrame,
  auditFrame,
  HISTORY_DEFAULT,
  HISTORY_MAX,
  type HistoryFrame,
  historyFrame,
  SEARCH_TEXT_MAX,
} from './protocol-history.js';
import {
  type ApproveChallengeFrame,
  approveChallengeFrame,
  type PasskeyFrame,
  passkeyBeginFrame,
  passkeyFinishFrame,
  passkeyListFrame,
  passkeyRemoveFrame,
} from './protocol-passkeys.js';
import {
  type PushListFrame,
  type PushSubscribeFrame,
  type PushUnsubscribeFrame,
  pushListFrame,
  pushSubscribeFrame,
  pushUnsubscribeFrame,
} from './protocol-push.js';

/** Frames over this many bytes close the socket with 1009 (contract 5). */
export const MAX_FRAME_BYTES = 64 * 1024;
/** The longest deny or reconcile note we keep: a few paragraphs, far below the frame cap. */
export const NOTE_MAX = 2000;

export const CLIENT_TYPES = [
  'approve',
  'deny',
  'reconcile',
  'history',
  'grant',
  'revoke',
  'grants',
  'args',
  'policy_test',
  'audit',
  // v3, contract 13.3: passkeys and passkey-signed approvals.
  'approve_challenge',
  'passkey_begin',
  'passkey_finish',
  'passkey_list',
  'passkey_remove',
  'push_subscribe',
  'push_unsubscribe',
  'push_list',
  // Contract 17: the terminal's doctor, notify test and reload ask the running daemon (protocol-diagnose.ts).
  'doctor',
  'notify_test',
  'reload',
] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

const NOTE = `a string of at most ${NOTE_MAX} characters`;
const note = z.string(must('note', NOTE)).max(NOTE_MAX, must('note', NOTE));
const OUTCOME = 'one of delivered, not_delivered';

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

const approveGrant = z
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

const ASSERTION = 'the WebAuthn answer (AuthenticationResponseJSON) to the approve_challenge of this version';

export const approveFrame = z.strictObject(
  {
    type: z.literal('approve'),
    req_id: reqId,
    id,
    version,
    grant: approveGrant.optional(),
    // Contract 13.3: checked by the owner edge (passkeys/approval.ts) before the broker sees the approval.
    assertion: z.record(z.string(), z.unknown(), must('assertion', ASSERTION)).optional(),
  },
  strict,
);
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
export const denyFrame = z.strictObject(
  { type: z.literal('deny'), req_id: reqId, id, version, note: note.optional() },
  strict,
);
export const reconcileFrame = z.strictObject(
  {
    type: z.literal('reconcile'),
    req_id: reqId,
    id,
    outcome: z.enum(['delivered', 'not_delivered'], must('outcome', OUTCOME)),
    note: note.optional(),
  },
  strict,
);
/**
 * An addition to contract 5: a command's whole arguments, which its View carries only as a preview when
 * they are over 16 KiB of JSON (`args_truncated`, core/args-preview.ts). Any command an owner can see.
 */
export const argsFrame = z.strictObject({ type: z.literal('args'), req_id: reqId, id }, strict);

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
export type ApproveFrame = z.infer<typeof approveFrame>;
export type DenyFrame = z.infer<typeof denyFrame>;
export type ReconcileFrame = z.infer<typeof reconcileFrame>;
export type GrantFrame = z.infer<typeof grantFrame>;
export type RevokeFrame = z.infer<typeof revokeFrame>;
export type GrantsFrame = z.infer<typeof grantsFrame>;
export type ArgsFrame = z.infer<typeof argsFrame>;
export type PolicyTestFrame = z.infer<typeof policyTestFrame>;
export type {
  ApproveChallengeFrame,
  AuditFrame,
  DoctorFrame,
  HistoryFrame,
  NotifyTestFrame,
  PasskeyFrame,
  PushListFrame,
  PushSubscribeFrame,
  PushUnsubscribeFrame,
  ReloadFrame,
};
export { HISTORY_DEFAULT, HISTORY_MAX, SEARCH_TEXT_MAX };
export type ClientFrame =
  | ApproveFrame
  | DenyFrame
  | ReconcileFrame
  | HistoryFrame
  | GrantFrame
  | RevokeFrame
  | GrantsFrame
  | ArgsFrame
  | PolicyTestFrame
  | AuditFrame
  | ApproveChallengeFrame
  | PasskeyFrame
  | PushSubscribeFrame
  | PushUnsubscribeFrame
  | PushListFrame
  | DoctorFrame
  | NotifyTestFrame
  | ReloadFrame;

const SCHEMAS = {
  approve: approveFrame,
  deny: denyFrame,
  reconcile: reconcileFrame,
  history: historyFrame,
  grant: grantFrame,
  revoke: revokeFrame,
  grants: grantsFrame,
  args: argsFrame,
  policy_test: policyTestFrame,
  audit: auditFrame,
  approve_challenge: approveChallengeFrame,
  passkey_begin: passkeyBeginFrame,
  passkey_finish: passkeyFinishFrame,
  passkey_list: passkeyListFrame,
  passkey_remove: passkeyRemoveFrame,
  push_subscribe: pushSubscribeFrame,
  push_unsubscribe: pushUnsubscribeFrame,
  push_list: pushListFrame,
  doctor: doctorFrame,
  notify_test: notifyTestFrame,
  reload: reloadFrame,
} as const;

export type ParsedFrame =
  | { ok: true; frame: ClientFrame }
  | { ok: false; req_id: string | null; message: string };

/**
 * Parses one text frame. Never throws: a frame that is not JSON, has an unknown `type` or fails its
 * type's schema comes back as a BadMessage description carrying the `req_id` when one could be read.
 */
export function parseClientFrame(text: string): ParsedFrame {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, req_id: null, message: 'the frame is not valid JSON' };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, req_id: null, message: `the frame must be a JSON object, got ${describeInput(raw)}` };
  }
  const obj = raw as Record<string, unknown>;
  const rid = typeof obj.req_id === 'string' && obj.req_id.length <= 64 ? obj.req_id : null;
  const type = obj.type;
  if (typeof type !== 'string' || !(CLIENT_TYPES as readonly string[]).includes(type)) {
    const got = typeof type === 'string' ? JSON.stringify(type.slice(0, 64)) : describeInput(type);
    return { ok: false, req_id: rid, message: `type must be one of ${CLIENT_TYPES.join(', ')}, got ${got}` };
  }
  const parsed = SCHEMAS[type as ClientType].safeParse(obj);
  if (!parsed.success) {
    return { ok: false, req_id: rid, message: parsed.error.issues[0]?.message ?? `invalid ${type} frame` };
  }
  return { ok: true, frame: parsed.data };
}
