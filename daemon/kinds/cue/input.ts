/**
 * What the daemon validates at the cue's two edges: `ogf_cue`'s input from the AI (contract 3.3) and the
 * one line the bridge client prints back (contract 4). The bridge client validates the session file and
 * the frames with its own schemas (bridge-client/protocol.ts); both are built from the same lists, wordings
 * and shapes (common/ogf-bridge.ts), so the daemon imports nothing of the bridge client (issue 37 item 1).
 */
import { z } from 'zod';
import { mustBe } from '../../../common/field-errors.js';
import {
  ACTIONS,
  CONTROL_RE,
  CUE_ACCEPTS,
  codePoints,
  type DeliverLine,
  EMOTIONS,
  GAZES,
  MESSAGE_MAX_CODE_POINTS,
  TTL_DEFAULT_MS,
  TTL_MAX_MS,
  TTL_MIN_MS,
  UUID_RE,
} from '../../../common/ogf-bridge.js';
import { waitSeconds } from '../../mcp/index.js';

const accepts = <K extends keyof typeof CUE_ACCEPTS>(field: K) => mustBe(field, CUE_ACCEPTS[field]);

/** `ogf_cue`'s input: exactly the seed's schema; any other property is refused. */
export const ogfCueInputSchema = z.strictObject({
  session_id: z
    .string(accepts('session_id'))
    .regex(UUID_RE, accepts('session_id'))
    .transform((s) => s.toLowerCase()),
  action: z.enum(ACTIONS, accepts('action')),
  emotion: z.enum(EMOTIONS, accepts('emotion')),
  intensity: z.number(accepts('intensity')).min(0, accepts('intensity')).max(1, accepts('intensity')),
  gaze: z.enum(GAZES, accepts('gaze')),
  ttl_ms: z
    .number(accepts('ttl_ms'))
    .int(accepts('ttl_ms'))
    .min(TTL_MIN_MS, accepts('ttl_ms'))
    .max(TTL_MAX_MS, accepts('ttl_ms'))
    .default(TTL_DEFAULT_MS),
  /** `null` clears the message; absent leaves it alone (contract 3.3). */
  message: z
    .string(accepts('message'))
    .refine((s) => codePoints(s) <= MESSAGE_MAX_CODE_POINTS, {
      error: (issue) =>
        `message must be ${CUE_ACCEPTS.message}, got ${codePoints(String(issue.input))} code points`,
    })
    .refine((s) => !CONTROL_RE.test(s), {
      error: `message must be ${CUE_ACCEPTS.message}, got a control character`,
    })
    .nullable()
    .optional(),
  wait_seconds: waitSeconds,
});
export type OgfCueInput = z.infer<typeof ogfCueInputSchema>;

const isoTime = z.iso.datetime({ precision: 3, error: 'must be an ISO-8601 UTC time with milliseconds' });

/** The bridge client's one line (contract 4); its ack's time is stored and shown, so an ISO time only. */
export const deliverLineSchema = z.object({
  outcome: z.enum(['delivered', 'not_delivered', 'unknown']),
  code: z.string(),
  detail: z.string(),
  ack: z
    .object({
      type: z.literal('cue_ack'),
      cue_id: z.string(),
      applied_at: isoTime,
      duplicate: z.boolean(),
    })
    .optional(),
}) satisfies z.ZodType<DeliverLine>;
