import { describe, expect, it } from 'vitest';
import { ACTIONS, EMOTIONS, GAZES } from '../../common/ogf-bridge.js';
import { parseRunInput } from '../kinds/catalog/source.js';
import { OGF_CUE_TOOL, parseCueInput } from '../kinds/cue/source.js';

const UUID = 'A1B2C3D4-E5F6-4789-8ABC-DEF012345678';
const cue = { session_id: UUID, action: 'nod', emotion: 'proud', intensity: 0.3, gaze: 'away' };

describe('parseInput (the cue and catalog sources)', () => {
  it('lower-cases the session UUID and fills the defaults', () => {
    const r = parseCueInput(cue);
    expect(r).toEqual({
      ok: true,
      value: { ...cue, session_id: UUID.toLowerCase(), ttl_ms: 3000, wait_seconds: 50 },
    });
  });

  it('names an unknown property and what the tool accepts, without echoing values', () => {
    const r = parseCueInput({ ...cue, note: 'secret-ish' });
    expect(r).toEqual({
      ok: false,
      message:
        'note must be absent (ogf_cue accepts only session_id, action, emotion, intensity, gaze, ttl_ms, message, wait_seconds), got a string',
    });
  });

  it('never echoes a bad session_id', () => {
    const r = parseCueInput({ ...cue, session_id: `${UUID}0` });
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain(UUID);
  });

  it('counts justification in code points and refuses control characters but not newlines', () => {
    const base = { command: 'x', args: {} };
    expect(parseRunInput({ ...base, justification: '😀'.repeat(500) }).ok).toBe(true);
    expect(parseRunInput({ ...base, justification: '😀'.repeat(501) }).ok).toBe(false);
    expect(parseRunInput({ ...base, justification: 'line\nline\tend' }).ok).toBe(true);
    expect(parseRunInput({ ...base, justification: 'bell\u0007' }).ok).toBe(false);
  });

  it('[c1.3.text-controls] refuses bidi controls in a justification (contract 3.2), naming what it accepts', () => {
    const base = { command: 'x', args: {} };
    for (const bidi of ['\u061c', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069']) {
      expect(parseRunInput({ ...base, justification: `a${bidi}b` })).toEqual({
        ok: false,
        message:
          'justification must be a string of at most 500 characters without control or bidirectional characters other than newline and tab, got a control character',
      });
    }
    expect(parseRunInput({ ...base, justification: 'עברית and English' }).ok).toBe(true);
  });

  it('publishes the same lists it enforces', () => {
    const props = OGF_CUE_TOOL.inputSchema.properties as Record<string, { enum?: unknown }>;
    expect(props.action!.enum).toEqual([...ACTIONS]);
    expect(props.emotion!.enum).toEqual([...EMOTIONS]);
    expect(props.gaze!.enum).toEqual([...GAZES]);
  });
});
