/** The hand-written checks must accept exactly what the zod schemas accept (they replace them in the client). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACTIONS, EMOTIONS, GAZES, NACK_CODES } from '../common/ogf-bridge.js';
import { appFrame, sessionFileSchema } from './protocol.js';
import { checkAppFrame, checkSessionFile } from './session-check.js';

const valid = {
  v: 1,
  pending_id: 'c_abc',
  bridge_url: 'ws://127.0.0.1:7720/ogf-bridge',
  session_id: '3F9A1C00-0000-4000-8000-000000000000',
  cue: { action: 'wave', emotion: 'happy', intensity: 0.5, gaze: 'user', ttl_ms: 3000, message: 'hi' },
  deliver_by: '2026-11-30T10:00:00.000Z',
  delivery_timeout_ms: 5000,
};

const anyValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.integer({ min: -5, max: 20_000 }),
  fc.string({ maxLength: 130 }),
  fc.constantFrom(...ACTIONS, ...EMOTIONS, ...GAZES, ...NACK_CODES, 'x\u0007y', '2026-02-30T10:00:00.000Z'),
  fc.constantFrom('ws://h', 'http://h', '2026-11-30T10:00:00.000Z', 'a'.repeat(121), '🙂'.repeat(120)),
  fc.constantFrom(0, 1, 0.5, 100, 10_000, 99, 10_001, 600_000, 600_001, Number.NaN),
);

function mutate(base: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(base) as Record<string, unknown>;
  if (key.startsWith('cue.')) {
    const cue = copy.cue as Record<string, unknown>;
    if (value === undefined) delete cue[key.slice(4)];
    else cue[key.slice(4)] = value;
  } else if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy;
}

describe('session-check agrees with protocol.ts', () => {
  it('accepts the valid file and lower-cases the UUID like sessionIdSchema', () => {
    const r = checkSessionFile(valid);
    expect(r.ok && r.value.session_id).toBe(valid.session_id.toLowerCase());
    expect(sessionFileSchema.parse(valid)).toEqual(r.ok && r.value);
  });

  it('session files: same verdict as sessionFileSchema for any one-field change', () => {
    const keys = [
      ...Object.keys(valid),
      ...Object.keys(valid.cue).map((k) => `cue.${k}`),
      'extra',
      'cue.extra',
    ];
    fc.assert(
      fc.property(fc.constantFrom(...keys), anyValue, (key, value) => {
        const input = mutate(valid, key, value);
        const zodOk = sessionFileSchema.safeParse(input).success;
        const mine = checkSessionFile(input);
        expect(mine.ok, `${key}=${String(value)}`).toBe(zodOk);
        if (!mine.ok) expect(mine.message).not.toContain(valid.session_id);
      }),
      { numRuns: 2000 },
    );
  });

  it('app frames: same verdict as appFrame for any one-field change', () => {
    const frames = [
      { type: 'welcome', instance_id: 'i', ready: true },
      { type: 'error', code: 'SessionUnknown', message: 'm' },
      { type: 'cue_ack', cue_id: 'c', applied_at: '2026-11-30T10:00:00.000Z', duplicate: false },
      { type: 'cue_nack', cue_id: 'c', code: 'Busy', message: 'm' },
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...frames),
        fc.constantFrom(
          'type',
          'instance_id',
          'ready',
          'code',
          'message',
          'cue_id',
          'applied_at',
          'duplicate',
        ),
        anyValue,
        (frame, key, value) => {
          const input = mutate(frame, key, value);
          expect(checkAppFrame(input).ok, `${frame.type}.${key}=${String(value)}`).toBe(
            appFrame.safeParse(input).success,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });
});
