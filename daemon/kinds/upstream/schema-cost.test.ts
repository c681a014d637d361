import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { instructions, MAX_PATTERN_CHARS, MAX_PATTERN_INSTRUCTIONS } from './re2-pattern.js';
import { compileInputSchema, type Validate } from './schema.js';
import { MAX_DEPTH, MAX_REFS, MAX_SUBSCHEMAS, VALIDATION_BUDGET } from './schema-cost.js';

function compiled(schema: Record<string, unknown>): Validate {
  const c = compileInputSchema(schema);
  if (!c.ok) throw new Error(c.why);
  return c.validate;
}

function why(schema: Record<string, unknown>): string {
  const c = compileInputSchema(schema);
  return c.ok ? 'compiled' : c.why;
}

/** `n` definitions, each applying the next twice to the same value: 2^n evaluations of one value. */
function fanout(n: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < n; i++)
    $defs[`d${i}`] =
      i < n - 1
        ? { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] }
        : { type: 'integer' };
  return { type: 'object', properties: { x: { $ref: '#/$defs/d0' } }, $defs };
}

/** 250 refs to one 250-property definition: what Ajv's ref inlining copied 250 times (~9 s, ~900 MB). */
function refBomb(refs: number, props: number): Record<string, unknown> {
  const leaf: Record<string, unknown> = {};
  for (let i = 0; i < props; i++) leaf[`a${i}`] = { type: 'string' };
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < refs; i++) properties[`r${i}`] = { $ref: '#/$defs/leaf' };
  return { type: 'object', properties, $defs: { leaf: { type: 'object', properties: leaf } } };
}

describe('[c7.cost] an upstream schema’s size is bounded before it is compiled', () => {
  it('refuses more subschemas, refs or levels than the bounds, saying which', () => {
    const props = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(why({ type: 'object', properties: props(MAX_SUBSCHEMAS - 1) })).toBe('compiled');
    expect(why({ type: 'object', properties: props(MAX_SUBSCHEMAS) })).toBe(
      `its inputSchema has more than ${MAX_SUBSCHEMAS} subschemas`,
    );
    expect(why(refBomb(MAX_REFS, 10))).toBe('compiled');
    expect(why(refBomb(250, 250))).toBe(`its inputSchema has more than ${MAX_REFS} $refs`);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < MAX_DEPTH; i++) deep = { not: deep };
    expect(why(deep)).toBe(`its inputSchema is nested deeper than ${MAX_DEPTH} levels`);
  });

  it('refuses a $ref into a value that is not a schema, not a property that happens to be named so', () => {
    for (const ref of [
      '#/enum/0',
      '#/properties/a/default',
      '#/const',
      'urn:x#/%65num/0',
      '#/x-ext/examples/0',
    ]) {
      expect(why({ properties: { a: { $ref: ref } }, enum: [{}], const: {} })).toMatch(
        /^its inputSchema has a \$ref into a value that is not a schema .*: "/,
      );
    }
    const named = compiled({
      type: 'object',
      properties: { enum: { type: 'integer' }, b: { $ref: '#/properties/enum' } },
    });
    expect(named({ enum: 1, b: 2 })).toEqual({ valid: true });
    expect(named({ enum: 1, b: 'x' })).toEqual({ valid: false, errorMessage: 'data/b must be integer' });
  });

  it('refuses a pattern too long or too large for bounded matching (RE2’s program size)', () => {
    expect(instructions(RE2JS.compile('abc'))).toBe(5); // re2js internals still where we read them
    expect(why({ type: 'string', pattern: 'a'.repeat(MAX_PATTERN_CHARS + 1) })).toMatch(
      /^its inputSchema has a pattern longer than 512 characters \(513\)/,
    );
    // 33 characters, 3,002 instructions: on one 200 KB value RE2 took ~0.5 s; 60 times over, 66 s.
    expect(why({ type: 'string', pattern: '[a-z]{1000}'.repeat(3) })).toMatch(
      new RegExp(
        `^its inputSchema has a pattern too large for bounded matching \\(3002 RE2 instructions, at most ${MAX_PATTERN_INSTRUCTIONS}\\)`,
      ),
    );
    const many = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^x${i}[a-z]{900}$` }]),
    );
    expect(why({ type: 'object', properties: many })).toBe(
      "its inputSchema's patterns compile to more than 20000 RE2 instructions in all",
    );
  });

  it('compiles a ref bomb within the bounds without inlining it, and it still means what it says', () => {
    const v = compiled(refBomb(MAX_REFS, 300));
    expect(v({ r0: { a0: 'x' }, r127: { a299: 'y' } })).toEqual({ valid: true });
    expect(v({ r5: { a7: 1 } })).toEqual({ valid: false, errorMessage: 'data/r5/a7 must be string' });
  });

  it('leaves the upstream’s schema as it was (the tool exposes it unchanged)', () => {
    const schema = { type: 'object', properties: { a: { type: 'array', uniqueItems: true } } };
    const before = JSON.stringify(schema);
    compiled(schema);
    expect(JSON.stringify(schema)).toBe(before);
  });
});

describe('[c7.cost] checking one call’s arguments has a step budget', () => {
  it('refuses a value evaluated 2^26 times at the budget, naming it; a smaller fan-out is checked', () => {
    const big = compiled(fanout(26));
    expect(big({ x: 1 })).toEqual({
      valid: false,
      errorMessage: `data/x needs more than ${VALIDATION_BUDGET} steps to check against the inputSchema (the validation budget)`,
    });
    const small = compiled(fanout(10));
    // The count starts again at every call.
    for (let i = 0; i < 50; i++) expect(small({ x: 1 })).toEqual({ valid: true });
    expect(small({ x: 'a' })).toEqual({ valid: false, errorMessage: 'data/x must be integer' });
  });

  it('charges a pattern by the value’s length and program, so 300 patterns on 1 MiB stop early', () => {
    const allOf = Array.from({ length: 300 }, (_, i) => ({ pattern: `^[a-z]*${i % 10}?$` }));
    const v = compiled({ type: 'object', properties: { s: { type: 'string', allOf } } });
    expect(v({ s: 'abc' })).toEqual({ valid: true });
    expect(v({ s: 'a'.repeat(1024 * 1024) })).toEqual({
      valid: false,
      errorMessage: `data/s needs more than ${VALIDATION_BUDGET} steps to check against the inputSchema (the validation budget)`,
    });
    // One pattern on 1 MiB is within it.
    const one = compiled({ type: 'object', properties: { s: { type: 'string', pattern: '^[a-z]*$' } } });
    expect(one({ s: 'a'.repeat(1024 * 1024) })).toEqual({ valid: true });
  });

  it('charges the keys of an object checked against many declared names, and long required lists', () => {
    const properties = Object.fromEntries(Array.from({ length: 490 }, (_, i) => [`p${i}`, true]));
    const closed = compiled({ type: 'object', properties, additionalProperties: false });
    expect(closed({ p1: 1, p489: 2 })).toEqual({ valid: true });
    const keys = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`p${i % 490}`, i]));
    expect(
      closed({ ...keys, ...Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i])) }),
    ).toEqual({
      valid: false,
      errorMessage: `data needs more than ${VALIDATION_BUDGET} steps to check against the inputSchema (the validation budget)`,
    });
    // The first error only (collecting all 5,000 per item was the cost), naming the field.
    const required = Array.from({ length: 5000 }, (_, i) => `name${i}`);
    const v = compiled({ type: 'array', items: { type: 'object', required } });
    expect(v(Array.from({ length: 50_000 }, () => ({})))).toEqual({
      valid: false,
      errorMessage: "data/0 must have required property 'name0'",
    });
  });

  it('refuses arguments nested too deep to check, instead of throwing', () => {
    const v = compiled({
      $defs: { n: { type: 'object', properties: { a: { $ref: '#/$defs/n' } } } },
      $ref: '#/$defs/n',
    });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const r = v(deep);
    expect(r.valid).toBe(false);
    expect(r.errorMessage).toMatch(/^data(\/a)* (could not be checked|needs more than)/);
  });
});

describe('[c7.cost] uniqueItems is checked in linear time, with JSON Schema’s equality', () => {
  const v = compiled({ type: 'object', properties: { a: { type: 'array', uniqueItems: true } } });

  it('accepts 20,000 distinct objects and finds the duplicate whatever its keys’ order', () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ i, tag: 'x' }));
    expect(v({ a: items })).toEqual({ valid: true });
    expect(v({ a: [...items, { tag: 'x', i: 7 }] })).toEqual({
      valid: false,
      errorMessage: 'data/a must NOT have duplicate items (items ## 7 and 20000 are identical)',
    });
  });

  it('tells 1, "1", [1] and {"1":1} apart; 1 and 1.0 are one number', () => {
    expect(v({ a: [1, '1', [1], { 1: 1 }, null, true, 'true'] })).toEqual({ valid: true });
    expect(JSON.parse('{"a":[1,1.0]}')).toEqual({ a: [1, 1] });
    expect(v(JSON.parse('{"a":[1,1.0]}')).valid).toBe(false);
    expect(v({ a: [[{ b: 1, c: 2 }], [{ c: 2, b: 1 }]] }).valid).toBe(false);
  });

  it('checks nothing when uniqueItems is false or the value is not an array', () => {
    const off = compiled({ type: 'array', uniqueItems: false });
    expect(off([1, 1])).toEqual({ valid: true });
    expect(compiled({ uniqueItems: true })('not an array')).toEqual({ valid: true });
  });
});
