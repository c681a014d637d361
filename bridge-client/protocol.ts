/**
 * `ogf-bridge/1` (contracts.md section 6) and the cue itself (section 3.3): the single source of truth
 * that the daemon's `ogf_cue` tool, the session file, the bridge client and the avatar app all validate with.
 *
 * Every schema names the field and what it accepts in its error, so an edge can show the first issue's
 * message as is: `intensity must be a number from 0 to 1, got a string`.
 */
import { z } from 'zod';
import {
  ACTIONS,
  CONTROL_RE,
  codePoints,
  type DeliverLine,
  describeInput,
  EMOTIONS,
  GAZES,
  MESSAGE_MAX_CODE_POINTS,
  NACK_CODES,
  TTL_DEFAULT_MS,
  UUID_RE,
} from './vocabulary.js';

// The words live in vocabulary.ts (no zod there, so the per-cue bridge client starts fast); re-exported
// so every other module keeps importing them from here.
export {
  ACTIONS,
  type Action,
  describeInput,
  EMOTIONS,
  type Emotion,
  GAZES,
  type Gaze,
  MESSAGE_MAX_CODE_POINTS,
  PROTOCOL,
  TTL_DEFAULT_MS,
} from './vocabulary.js';
export type { DeliverLine };

/** A zod error callback that says `<field> must be <accepts>, got <what came>`. */
export function mustBe(field: string, accepts: string) {
  return {
    error: (issue: { input?: unknown }) => `${field} must be ${accepts}, got ${describeInput(issue.input)}`,
  };
}

/** A session UUID, lower-cased on entry (contract 3.3). */
export const sessionIdSchema = z
  .string(mustBe('session_id', 'a UUID (8-4-4-4-12 hexadecimal digits)'))
  .regex(UUID_RE, mustBe('session_id', 'a UUID (8-4-4-4-12 hexadecimal digits)'))
  .transform((s) => s.toLowerCase());

const list = (values: readonly string[]) => `one of ${values.join(', ')}`;

export const actionSchema = z.enum(ACTIONS, mustBe('action', list(ACTIONS)));
export const emotionSchema = z.enum(EMOTIONS, mustBe('emotion', list(EMOTIONS)));
export const gazeSchema = z.enum(GAZES, mustBe('gaze', list(GAZES)));
const INTENSITY = 'a number from 0 to 1';
export const intensitySchema = z
  .number(mustBe('intensity', INTENSITY))
  .min(0, mustBe('intensity', INTENSITY))
  .max(1, mustBe('intensity', INTENSITY));
const TTL = 'an integer from 100 to 10000 (milliseconds)';
export const ttlSchema = z
  .number(mustBe('ttl_ms', TTL))
  .int(mustBe('ttl_ms', TTL))
  .min(100, mustBe('ttl_ms', TTL))
  .max(10000, mustBe('ttl_ms', TTL));
const MESSAGE = `null or a string of at most ${MESSAGE_MAX_CODE_POINTS} Unicode code points without control characters`;
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

export const cueSchema = z.strictObject(cueFieldsShape);
export type Cue = z.infer<typeof cueSchema>;

const WAIT = 'a number from 0 to 90 (seconds)';
export const waitSecondsSchema = z
  .number(mustBe('wait_seconds', WAIT))
  .min(0, mustBe('wait_seconds', WAIT))
  .max(90, mustBe('wait_seconds', WAIT));

/** `ogf_cue`'s input: exactly the seed's schema; any other property is refused. */
export const ogfCueInputSchema = z.strictObject({
  session_id: sessionIdSchema,
  ...cueFieldsShape,
  ttl_ms: ttlSchema.default(TTL_DEFAULT_MS),
  wait_seconds: waitSecondsSchema.default(50),
});
export type OgfCueInput = z.infer<typeof ogfCueInputSchema>;

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
});
export type SessionFile = z.infer<typeof sessionFileSchema>;

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

export const deliverLineSchema = z.object({
  outcome: z.enum(['delivered', 'not_delivered', 'unknown']),
  code: z.string(),
  detail: z.string(),
  ack: cueAckFrame.optional(),
});
