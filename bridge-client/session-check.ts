/**
 * Hand-written checks for what the bridge client reads: the session file (contract 4) and the app's
 * frames (contract 6). They accept exactly what `sessionFileSchema` and `appFrame` in protocol.ts accept
 * (`session-check.test.ts` proves it on generated input) but import nothing, because the client is
 * spawned per cue and zod would roughly double its start-up time.
 */

import { describeInput } from '../common/field-errors.js';
import {
  ACTIONS,
  CONTROL_RE,
  codePoints,
  EMOTIONS,
  GAZES,
  ISO_MS_RE,
  MESSAGE_MAX_CODE_POINTS,
  NACK_CODES,
  TTL_MAX_MS,
  TTL_MIN_MS,
  UUID_RE,
} from '../common/ogf-bridge.js';

export interface CheckedCue {
  action: string;
  emotion: string;
  intensity: number;
  gaze: string;
  ttl_ms: number;
  message?: string | null;
}

/** A validated session file; `session_id` already lower-cased. */
export interface CheckedSessionFile {
  v: 1;
  pending_id: string;
  bridge_url: string;
  session_id: string;
  cue: CheckedCue;
  deliver_by: string;
  delivery_timeout_ms: number;
}

export type AppFrameChecked =
  | { type: 'welcome'; instance_id: string; ready: boolean }
  | { type: 'error'; code: string; message: string }
  | { type: 'cue_ack'; cue_id: string; applied_at: string; duplicate: boolean }
  | { type: 'cue_nack'; cue_id: string; code: (typeof NACK_CODES)[number]; message: string };

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

type Obj = Record<string, unknown>;

class Invalid extends Error {}

function fail(field: string, accepts: string, got: unknown): never {
  throw new Invalid(`${field} must be ${accepts}, got ${describeInput(got)}`);
}
function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function onlyKeys(o: Obj, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw new Invalid(`${where}${k}: unknown key`);
}
function str(o: Obj, k: string, max: number, min = 0): string {
  const v = o[k];
  // Lengths in code points, as zod 4 measures them.
  if (typeof v !== 'string') fail(k, `a string of ${min} to ${max} characters`, v);
  const n = v.length > max || v.length < min * 2 ? codePoints(v) : v.length;
  if (n > max || n < min) fail(k, `a string of ${min} to ${max} characters`, v);
  return v;
}
function oneOf(o: Obj, k: string, values: readonly string[]): string {
  const v = o[k];
  if (typeof v !== 'string' || !values.includes(v)) fail(k, `one of ${values.join(', ')}`, v);
  return v;
}
function isoTime(o: Obj, k: string): string {
  const v = o[k];
  if (
    typeof v !== 'string' ||
    !ISO_MS_RE.test(v) ||
    Number.isNaN(Date.parse(v)) ||
    new Date(v).toISOString() !== v
  ) {
    fail(k, 'an ISO-8601 UTC time with milliseconds', v);
  }
  return v;
}
function int(o: Obj, k: string, min: number, max: number): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    fail(k, `an integer from ${min} to ${max}`, v);
  return v;
}

function checkCue(c: unknown): CheckedCue {
  if (!isObj(c)) fail('cue', 'an object', c);
  onlyKeys(c, ['action', 'emotion', 'intensity', 'gaze', 'ttl_ms', 'message'], 'cue.');
  const cue: CheckedCue = {
    action: oneOf(c, 'action', ACTIONS),
    emotion: oneOf(c, 'emotion', EMOTIONS),
    intensity: 0,
    gaze: oneOf(c, 'gaze', GAZES),
    ttl_ms: int(c, 'ttl_ms', TTL_MIN_MS, TTL_MAX_MS),
  };
  const i = c.intensity;
  if (typeof i !== 'number' || !Number.isFinite(i) || i < 0 || i > 1)
    fail('intensity', 'a number from 0 to 1', i);
  cue.intensity = i;
  if ('message' in c) {
    const m = c.message;
    if (m !== null) {
      if (typeof m !== 'string' || codePoints(m) > MESSAGE_MAX_CODE_POINTS || CONTROL_RE.test(m)) {
        fail(
          'message',
          `null or a string of at most ${MESSAGE_MAX_CODE_POINTS} code points without control characters`,
          m,
        );
      }
    }
    cue.message = m;
  }
  return cue;
}

/** Checks a parsed session file (contract 4). Messages never quote the session UUID. */
export function checkSessionFile(raw: unknown): Checked<CheckedSessionFile> {
  try {
    if (!isObj(raw)) fail('session file', 'a JSON object', raw);
    onlyKeys(
      raw,
      ['v', 'pending_id', 'bridge_url', 'session_id', 'cue', 'deliver_by', 'delivery_timeout_ms'],
      '',
    );
    if (raw.v !== 1) fail('v', '1', raw.v);
    const pending_id = str(raw, 'pending_id', 64, 1);
    const bridge_url = raw.bridge_url;
    if (typeof bridge_url !== 'string' || !/^wss?:\/\//.test(bridge_url))
      fail('bridge_url', 'a ws:// or wss:// URL', bridge_url);
    const sid = raw.session_id;
    if (typeof sid !== 'string' || !UUID_RE.test(sid))
      fail('session_id', 'a UUID (8-4-4-4-12 hexadecimal digits)', sid);
    const cue = checkCue(raw.cue);
    const deliver_by = isoTime(raw, 'deliver_by');
    const delivery_timeout_ms = int(raw, 'delivery_timeout_ms', 1, 600_000);
    return {
      ok: true,
      value: {
        v: 1,
        pending_id,
        bridge_url,
        session_id: sid.toLowerCase(),
        cue,
        deliver_by,
        delivery_timeout_ms,
      },
    };
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, message: e.message };
    throw e;
  }
}

/** Checks one frame from the app (contract 6 steps 2 and 4); extra keys are tolerated, as in protocol.ts. */
export function checkAppFrame(raw: unknown): Checked<AppFrameChecked> {
  try {
    if (!isObj(raw)) fail('frame', 'a JSON object', raw);
    switch (raw.type) {
      case 'welcome': {
        if (typeof raw.ready !== 'boolean') fail('ready', 'a boolean', raw.ready);
        return {
          ok: true,
          value: { type: 'welcome', instance_id: str(raw, 'instance_id', 128), ready: raw.ready },
        };
      }
      case 'error':
        return {
          ok: true,
          value: { type: 'error', code: str(raw, 'code', 64), message: str(raw, 'message', 1024) },
        };
      case 'cue_ack': {
        if (typeof raw.duplicate !== 'boolean') fail('duplicate', 'a boolean', raw.duplicate);
        const cue_id = str(raw, 'cue_id', Number.MAX_SAFE_INTEGER);
        // The daemon stores and shows applied_at (result.delivery): only an ISO time may pass, never
        // free text from the app, which knows the session UUID and could echo it (contract 3.3, rule 8).
        const applied_at = isoTime(raw, 'applied_at');
        return { ok: true, value: { type: 'cue_ack', cue_id, applied_at, duplicate: raw.duplicate } };
      }
      case 'cue_nack': {
        const cue_id = str(raw, 'cue_id', Number.MAX_SAFE_INTEGER);
        const code = oneOf(raw, 'code', NACK_CODES) as (typeof NACK_CODES)[number];
        return { ok: true, value: { type: 'cue_nack', cue_id, code, message: str(raw, 'message', 1024) } };
      }
      default:
        return fail('type', 'one of welcome, error, cue_ack, cue_nack', raw.type);
    }
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, message: e.message };
    throw e;
  }
}
