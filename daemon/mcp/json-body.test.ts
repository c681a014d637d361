/**
 * `/mcp` bodies parsed with their `__proto__` keys kept in sight (contract 3.3: an unknown property is
 * refused, never silently dropped), now with the renaming reviver skipped on texts that cannot hold one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROTO_KEY, parseJsonBody, protoKeysRenamed } from './json-body.js';

describe('[c3.2.bad-input] a /mcp body as JSON', () => {
  it('a text that holds no __proto__ key parses exactly as JSON.parse parses it (500 values)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(parseJsonBody(text)).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 500, seed: 41 },
    );
  });

  it('[attack] a __proto__ key is renamed however it is written: spelt out, or with \\u escapes', () => {
    for (const key of ['__proto__', '\\u005f_proto__', '__pro\\u0074o__', '\\u005F\\u005Fproto__']) {
      const body = parseJsonBody(
        `{"params":{"arguments":{"${key}":{"polluted":true},"tag":"x"},"list":[{"${key}":1}]}}`,
      ) as { params: { arguments: Record<string, unknown>; list: Array<Record<string, unknown>> } };
      const args = body.params.arguments;
      expect(Object.keys(args), key).toEqual([PROTO_KEY, 'tag']);
      expect(args[PROTO_KEY]).toEqual({ polluted: true });
      expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
      expect(Object.keys(body.params.list[0]!)).toEqual([PROTO_KEY]);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('other escapes and the word itself inside a value change nothing else', () => {
    expect(parseJsonBody('{"a":"\\u00e9\\n","b":"__proto__"}')).toStrictEqual({ a: 'é\n', b: '__proto__' });
    expect(() => parseJsonBody('{"a":')).toThrow(SyntaxError);
  });

  it('a line with __proto__ keys among others, renamed in its text, reads as the body parsed (300 lines)', () => {
    const key = fc.oneof(
      fc.constantFrom('"__proto__"', '"\\u005f_proto__"', '"__proto__\\\\"'),
      fc.string().map((k) => JSON.stringify(k)),
    );
    const entries = fc.array(fc.tuple(key, fc.jsonValue(), fc.constantFrom('', ' ', '\n\t')), {
      maxLength: 5,
    });
    fc.assert(
      fc.property(entries, entries, (outer, inner) => {
        const obj = (es: Array<[string, unknown, string]>, tail: string) =>
          `{${[...es.map(([k, v, ws]) => `${k}${ws}:${JSON.stringify(v)}`), `"in"${tail}`].join(',')}}`;
        const text = obj(outer, `:[${obj(inner, ':0')}]`);
        expect(JSON.parse(protoKeysRenamed(text))).toStrictEqual(parseJsonBody(text));
      }),
      { numRuns: 300, seed: 41 },
    );
  });
});
