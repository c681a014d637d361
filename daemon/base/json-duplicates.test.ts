import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateKeyPath } from './json-duplicates.js';

describe('[c3.2.bad-input] duplicateKeyPath (contract 1.3: an upstream named twice is refused)', () => {
  it('names the path of a key named twice, at any depth', () => {
    expect(duplicateKeyPath('{"a":1,"a":2}')).toBe('a');
    const twoNotes = '{"upstreams":{"notes":{"argv":["x"]},"notes":{"url":"https://e.example/mcp"}}}';
    expect(duplicateKeyPath(twoNotes)).toBe('upstreams.notes');
    expect(duplicateKeyPath('{"commands":{"say":{"argv":["a"],"argv":["b"]}}}')).toBe('commands.say.argv');
    expect(duplicateKeyPath('{"grants":[{"command":"a"},{"command":"a","command":"b"}]}')).toBe(
      'grants[1].command',
    );
    expect(duplicateKeyPath('[[1],[{"x":{"y":1,"y":1}}]]')).toBe('[1][0].x.y');
  });

  it('compares keys as JSON.parse decodes them', () => {
    expect(duplicateKeyPath('{"upstreams":{"notes":{},"n\\u006ftes":{}}}')).toBe('upstreams.notes');
    expect(duplicateKeyPath('{"\\"":1,"\\u0022":2}')).toBe('["\\""]');
    // Different keys that look alike are not the same key.
    expect(duplicateKeyPath('{"notes":1,"Notes":2,"notes ":3}')).toBeUndefined();
  });

  it('is not fooled by strings: braces, quotes, escapes and keys inside values', () => {
    expect(duplicateKeyPath('{"a":"{\\"a\\":1,\\"a\\":2}","b":"]},{","c":"\\\\"}')).toBeUndefined();
    expect(duplicateKeyPath('{"a":"a","b":"a"}')).toBeUndefined();
    expect(duplicateKeyPath('{"a":["a","a"],"b":{"a":1}}')).toBeUndefined();
    expect(duplicateKeyPath(' \n{ "a" : 1 ,\t"b" : { } , "a" : null }\n')).toBe('a');
  });

  it('keeps each object’s keys to itself: siblings and parents may reuse a name', () => {
    const siblings = '{"upstreams":{"a":{"tools":["x"]},"b":{"tools":["x"]}},"tools":1}';
    expect(duplicateKeyPath(siblings)).toBeUndefined();
    expect(duplicateKeyPath('[{"a":1},{"a":1}]')).toBeUndefined();
  });

  it('prints an odd key on one line and bounded', () => {
    expect(duplicateKeyPath('{"commands":{"a\\nb":1,"a\\nb":2}}')).toBe('commands["a\\nb"]');
    const long = 'k'.repeat(5000);
    const path = duplicateKeyPath(`{"x y ${long}":1,"x y ${long}":2}`)!;
    expect(path.length).toBeLessThan(300);
    expect(path).not.toContain('\n');
  });

  it('survives nesting deeper than a recursive scanner could', () => {
    const depth = 200_000;
    const deep = `${'{"a":'.repeat(depth)}{"z":1,"z":2}${'}'.repeat(depth)}`;
    // One line of an error message: the deepest end of the path.
    expect(duplicateKeyPath(deep)).toBe(`…${`${'a.'.repeat(depth)}z`.slice(-1000)}`);
    const inArrays = duplicateKeyPath(`${'['.repeat(depth)}{"z":1,"z":2}${']'.repeat(depth)}`)!;
    expect(inArrays).toMatch(/^….*\[0\]\[0\]\.z$/);
    expect(inArrays.length).toBeLessThanOrEqual(1001);
  });

  it('finds nothing in JSON.stringify output (no duplicates exist there), and always terminates', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(duplicateKeyPath(JSON.stringify(value, null, 1))).toBeUndefined();
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string(), (junk) => {
        duplicateKeyPath(junk);
      }),
      { numRuns: 300 },
    );
  });

  it('finds a duplicate added to any object (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), (obj) => {
        const [key] = Object.keys(obj);
        const text = JSON.stringify(obj);
        const twice = `${text.slice(0, -1)},${JSON.stringify(key)}:0}`;
        expect(duplicateKeyPath(JSON.stringify({ outer: JSON.parse(text), x: [twice] }))).toBeUndefined();
        expect(duplicateKeyPath(`{"outer":${twice}}`)).toMatch(/^outer(\.|\[)/);
      }),
      { numRuns: 300 },
    );
  });
});
