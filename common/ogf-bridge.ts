/**
 * The words and wire shapes of `ogf-bridge/1` (contracts.md 3.3, 4 and 6) without any dependency, shared by
 * the daemon (the `ogf_cue` tool, the session file it writes, the line it reads back) and the bridge client.
 * Dependency-free for two reasons: common/ imports nothing (the panel's bundle is built from it too), and
 * the bridge client is spawned once per cue, so what it imports decides its start-up time (zod alone
 * roughly doubles it). Each edge builds its zod schemas from these lists and wordings (the daemon's
 * kinds/cue/input.ts, bridge-client/protocol.ts); bridge-client/session-check.ts checks with them by hand.
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

/** The one line `ogf-bridge-client deliver` prints (contract 4). */
export interface DeliverLine {
  outcome: 'delivered' | 'not_delivered' | 'unknown';
  code: string;
  detail: string;
  ack?: { type: 'cue_ack'; cue_id: string; applied_at: string; duplicate: boolean };
}

/** What each cue field accepts, in the words every edge's error uses (`intensity must be <this>, got …`). */
export const CUE_ACCEPTS = {
  session_id: 'a UUID (8-4-4-4-12 hexadecimal digits)',
  action: `one of ${ACTIONS.join(', ')}`,
  emotion: `one of ${EMOTIONS.join(', ')}`,
  gaze: `one of ${GAZES.join(', ')}`,
  intensity: 'a number from 0 to 1',
  ttl_ms: `an integer from ${TTL_MIN_MS} to ${TTL_MAX_MS} (milliseconds)`,
  message: `null or a string of at most ${MESSAGE_MAX_CODE_POINTS} Unicode code points without control characters`,
} as const;

/** A cue as delivered (contract 3.3): no session, no wait. */
export interface Cue {
  action: Action;
  emotion: Emotion;
  intensity: number;
  gaze: Gaze;
  ttl_ms: number;
  /** `null` clears the message; absent leaves it alone. */
  message?: string | null;
}

/** The one-time session file the daemon writes and the bridge client reads (contract 4). */
export interface SessionFile {
  v: 1;
  pending_id: string;
  bridge_url: string;
  /** Lower-cased. */
  session_id: string;
  cue: Cue;
  deliver_by: string;
  delivery_timeout_ms: number;
}
