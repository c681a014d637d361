/**
 * An export read in parts (walk-export.ts), as `audit verify --file` walks it: the parts are the file,
 * in order, each whole lines (or the file's last bytes), a line longer than a part's size included, and a
 * part read again is the same bytes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExportParts, exportFile, exportInMemory } from './walk-export.js';

const lines = [
  'short',
  'x'.repeat(300),
  'é ünïcode 😀'.repeat(20),
  'y'.repeat(5000), // longer than a part
  '',
  'z'.repeat(63),
  'last line without a newline',
];

describe('[c14.verify] an export read in parts', () => {
  const text = lines.join('\n');
  const path = join(mkdtempSync(join(tmpdir(), 'ogf-export-parts-')), 'audit.jsonl');
  writeFileSync(path, text);

  for (const [name, open] of [
    ['a file', () => exportFile(path)],
    ['bytes in memory', () => exportInMemory(Buffer.from(text))],
  ] as const) {
    it(`cuts ${name} at line ends into parts that are the whole of it, in order`, () => {
      const bytes = open();
      try {
        const cut = new ExportParts(bytes, 256);
        const parts: Buffer[] = [];
        for (let p = cut.next(); p !== undefined; p = cut.next()) parts.push(Buffer.from(p));
        expect(Buffer.concat(parts).toString('utf8')).toBe(text);
        // Each part but the last ends with a newline; the long line is whole in one part.
        for (const p of parts.slice(0, -1)) expect(p.at(-1)).toBe(0x0a);
        expect(parts.some((p) => p.toString('utf8').includes(`${'y'.repeat(5000)}\n`))).toBe(true);
        expect(parts.length).toBeGreaterThan(3);
        for (const [i, p] of parts.entries()) expect(cut.again(i).equals(p)).toBe(true);
        expect(cut.next()).toBeUndefined();
      } finally {
        bytes.close();
      }
    });
  }

  it('finds the seq of the last checkpoint line the export ends with', () => {
    const cp = (seq: number) =>
      JSON.stringify({ at: 'a', hash: 'h', seq, signature: 's', type: 'checkpoint' });
    const withCheckpoints = `${lines.slice(0, 3).join('\n')}\n${cp(1000)}\n${cp(2000)}\n`;
    expect(new ExportParts(exportInMemory(Buffer.from(withCheckpoints)), 64).lastCheckpointSeq()).toBe(2000);
    expect(new ExportParts(exportInMemory(Buffer.from(text)), 64).lastCheckpointSeq()).toBe(0);
  });
});
