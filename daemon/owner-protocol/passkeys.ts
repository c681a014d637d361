/**
 * The passkey owner frames (contract 13.3): a challenge over exactly what approving a version means, and
 * adding, listing and removing the owner's passkeys. The `approve` frame's `assertion` is in decisions.ts.
 */
import { z } from 'zod';
import { id, must, reqId, strict, version } from './fields.js';

const WEBAUTHN_RESPONSE = 'the WebAuthn answer of the browser (startRegistration)';
const CREDENTIAL_ID = 'a credential id (base64url, 1 to 1024 characters) from passkey_list';

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

export type ApproveChallengeFrame = z.infer<typeof approveChallengeFrame>;
export type PasskeyFrame =
  | z.infer<typeof passkeyBeginFrame>
  | z.infer<typeof passkeyFinishFrame>
  | z.infer<typeof passkeyListFrame>
  | z.infer<typeof passkeyRemoveFrame>;
