/**
 * The owner's decisions on a command (contracts 5 and 9): `approve` (with a grant to allow again, and a
 * passkey's assertion: contract 13.3), `deny`, `reconcile` of an unknown outcome, and `args`, a command's
 * whole arguments when its View carries only a preview.
 */
import { z } from 'zod';
import { id, must, reqId, strict, version } from './fields.js';
import { approveGrant } from './grants.js';

/** The longest deny or reconcile note we keep: a few paragraphs, far below the frame cap. */
export const NOTE_MAX = 2000;

const NOTE = `a string of at most ${NOTE_MAX} characters`;
const note = z.string(must('note', NOTE)).max(NOTE_MAX, must('note', NOTE));
const OUTCOME = 'one of delivered, not_delivered';

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

/**
 * Contract 20: take a succeeded file write back — queues the owner's own command writing the file's previous
 * content (`revert_of` names the original); the owner's sending it is that command's approval.
 */
export const revertFrame = z.strictObject({ type: z.literal('revert'), req_id: reqId, id }, strict);
/**
 * Contract 20 ("checked by reading it"): before the card offers the confirm, the daemon reads the file and
 * answers with the diff back, or `NotRevertible`. Queues nothing.
 */
export const revertCheckFrame = z.strictObject(
  { type: z.literal('revert_check'), req_id: reqId, id },
  strict,
);

export type ApproveFrame = z.infer<typeof approveFrame>;
export type DenyFrame = z.infer<typeof denyFrame>;
export type ReconcileFrame = z.infer<typeof reconcileFrame>;
export type ArgsFrame = z.infer<typeof argsFrame>;
