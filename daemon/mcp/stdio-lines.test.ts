/**
 * `mcp-stdio`'s stdin on its way to the SDK's transport (stdio-lines.ts): the same bytes, line by line,
 * except a line holding a `__proto__` key, which is written again with the key renamed (contract 3.3).
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROTO_KEY } from './json-body.js';
import { protoKeysInSight } from './stdio-lines.js';

/** What the stream hands on when `input` arrives in `chunks` (cut at those byte offsets). */
async function through(input: Buffer, cuts: number[] = [], maxLine?: number): Promise<Buffer> {
  const at = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const c of [...at, input.length]) {
    if (c > from) chunks.push(input.subarray(from, c));
    from = c;
  }
  const out: Buffer[] = [];
  for await (const b of Readable.from(chunks).pipe(protoKeysInSight(maxLine))) out.push(b as Buffer);
  return Buffer.concat(out);
}

describe('[c3.2.bad-input] mcp-stdio: what the SDK reads', () => {
  it('every line without a __proto__ key goes on byte for byte, however stdin cuts it (300 inputs)', async () => {
    const line = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => JSON.stringify({ text: s })),
      fc.constantFrom('not json', '{"a":"é😀"}', '', '{"x":1}\r', '{"a":"\\u00e9\\n","b":"__proto__"}'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (ls, cuts) => {
          const input = Buffer.from(ls.map((l) => `${l}\n`).join(''));
          expect((await through(input, cuts)).equals(input)).toBe(true);
        },
      ),
      { numRuns: 300, seed: 41 },
    );
  });

  it('[attack] a __proto__ key, spelt out or escaped, reaches the SDK renamed; the lines around it unchanged', async () => {
    const call = (key: string) =>
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command_wait","arguments":{"${key}":{"x":1},"command":"echo"}}}`;
    for (const key of ['__proto__', '\\u005f_proto__']) {
      const input = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"ping"}\n${call(key)}\r\n{"n":"é"}\n`);
      const lines = (await through(input, [5, 60, 61, 62])).toString('utf8').split('\n');
      expect(lines[0]).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}');
      const args = (JSON.parse(lines[1]!) as { params: { arguments: Record<string, unknown> } }).params
        .arguments;
      expect(Object.keys(args)).toEqual([PROTO_KEY, 'command']);
      expect(lines.slice(2)).toEqual(['{"n":"é"}', '']);
    }
  });

  it('a line past the limit goes on unread (the SDK refuses it), and the next one is read again', async () => {
    const long = `{"__proto__":1,"pad":"${'x'.repeat(100)}"}\n`;
    const next = '{"__proto__":2}\n';
    const out = (await through(Buffer.from(long + next), [10, 50, 90], 64)).toString('utf8');
    expect(out.startsWith(long)).toBe(true);
    expect(JSON.parse(out.slice(long.length))).toEqual({ [PROTO_KEY]: 2 });
  });

  it("a line of 9 MiB, under the SDK's limit, in 64-KiB chunks, is read whole: its key renamed", async () => {
    const big = `{"__proto__":1,"pad":"${'x'.repeat(9 * 1024 * 1024)}"}\n`;
    const cuts = Array.from({ length: Math.ceil(big.length / 65536) }, (_, i) => i * 65536);
    const out = JSON.parse((await through(Buffer.from(big), cuts)).toString('utf8')) as Record<
      string,
      unknown
    >;
    expect(Object.keys(out)).toEqual([PROTO_KEY, 'pad']);
  });

  it('a last line without its newline goes on as it came', async () => {
    const input = Buffer.from('{"a":1}\n{"__proto__":1}');
    expect((await through(input, [3])).toString('utf8')).toBe('{"a":1}\n{"__proto__":1}');
  });

  it('[attack] only the key is renamed: every other byte of its line goes on as the client wrote it', async () => {
    // Written again from a parse, `1e400` (Infinity) became `null` and `1.50` became `1.5` here. The SDK's own
    // parse and the relay's JSON do as much after (test/mcp-stdio.test.ts), so this stream only keeps its
    // word: the client's bytes, the key alone renamed.
    const rest = '{"n":1e400,"f":1.50, "e":"\\u00e9","s":"__proto__","a":["__proto__"]}';
    for (const key of ['"__proto__"', '"\\u005f_proto__"', '"__proto__" ']) {
      const line = `{"params":{"arguments":{${key}:${rest},"tag":"x"}}}`;
      const out = (await through(Buffer.from(`${line}\n`), [7])).toString('utf8');
      expect(out).toBe(
        `${line.replace(key, `${JSON.stringify(PROTO_KEY)}${key.endsWith(' ') ? ' ' : ''}`)}\n`,
      );
    }
  });
});
