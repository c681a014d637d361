/**
 * The panel's reading of a unified diff (diff-lines.ts, contract 12): line kinds and both line numbers from
 * the hunk headers, file names from the headers, and text with no hunk left as plain text.
 */
import { describe, expect, it } from 'vitest';
import { parseDiff } from './diff-lines.js';

describe('parseDiff', () => {
  it('numbers added, removed and context lines from the hunk header', () => {
    const diff = parseDiff(
      ['--- a.txt\t2026-01-01', '+++ a.txt', '@@ -3,3 +3,3 @@', ' keep', '-old', '+new', ' end'].join('\n'),
    );
    expect(diff?.from).toBe('a.txt');
    expect(diff?.to).toBe('a.txt');
    expect(diff?.lines).toEqual([
      { kind: 'hunk', text: '@@ -3,3 +3,3 @@' },
      { kind: 'ctx', text: 'keep', old: 3, new: 3 },
      { kind: 'del', text: 'old', old: 4 },
      { kind: 'add', text: 'new', new: 4 },
      { kind: 'ctx', text: 'end', old: 5, new: 5 },
    ]);
  });

  it('starts an empty side one line lower: a new file counts from 1', () => {
    const diff = parseDiff(['--- /dev/null', '+++ new.txt', '@@ -0,0 +1,2 @@', '+a', '+b'].join('\n'));
    expect(diff?.from).toBe('/dev/null');
    expect(diff?.lines.slice(1)).toEqual([
      { kind: 'add', text: 'a', new: 1 },
      { kind: 'add', text: 'b', new: 2 },
    ]);
  });

  it('reads a removed line that looks like a file header as a removal inside a hunk', () => {
    const diff = parseDiff(['@@ -1,2 +1,1 @@', '--- x', ' y'].join('\n'));
    expect(diff?.from).toBeUndefined();
    expect(diff?.lines[1]).toEqual({ kind: 'del', text: '-- x', old: 1 });
  });

  it('keeps "No newline at end of file" as a note, and a header without counts as one line', () => {
    const diff = parseDiff(['@@ -1 +1 @@', '-a', '+b', '\\ No newline at end of file'].join('\n'));
    expect(diff?.lines.map((l) => l.kind)).toEqual(['hunk', 'del', 'add', 'note']);
    expect(diff?.lines[3]?.text).toBe('No newline at end of file');
  });

  it('gives undefined for text with no hunk (shown as plain text)', () => {
    expect(parseDiff('just some output\n--- not a diff')).toBeUndefined();
    expect(parseDiff('')).toBeUndefined();
  });
});
