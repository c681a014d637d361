/**
 * The owner WebSocket protocol `ogf-broker-owner/1` (contracts.md section 5): zod schemas for what an
 * owner may send. What the server sends is typed in messages.ts, which the browser panel imports
 * (types only), so the schemas and zod never ship to the browser and both sides agree on one definition.
 *
 * Every refusal names the field and what it accepts (`version must be an integer >= 1, got a string`),
 * the same wording the MCP edge uses, so an owner reading a BadMessage knows what to fix.
 */
import { z } from 'zod';
import { describeInput } from '../../bridge-client/protocol.js';
import { hasForbiddenCharacter } from '../base/index.js';
import { GRANT_TTL_MAX_S, GRANT_TTL_MIN_S, GRANT_USES_MAX } from '../core/index.js';
import {
  compileExpression,
  MAX_EXPRESSION_CHARS,
  POLICY_TEST_DEFAULT,
  POLICY_TEST_MAX,
} from '../rules/index.js';

/** Frames over this many bytes close the socket with 1009 (contract 5). */
export const MAX_FRAME_BYTES = 64 * 1024;
/** `history` answers at most this many commands (contract 5). */
export const HISTORY_MAX = 500;
export const HISTORY_DEFAULT = 100;
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
] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

function must(field: string, accepts: string) {
  return {
    error: (issue: { input?: unknown }) => `${field} must be ${accepts}, got ${describeInput(issue.input)}`,
  };
}

const REQ_ID = 'a string of at most 64 characters';
const reqId = z.string(must('req_id', REQ_ID)).max(64, must('req_id', REQ_ID));
const ID = 'a pending_id string (1 to 128 characters)';
const id = z.string(must('id', ID)).min(1, must('id', ID)).max(128, must('id', ID));
const VERSION = "an integer >= 1 (the View's current version)";
const version = z
  .number(must('version', VERSION))
  .int(must('version', VERSION))
  .min(1, must('version', VERSION));
const NOTE = `a string of at most ${NOTE_MAX} characters`;
const note = z.string(must('note', NOTE)).max(NOTE_MAX, must('note', NOTE));
const OUTCOME = 'one of delivered, not_delivered';
const LIMIT = `an integer from 1 to ${HISTORY_MAX}`;
const BEFORE = 'a pending_id or an ISO-8601 time (1 to 128 characters)';
/** The longest text the history search takes (contract 14). */
export const SEARCH_TEXT_MAX = 200;
const TEXT = `a string of at most ${SEARCH_TEXT_MAX} characters`;
const STATES = [
  'awaiting_review',
  'approved',
  'running',
  'succeeded',
  'denied',
  'failed',
  'unknown',
] as const;
const STATE = `one of ${STATES.join(', ')}`;
const SEARCH_CLIENT = 'a client name (1 to 64 characters)';
const TIME = 'an ISO-8601 time such as 2026-11-30T10:00:00.000Z';
const isoTime = (field: string) =>
  z
    .string(must(field, TIME))
    .max(40, must(field, TIME))
    .refine((v) => /^\d{4}-\d{2}-\d{2}/.test(v) && !Number.isNaN(Date.parse(v)), must(field, TIME))
    .transform((v) => new Date(Date.parse(v)).toISOString());
const IDS = `an array of 1 to ${HISTORY_MAX} pending_ids`;

const strict = {
  error: (issue: { code?: string; keys?: string[] }) =>
    issue.code === 'unrecognized_keys'
      ? `${(issue.keys ?? []).join(', ')}: unknown field (not accepted here)`
      : undefined,
};

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

const approveGrant = z
  .strictObject(
    {
      same_args: z.boolean(must('grant.same_args', SAME_ARGS)).optional(),
      when: when.optional(),
      ttl_s: ttlS,
      uses: uses.optional(),
      note: grantNote.optional(),
    },
    {
      error: (issue) =>
        issue.code === 'invalid_type'
          ? `grant must be an object {same_args | when, ttl_s, uses?, note?}, got ${describeInput(issue.input)}`
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
const WEBAUTHN_RESPONSE = 'the WebAuthn answer of the browser (startRegistration)';
const CREDENTIAL_ID = 'a credential id (base64url, 1 to 1024 characters) from passkey_list';

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
/** Contract 13.3: a challenge over exactly what approving `id` at `version` means. */
export const approveChallengeFrame = z.strictObject(
  { type: z.literal('approve_challenge'), req_id: reqId, id, version },
  strict,
);
export const passkeyBeginFrame = z.strictObject({ type: z.literal('passkey_begin'), req_id: reqId }, strict);
export const passkeyFinishFrame = z.strictObject(
  {
    type: z.literal('passkey_finish'),
    req_id: reqId,
    response: z.record(z.string(), z.unknown(), must('response', WEBAUTHN_RESPONSE)),
  },
  strict,
);
export const passkeyListFrame = z.strictObject({ type: z.literal('passkey_list'), req_id: reqId }, strict);
export const passkeyRemoveFrame = z.strictObject(
  {
    type: z.literal('passkey_remove'),
    req_id: reqId,
    credential_id: z
      .string(must('credential_id', CREDENTIAL_ID))
      .regex(/^[A-Za-z0-9_-]{1,1024}$/, must('credential_id', CREDENTIAL_ID)),
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
export const historyFrame = z.strictObject(
  {
    type: z.literal('history'),
    req_id: reqId,
    before: z
      .string(must('before', BEFORE))
      .min(1, must('before', BEFORE))
      .max(128, must('before', BEFORE))
      .optional(),
    limit: z
      .number(must('limit', LIMIT))
      .int(must('limit', LIMIT))
      .min(1, must('limit', LIMIT))
      .max(HISTORY_MAX, must('limit', LIMIT))
      .optional(),
    // Contract 14: the history search; each field narrows what `history` answers.
    text: z.string(must('text', TEXT)).max(SEARCH_TEXT_MAX, must('text', TEXT)).optional(),
    state: z.enum(STATES, must('state', STATE)).optional(),
    client: z
      .string(must('client', SEARCH_CLIENT))
      .min(1, must('client', SEARCH_CLIENT))
      .max(64, must('client', SEARCH_CLIENT))
      .optional(),
    since: isoTime('since').optional(),
    until: isoTime('until').optional(),
  },
  strict,
);

/**
 * Contract 14: a command's audit entries ("who did what, when"), or — with `command_ids` — the entries of
 * the commands a panel shows, as the JSONL export when `format` is `jsonl`.
 */
export const auditFrame = z
  .strictObject(
    {
      type: z.literal('audit'),
      req_id: reqId,
      command_id: id.optional(),
      command_ids: z
        .array(id, must('command_ids', IDS))
        .min(1, must('command_ids', IDS))
        .max(HISTORY_MAX, must('command_ids', IDS))
        .optional(),
      format: z.literal('jsonl', must('format', 'jsonl')).optional(),
    },
    strict,
  )
  .refine((f) => (f.command_id === undefined) !== (f.command_ids === undefined), {
    message:
      'command_id must be a pending_id string, or command_ids an array of them (exactly one of the two)',
  });

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
        .strictObject({ command, client, args: args.optional(), when: when.optional() }, strict)
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
// Contract 13.2: Web Push. An endpoint is an https URL, or an http URL on a loopback address (a local push
// relay, and how tests play the push service); the keys are the browser's P-256 public key (65 bytes) and
// its 16-byte auth secret, base64url.
const ENDPOINT = 'an https:// URL (or http:// on a loopback address) of at most 2048 characters';
function isPushEndpoint(u: string): boolean {
  try {
    const url = new URL(u);
    if (url.protocol === 'https:') return url.hostname !== '';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return (
      url.protocol === 'http:' &&
      (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host))
    );
  } catch {
    return false;
  }
}
const endpoint = (field: string) =>
  z
    .string(must(field, ENDPOINT))
    .max(2048, must(field, ENDPOINT))
    .refine(isPushEndpoint, must(field, ENDPOINT));
function base64urlBytes(field: string, bytes: number, first?: number) {
  const accepts = `base64url of ${bytes} bytes${first === undefined ? '' : ' (an uncompressed P-256 point)'}`;
  return z
    .string(must(field, accepts))
    .max(200, must(field, accepts))
    .refine(
      (t) => {
        if (!/^[A-Za-z0-9_-]+={0,2}$/.test(t)) return false;
        const b = Buffer.from(t, 'base64url');
        return b.length === bytes && (first === undefined || b[0] === first);
      },
      must(field, accepts),
    );
}
export const pushSubscribeFrame = z.strictObject(
  {
    type: z.literal('push_subscribe'),
    req_id: reqId,
    subscription: z.strictObject(
      {
        endpoint: endpoint('subscription.endpoint'),
        expirationTime: z.number().nullable().optional(),
        keys: z.strictObject(
          {
            p256dh: base64urlBytes('subscription.keys.p256dh', 65, 4),
            auth: base64urlBytes('subscription.keys.auth', 16),
          },
          strict,
        ),
      },
      strict,
    ),
  },
  strict,
);
export const pushUnsubscribeFrame = z.strictObject(
  { type: z.literal('push_unsubscribe'), req_id: reqId, endpoint: endpoint('endpoint') },
  strict,
);
/** Not in contract 13.2, which says only that the panel lists them: the signed-in owner's devices. */
export const pushListFrame = z.strictObject({ type: z.literal('push_list'), req_id: reqId }, strict);

export type ApproveFrame = z.infer<typeof approveFrame>;
export type DenyFrame = z.infer<typeof denyFrame>;
export type ReconcileFrame = z.infer<typeof reconcileFrame>;
export type HistoryFrame = z.infer<typeof historyFrame>;
export type GrantFrame = z.infer<typeof grantFrame>;
export type RevokeFrame = z.infer<typeof revokeFrame>;
export type GrantsFrame = z.infer<typeof grantsFrame>;
export type ArgsFrame = z.infer<typeof argsFrame>;
export type PolicyTestFrame = z.infer<typeof policyTestFrame>;
export type AuditFrame = z.infer<typeof auditFrame>;
export type ApproveChallengeFrame = z.infer<typeof approveChallengeFrame>;
export type PasskeyFrame =
  | z.infer<typeof passkeyBeginFrame>
  | z.infer<typeof passkeyFinishFrame>
  | z.infer<typeof passkeyListFrame>
  | z.infer<typeof passkeyRemoveFrame>;
export type PushSubscribeFrame = z.infer<typeof pushSubscribeFrame>;
export type PushUnsubscribeFrame = z.infer<typeof pushUnsubscribeFrame>;
export type PushListFrame = z.infer<typeof pushListFrame>;
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
  | PushListFrame;

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
