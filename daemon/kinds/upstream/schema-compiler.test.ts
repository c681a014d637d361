import { describe, expect, it } from 'vitest';
import type { CompiledSchema } from './schema.js';
import { SchemaCompiler } from './schema-compiler.js';

describe('[c7.cost] schemas compile in the background, the upstreams taking turns', () => {
  it('answers undefined until its turn, then the result; a sweep drops what is no longer listed', async () => {
    let ready = 0;
    const compiler = new SchemaCompiler(() => ready++);
    const a = { type: 'object', properties: { n: { type: 'integer' } } };
    const b = { type: 'string', pattern: '^(a)\\1$' };
    expect(compiler.get('one', a)).toBeUndefined();
    expect(compiler.get('two', b)).toBeUndefined();
    compiler.sweep();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(ready).toBeGreaterThan(0);
    const first = compiler.get('one', a) as CompiledSchema & { ok: true };
    expect(first.ok).toBe(true);
    expect(first.validate({ n: 'x' }).valid).toBe(false);
    // The same schema, listed again as another object, keeps its validator.
    expect(compiler.get('one', structuredClone(a))).toBe(first);
    expect(compiler.get('two', b)).toMatchObject({ ok: false });
    compiler.sweep(); // both asked for since the last sweep: kept
    expect(compiler.get('one', a)).toBe(first);
    compiler.sweep(); // only `a` was asked for
    expect(compiler.get('two', b)).toBeUndefined();
  });
});
