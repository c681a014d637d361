import { describe, expect, it } from 'vitest';
import { compileInputSchema, type Validate } from './schema.js';

function compiled(schema: Record<string, unknown>): Validate {
  const c = compileInputSchema(schema);
  if (!c.ok) throw new Error(c.why);
  return c.validate;
}

const valid = (v: Validate, input: unknown) => v(input).valid;

describe('[c1.3.linear-patterns] upstream inputSchema patterns run on RE2', () => {
  it('answers a catastrophic pattern at once, whatever the length', () => {
    // On a backtracking engine each extra 'a' doubles the time; 5000 of them would never finish.
    const v = compiled({ type: 'string', pattern: '^(a+)+$' });
    expect(valid(v, `${'a'.repeat(5000)}!`)).toBe(false);
    expect(valid(v, 'a'.repeat(5000))).toBe(true);
    const keys = compiled({ type: 'object', patternProperties: { '^(a+)+$': { type: 'integer' } } });
    expect(valid(keys, { [`${'a'.repeat(5000)}!`]: 'not an integer, not governed' })).toBe(true);
    expect(valid(keys, { aaa: 'x' })).toBe(false);
    const names = compiled({ type: 'object', propertyNames: { pattern: '^(a|aa)+$' } });
    expect(valid(names, { [`${'a'.repeat(5000)}b`]: 1 })).toBe(false);
  });

  it('keeps JSON Schema’s meaning: a search, not a whole-value match, in ECMA-262 syntax', () => {
    expect(valid(compiled({ type: 'string', pattern: 'b' }), 'abc')).toBe(true);
    expect(valid(compiled({ type: 'string', pattern: '^\\u00e9$' }), 'é')).toBe(true);
    expect(valid(compiled({ type: 'string', pattern: '^(?<year>\\d{4})$' }), '2026')).toBe(true);
    expect(valid(compiled({ type: 'string', pattern: '^\\p{L}+$' }), 'Łódź')).toBe(true);
  });

  it('gives each pattern of one schema its own matcher', () => {
    const v = compiled({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^x$' }, b: { type: 'string', pattern: '^y$' } },
    });
    expect(valid(v, { a: 'x', b: 'y' })).toBe(true);
    expect(valid(v, { a: 'x', b: 'x' })).toBe(false);
  });

  it('refuses a pattern RE2 cannot compile, saying which and why', () => {
    for (const pattern of ['^(a)\\1$', '^(?=a)a$', '(?<!x)y']) {
      const c = compileInputSchema({ type: 'object', properties: { s: { type: 'string', pattern } } });
      expect(c.ok).toBe(false);
      if (!c.ok) {
        expect(c.why).toContain('its inputSchema has a pattern RE2 cannot compile');
        expect(c.why).toContain(JSON.stringify(pattern));
      }
    }
  });
});

describe('[c7.exposed] upstream inputSchemas compile each on its own, as the SDK would', () => {
  it('validates two schemas with one $id as themselves', () => {
    const same = (type: string) => ({
      $id: 'urn:ogf-test:same',
      type: 'object',
      properties: { n: { type } },
    });
    const text = compiled(same('string'));
    const number = compiled(same('integer'));
    expect([valid(text, { n: 'x' }), valid(text, { n: 1 })]).toEqual([true, false]);
    expect([valid(number, { n: 1 }), valid(number, { n: 'x' })]).toEqual([true, false]);
  });

  it('reads each declared dialect with its own engine (the SDK’s classes)', () => {
    const tuple = { type: 'array', prefixItems: [{ type: 'string' }] };
    const dependent = { type: 'object', dependentRequired: { a: ['b'] } };
    const at = (uri: string | undefined, s: Record<string, unknown>) =>
      compiled(uri === undefined ? s : { $schema: uri, ...s });
    // prefixItems is 2020-12's; dependentRequired is 2019-09's and 2020-12's, not draft-07's.
    expect(valid(at(undefined, tuple), [1])).toBe(false);
    expect(valid(at('https://json-schema.org/draft/2020-12/schema', tuple), [1])).toBe(false);
    expect(valid(at('https://json-schema.org/draft/2019-09/schema', tuple), [1])).toBe(true);
    expect(valid(at('https://json-schema.org/draft/2019-09/schema#', dependent), { a: 1 })).toBe(false);
    expect(valid(at('http://json-schema.org/draft-07/schema#', dependent), { a: 1 })).toBe(true);
    expect(valid(at('http://json-schema.org/draft-06/schema', dependent), { a: 1 })).toBe(true);
    const other = compileInputSchema({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' });
    expect(other).toEqual({
      ok: false,
      why: expect.stringContaining('declares a dialect the validator does not support'),
    });
  });

  it('[c7.cost] treats formats as annotations, names the field, and never changes the arguments', () => {
    const v = compiled({
      type: 'object',
      properties: { to: { type: 'string', format: 'email' }, n: { type: 'integer', default: 3 } },
      required: ['to'],
    });
    const args = { to: 'a@b.example' };
    expect(v(args)).toEqual({ valid: true });
    expect(args).toEqual({ to: 'a@b.example' });
    expect(v({ to: 1 })).toEqual({ valid: false, errorMessage: 'data/to must be string' });
    // Issue 19 finding 4: ajv-formats' RegExps backtrack (format "url": ~25 s for 150 KB), so formats
    // are annotations, as JSON Schema 2020-12 has them by default; the upstream checks its own.
    expect(v({ to: 'nope' })).toEqual({ valid: true });
    expect(v({ to: `http://${':'.repeat(150_000)}` })).toEqual({ valid: true });
    expect(v({})).toEqual({ valid: false, errorMessage: "data must have required property 'to'" });
  });

  it('refuses a schema that does not compile, with the engine’s reason', () => {
    const c = compileInputSchema({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } });
    expect(c).toEqual({ ok: false, why: expect.stringMatching(/^its inputSchema does not compile: /) });
  });
});
