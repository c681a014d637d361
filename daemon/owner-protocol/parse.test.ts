import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES, parseClientFrame } from './parse.js';

const bad = (text: string) => {
  const r = parseClientFrame(text);
  if (r.ok) throw new Error(`accepted ${text}`);
  return r;
};

describe('parseClientFrame (contract 5)', () => {
  it('accepts the four frame types exactly as the contract writes them', () => {
    expect(parseClientFrame('{"type":"approve","req_id":"1","id":"c_abcdefgh","version":3}')).toEqual({
      ok: true,
      frame: { type: 'approve', req_id: '1', id: 'c_abcdefgh', version: 3 },
    });
    expect(
      parseClientFrame('{"type":"deny","req_id":"2","id":"c_abcdefgh","version":1,"note":"no"}').ok,
    ).toBe(true);
    expect(
      parseClientFrame('{"type":"reconcile","req_id":"3","id":"c_abcdefgh","outcome":"not_delivered"}').ok,
    ).toBe(true);
    expect(parseClientFrame('{"type":"history","req_id":"4","before":"c_abcdefgh","limit":500}').ok).toBe(
      true,
    );
    expect(parseClientFrame('{"type":"history","req_id":"5"}').ok).toBe(true);
  });

  it('[c5.owner-frames-bounded] accepts args {req_id, id} and names what is wrong with one', () => {
    expect(parseClientFrame('{"type":"args","req_id":"6","id":"c_abcdefgh"}')).toEqual({
      ok: true,
      frame: { type: 'args', req_id: '6', id: 'c_abcdefgh' },
    });
    expect(bad('{"type":"args","req_id":"7"}').message).toMatch(
      /^id must be a pending_id string.*got nothing/,
    );
    expect(bad('{"type":"args","req_id":"8","id":"c_x","version":1}').message).toMatch(
      /version: unknown field/,
    );
  });

  it('[c16.grant-node] grant and approve … grant take an optional node: a node name or *, nothing else', () => {
    const grant = (node: unknown) =>
      JSON.stringify({ type: 'grant', req_id: 'g', command: 'say', client: '*', ttl_s: 600, node });
    expect(parseClientFrame(grant('alpha')).ok).toBe(true);
    expect(parseClientFrame(grant('*')).ok).toBe(true);
    expect(bad(grant('Alpha')).message).toMatch(
      /^node must be a node name .* or \* for every node, got a string/,
    );
    expect(bad(grant('')).message).toMatch(/^node must be a node name/);
    const approve = (node: unknown) =>
      JSON.stringify({
        type: 'approve',
        req_id: 'a',
        id: 'c_abcdefgh',
        version: 1,
        grant: { same_args: false, ttl_s: 600, node },
      });
    expect(parseClientFrame(approve('*')).ok).toBe(true);
    expect(bad(approve(7)).message).toMatch(/^grant\.node must be a node name .* got 7/);
  });

  it('refuses non-JSON and non-objects without a req_id', () => {
    expect(bad('nope')).toEqual({ ok: false, req_id: null, message: 'the frame is not valid JSON' });
    expect(bad('[]').req_id).toBeNull();
    expect(bad('null').message).toMatch(/must be a JSON object, got null/);
  });

  it('names the unknown type and keeps a readable req_id', () => {
    expect(bad('{"type":"launch","req_id":"x"}')).toEqual({
      ok: false,
      req_id: 'x',
      // Every type the parser accepts, in SCHEMAS's order (a new frame is listed without editing this test).
      message: `type must be one of ${CLIENT_TYPES.join(', ')}, got "launch"`,
    });
    expect(CLIENT_TYPES.slice(0, 4)).toEqual(['approve', 'deny', 'reconcile', 'history']);
    expect(CLIENT_TYPES).toHaveLength(new Set(CLIENT_TYPES).size);
    expect(bad('{"req_id":"y"}').message).toMatch(/got nothing/);
    expect(bad(`{"type":"history","req_id":"${'z'.repeat(65)}"}`).req_id).toBeNull();
  });

  it('names the failing field and what it accepts', () => {
    expect(bad('{"type":"approve","req_id":"1","id":"c_abcdefgh","version":"3"}').message).toBe(
      "version must be an integer >= 1 (the View's current version), got a string",
    );
    expect(bad('{"type":"approve","req_id":"1","id":"c_abcdefgh","version":1.5}').message).toMatch(
      /^version must be/,
    );
    expect(bad('{"type":"approve","req_id":"1","version":1}').message).toMatch(/^id must be .*got nothing/);
    expect(bad('{"type":"deny","req_id":"1","id":"c_abcdefgh","version":1,"note":5}').message).toMatch(
      /^note must be/,
    );
    expect(bad('{"type":"reconcile","req_id":"1","id":"c_abcdefgh","outcome":"yes"}').message).toMatch(
      /^outcome must be one of delivered, not_delivered/,
    );
    expect(bad('{"type":"history","req_id":"1","limit":0}').message).toMatch(
      /^limit must be an integer from 1 to 500/,
    );
    expect(bad('{"type":"history","req_id":"1","extra":1}').message).toMatch(/extra: unknown field/);
    expect(bad('{"type":"approve","id":"c_abcdefgh","version":1}').message).toMatch(/^req_id must be/);
  });
});
