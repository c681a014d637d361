/**
 * The words of `ogf-bridge/1` (contracts.md 3.3 and 6) without any dependency: the bridge client is
 * spawned once per cue, so what it imports decides its start-up time (zod alone roughly doubles it).
 * `protocol.ts` builds its zod schemas from these lists; `session-check.ts` checks with them by hand.
 */

export const PROTOCOL = 'ogf-bridge/1';
export const ACTIONS = ['none', 'wave', 'nod', 'shake_head', 'small_guts_pose', 'celebrate'] as const;
export const EMOTIONS = [
  'neutral',
  'happy',
  'excited',
  'curious',
  'surprised',
  'concerned',
  'sad',
  'proud',
] as const;
export const GAZES = ['neutral', 'user', 'content', 'away'] as const;
export const MESSAGE_MAX_CODE_POINTS = 120;
export const TTL_DEFAULT_MS = 3000;
export const TTL_MIN_MS = 100;
export const TTL_MAX_MS = 10_000;
/** Frames on the bridge are small; anything larger is refused (ws `maxPayload`). */
export const MAX_FRAME_BYTES = 64 * 1024;

export type Action = (typeof ACTIONS)[number];
export type Emotion = (typeof EMOTIONS)[number];
export type Gaze = (typeof GAZES)[number];

/** Handshake error codes the app may send (contract 6 step 2). */
export const HANDSHAKE_ERROR_CODES = ['SessionUnknown', 'ProtocolUnsupported'] as const;
/** The bridge client's `code` on a `delivered` line (contract 4): the one code that is not a reason. */
export const DELIVERED_CODE = 'Delivered';

/** Nack codes the app may send (contract 6 step 4). */
export const NACK_CODES = ['Busy', 'Expired', 'Invalid'] as const;
export type NackCode = (typeof NACK_CODES)[number];

export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
// C0 controls, DEL and C1 controls (contract 3.3).
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
export const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/u;
/** ISO-8601 UTC with milliseconds (rule 8), as zod's `iso.datetime({precision: 3})` accepts it. */
export const ISO_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Counts Unicode code points (a message is limited in code points, not UTF-16 units). */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Describes a received value for an error message: `a string`, `true`, `null`, `an array`, `missing`. */
export function describeInput(value: unknown): string {
  if (value === undefined) return 'nothing (it is required)';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'a non-finite number';
  if (typeof value === 'string') return 'a string';
  if (Array.isArray(value)) return 'an array';
  return `an ${typeof value}`;
}

/** The one line `ogf-bridge-client deliver` prints (contract 4). */
export interface DeliverLine {
  outcome: 'delivered' | 'not_delivered' | 'unknown';
  code: string;
  detail: string;
  ack?: { type: 'cue_ack'; cue_id: string; applied_at: string; duplicate: boolean };
}
