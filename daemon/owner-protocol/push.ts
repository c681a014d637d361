/**
 * The Web Push owner frames (contract 13.2): `push_subscribe`, `push_unsubscribe`, and our `push_list`.
 */
import { z } from 'zod';
import { must, reqId, strict } from './fields.js';

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

export type PushSubscribeFrame = z.infer<typeof pushSubscribeFrame>;
export type PushUnsubscribeFrame = z.infer<typeof pushUnsubscribeFrame>;
export type PushListFrame = z.infer<typeof pushListFrame>;
