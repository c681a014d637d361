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
const GRANT_ID = 'a grant id (8 to 64 of A-Z a-z 0-9 _ -)';

const approveGrant = z.strictObject(
  {
    same_args: z.boolean(must('grant.same_args', SAME_ARGS)),
    ttl_s: ttlS,
    uses: uses.optional(),
    note: grantNote.optional(),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? `grant must be an object {same_args, ttl_s, uses?, note?}, got ${describeInput(issue.input)}`
        : strict.error(issue as { code?: string; keys?: string[] }),
  },
);

export const approveFrame = z.strictObject(
  { type: z.literal('approve'), req_id: reqId, id, version, grant: approveGrant.optional() },
  strict,
);
export const grantFrame = z.strictObject(
  {
    type: z.literal('grant'),
    req_id: reqId,
    command,
    client,
    args: args.optional(),
    ttl_s: ttlS,
    uses: uses.optional(),
    note: grantNote.optional(),
  },
  strict,
);
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
  },
  strict,
);

/**
 * An addition to contract 5: a command's whole arguments, which its View carries only as a preview when
 * they are over 16 KiB of JSON (`args_truncated`, core/args-preview.ts). Any command an owner can see.
 */
export const argsFrame = z.strictObject({ type: z.literal('args'), req_id: reqId, id }, strict);

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
