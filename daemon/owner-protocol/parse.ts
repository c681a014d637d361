/**
 * The owner WebSocket protocol `ogf-broker-owner/1` (contracts.md section 5): every frame an owner may send,
 * by type, and the one function that reads a frame. What the server sends is typed in
 * common/owner-messages.ts, which the panel imports too, so zod never ships to the browser and both sides
 * agree on one definition.
 *
 * A new frame is its schema (in the file of its group) and its line in SCHEMAS: the type names the parser
 * accepts, CLIENT_TYPES and the ClientFrame union all follow from SCHEMAS, and the owner edge's handler
 * table (daemon/owner/frames.ts) then fails to compile until the frame has its handler.
 */
import type { z } from 'zod';
import { describeInput } from '../../common/field-errors.js';
import {
  approveFrame,
  argsFrame,
  denyFrame,
  reconcileFrame,
  revertCheckFrame,
  revertFrame,
} from './decisions.js';
import { doctorFrame, notifyTestFrame, reloadFrame } from './diagnose.js';
import { grantFrame, grantsFrame, policyTestFrame, revokeFrame } from './grants.js';
import { auditFrame, historyFrame } from './history.js';
import {
  approveChallengeFrame,
  passkeyBeginFrame,
  passkeyFinishFrame,
  passkeyListFrame,
  passkeyRemoveFrame,
} from './passkeys.js';
import { pushListFrame, pushSubscribeFrame, pushUnsubscribeFrame } from './push.js';
import { ruleAddFrame, ruleRemoveFrame, rulesFrame, ruleUpdateFrame } from './rules.js';

/** Frames over this many bytes close the socket with 1009 (contract 5). */
export const MAX_FRAME_BYTES = 64 * 1024;

/** Every frame an owner may send, by its `type`, in the order a refusal lists them. */
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
  // v3, contract 13.3: passkeys and passkey-signed approvals.
  approve_challenge: approveChallengeFrame,
  passkey_begin: passkeyBeginFrame,
  passkey_finish: passkeyFinishFrame,
  passkey_list: passkeyListFrame,
  passkey_remove: passkeyRemoveFrame,
  push_subscribe: pushSubscribeFrame,
  push_unsubscribe: pushUnsubscribeFrame,
  push_list: pushListFrame,
  // Contract 17: the terminal's doctor, notify test and reload ask the running daemon (diagnose.ts).
  doctor: doctorFrame,
  notify_test: notifyTestFrame,
  reload: reloadFrame,
  // Contract 18: the owners' rules.
  rules: rulesFrame,
  rule_add: ruleAddFrame,
  rule_update: ruleUpdateFrame,
  rule_remove: ruleRemoveFrame,
  // Contract 20 (v4): take a succeeded file write back.
  revert: revertFrame,
  revert_check: revertCheckFrame,
} as const;

export type ClientType = keyof typeof SCHEMAS;
export const CLIENT_TYPES = Object.keys(SCHEMAS) as readonly ClientType[];
/** Every frame an owner may send, as its schema proved it. */
export type ClientFrame = { [T in ClientType]: z.infer<(typeof SCHEMAS)[T]> }[ClientType];
/** The frame of one type, as its schema proved it. */
export type FrameOf<T extends ClientType> = Extract<ClientFrame, { type: T }>;

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
  if (typeof type !== 'string' || !Object.hasOwn(SCHEMAS, type)) {
    const got = typeof type === 'string' ? JSON.stringify(type.slice(0, 64)) : describeInput(type);
    return { ok: false, req_id: rid, message: `type must be one of ${CLIENT_TYPES.join(', ')}, got ${got}` };
  }
  const parsed = SCHEMAS[type as ClientType].safeParse(obj);
  if (!parsed.success) {
    return { ok: false, req_id: rid, message: parsed.error.issues[0]?.message ?? `invalid ${type} frame` };
  }
  return { ok: true, frame: parsed.data };
}
