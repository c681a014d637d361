/**
 * The bridge client's zod schemas of `ogf-bridge/1` (contracts.md section 6), the cue (3.3) and the session
 * file (4), which the app-side endpoint (endpoint.ts, the avatar app) and the tests validate with. The words
 * and shapes are common/ogf-bridge.ts, shared with the daemon, which validates `ogf_cue` with its own
 * schema built from the same lists and wordings (daemon/kinds/cue/input.ts).
 *
 * Every schema names the field and what it accepts in its error, so an edge can show the first issue's
 * message as is: `intensity must be a number from 0 to 1, got a string`.
 */
import { z } from 'zod';
import { mustBe } from '../common/field-errors.js';
import {
  ACTIONS,
  CONTROL_RE,
  CUE_ACCEPTS,
  type Cue,
  codePoints,
  EMOTIONS,
  GAZES,
  MESSAGE_MAX_CODE_POINTS,
  NACK_CODES,
  type SessionFile,
  TTL_MAX_MS,
  TTL_MIN_MS,
  UUID_RE,
} from '../common/ogf-bridge.js';

export type { Cue, DeliverLine, SessionFile } from '../common/ogf-bridge.js';
// The words and shapes live in common/ogf-bridge.ts (no zod there: the daemon and this client share them);
// re-exported so the client's own modules and the avatar app keep importing them from here.
export {
  ACTIONS,
  type Action,
  EMOTIONS,
  type Emotion,
  GAZES,
  type Gaze,
  MESSAGE_MAX_CODE_POINTS,
  PROTOCOL,
  TTL_DEFAULT_MS,
} from '../common/ogf-bridge.js';

/** A session UUID, lower-cased on entry (contract 3.3). */
export const sessionIdSchema = z
  .string(mustBe('session_id', CUE_ACCEPTS.session_id))
  .regex(UUID_RE, mustBe('session_id', CUE_ACCEPTS.session_id))
  .transform((s) => s.toLowerCase());

export const actionSchema = z.enum(ACTIONS, mustBe('action', CUE_ACCEPTS.action));
export const emotionSchema = z.enum(EMOTIONS, mustBe('emotion', CUE_ACCEPTS.emotion));
export const gazeSchema = z.enum(GAZES, mustBe('gaze', CUE_ACCEPTS.gaze));
const INTENSITY = CUE_ACCEPTS.intensity;
export const intensitySchema = z
  .number(mustBe('intensity', INTENSITY))
  .min(0, mustBe('intensity', INTENSITY))
  .max(1, mustBe('intensity', INTENSITY));
const TTL = CUE_ACCEPTS.ttl_ms;
export const ttlSchema = z
  .number(mustBe('ttl_ms', TTL))
  .int(mustBe('ttl_ms', TTL))
  .min(TTL_MIN_MS, mustBe('ttl_ms', TTL))
  .max(TTL_MAX_MS, mustBe('ttl_ms', TTL));
const MESSAGE = CUE_ACCEPTS.message;
/** `null` clears the message; absent leaves it alone (contract 3.3). */
export const messageSchema = z
  .string(mustBe('message', MESSAGE))
  .refine((s) => codePoints(s) <= MESSAGE_MAX_CODE_POINTS, {
    error: (issue) => `message must be ${MESSAGE}, got ${codePoints(String(issue.input))} code points`,
  })
  .refine((s) => !CONTROL_RE.test(s), { error: `message must be ${MESSAGE}, got a control character` })
  .nullable();

/** The cue fields, as delivered (no session, no wait). */
export const cueFieldsShape = {
  action: actionSchema,
  emotion: emotionSchema,
  intensity: intensitySchema,
  gaze: gazeSchema,
  ttl_ms: ttlSchema,
  message: messageSchema.optional(),
};

export const cueSchema = z.strictObject(cueFieldsShape) satisfies z.ZodType<Cue>;

const isoTime = z.iso.datetime({ precision: 3, error: 'must be an ISO-8601 UTC time with milliseconds' });

/** The one-time session file (contract 4). */
export const sessionFileSchema = z.strictObject({
  v: z.literal(1),
  pending_id: z.string().min(1).max(64),
  bridge_url: z.string().regex(/^wss?:\/\//, 'bridge_url must be a ws:// or wss:// URL'),
  session_id: sessionIdSchema,
  cue: cueSchema,
  deliver_by: isoTime,
  delivery_timeout_ms: z.number().int().min(1).max(600_000),
}) satisfies z.ZodType<SessionFile>;

// ---- ogf-bridge/1 frames -------------------------------------------------------------------------

export const helloFrame = z.object({
  type: z.literal('hello'),
  protocol: z.string().max(64),
  session_id: z.string().max(64),
  client: z.string().max(128),
});
export const welcomeFrame = z.object({
  type: z.literal('welcome'),
  instance_id: z.string().max(128),
  ready: z.boolean(),
});
export const bridgeErrorFrame = z.object({
  type: z.literal('error'),
  code: z.string().max(64),
  message: z.string().max(1024),
});
export const cueFrame = z.strictObject({
  type: z.literal('cue'),
  cue_id: z.string().min(1).max(64),
  ...cueFieldsShape,
  deliver_by: isoTime,
});
export const cueAckFrame = z.object({
  type: z.literal('cue_ack'),
  cue_id: z.string(),
  // Stored and shown by the daemon: an ISO time only, so an app can never smuggle text (or a UUID) in.
  applied_at: isoTime,
  duplicate: z.boolean(),
});
export const cueNackFrame = z.object({
  type: z.literal('cue_nack'),
  cue_id: z.string(),
  code: z.enum(NACK_CODES),
  message: z.string().max(1024),
});

/** What the app may send to the client. */
export const appFrame = z.discriminatedUnion('type', [
  welcomeFrame,
  bridgeErrorFrame,
  cueAckFrame,
  cueNackFrame,
]);
/** What the client may send to the app. */
export const clientFrame = z.discriminatedUnion('type', [helloFrame, cueFrame]);

export type HelloFrame = z.infer<typeof helloFrame>;
export type WelcomeFrame = z.infer<typeof welcomeFrame>;
export type BridgeErrorFrame = z.infer<typeof bridgeErrorFrame>;
export type CueFrame = z.infer<typeof cueFrame>;
export type CueAckFrame = z.infer<typeof cueAckFrame>;
export type CueNackFrame = z.infer<typeof cueNackFrame>;
export type AppFrame = z.infer<typeof appFrame>;
export type ClientFrame = z.infer<typeof clientFrame>;
