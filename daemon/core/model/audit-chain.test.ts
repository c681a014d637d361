/**
 * The chain's canonical JSON (contract 14) over what an AI sent. RFC 8785 refuses strings that are not
 * well-formed Unicode, and the `canonicalize` package throws on a lone surrogate: before this was handled,
 * one request whose arguments held `"\ud800"` failed its submit's transaction with -32603 — and with it every
 * other change the group commit had put in the same batch.
 */
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, chainEntry, GENESIS_HASH, sealEntry } from './audit-chain.js';

describe('[c14.chain] canonical JSON of anything JSON can carry', () => {
  it('[attack] a lone surrogate, in a value or a key, is hashed as U+FFFD instead of throwing', () => {
    const hostile = { text: 'a\ud800b', '\udfffkey': ['\ud83d'], fine: '😀' };
    expect(canonicalJson(hostile)).toBe('{"fine":"😀","text":"a\ufffdb","\ufffdkey":["\ufffd"]}');
    const e = chainEntry(
      {
        at: '2026-12-02T08:00:00.000Z',
        actor: { kind: 'client', name: 'local' },
        action: 'submit',
        detail: hostile,
      },
      1,
      GENESIS_HASH,
    );
    expect(sealEntry(e).hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('well-formed text is untouched: the same canonical form as RFC 8785', () => {
    expect(canonicalJson({ b: 'x\u2028y', a: [1, 'é'] })).toBe('{"a":[1,"é"],"b":"x\u2028y"}');
  });
});

/** The contract's rule, stated apart from the product's code: each lone surrogate hashed as U+FFFD. */
function replaceLone(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const next = s.charCodeAt(i + 1);
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += s[i]! + s[i + 1]!;
      i++;
    } else out += c >= 0xd800 && c <= 0xdfff ? '\ufffd' : s[i]!;
  }
  return out;
}

/** What canonicalJson hashes: strings and keys with no lone surrogate; an own `__proto__` key never read. */
function oracle(v: unknown): unknown {
  if (typeof v === 'string') return replaceLone(v);
  if (Array.isArray(v)) return v.map(oracle);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k !== '__proto__') Object.defineProperty(out, replaceLone(k), { value: oracle(x), enumerable: true });
  }
  return out;
}

describe('[c14.chain] canonical JSON, with and without a copy', () => {
  it('whatever an entry holds, well-formed or not, hashes as the rule says (1,000 values off the wire)', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.constantFrom('__proto__', '\ud800', 'a\udfffb', '\udc00\ud800', '😀', 'é'),
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        text,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.array(fc.tuple(text, tie('value')), { maxLength: 4 }),
      ),
    }));
    // Pairs become an object through JSON text, so `__proto__` is an own key as JSON.parse makes it.
    const asJson = (v: unknown): string =>
      Array.isArray(v) && v.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string')
        ? `{${v.map(([k, x]) => `${JSON.stringify(k)}:${asJson(x)}`).join(',')}}`
        : Array.isArray(v)
          ? `[${v.map(asJson).join(',')}]`
          : JSON.stringify(v);
    fc.assert(
      fc.property(value, (v) => {
        const parsed: unknown = JSON.parse(asJson(v));
        expect(canonicalJson(parsed)).toBe(canonicalize(oracle(parsed)));
      }),
      { numRuns: 1000, seed: 41 },
    );
  });

  it('an own __proto__ key is left out, as before; the rest of the entry is hashed as it is', () => {
    expect(canonicalJson(JSON.parse('{"b":"x","__proto__":{"a":1},"c":["\\ud800"]}'))).toBe(
      '{"b":"x","c":["\ufffd"]}',
    );
    expect(canonicalJson(JSON.parse('{"b":"x","__proto__":7}'))).toBe('{"b":"x"}');
  });
});
