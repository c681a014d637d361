/**
 * Contract 12's bounds on what one preview carries: a diff or text over 256 KiB is cut on a line (never
 * inside a character) and flagged `truncated`; the proposed content over 1 MiB is refused before any read.
 * The upstream here is a PreviewIo answering as a server would (the integration suites use real ones).
 */
import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { PreviewIo } from './call.js';
import { computePreview, type FileSeen } from './compute.js';
import { bounded, PREVIEW_MAX_BYTES } from './diff.js';

const spec = {
  kind: 'file_diff',
  read: 'read',
  path_arg: 'path',
  content_arg: 'content',
  mode: 'replace',
} as const;

function io(answer: unknown, calls: string[] = []): PreviewIo {
  return {
    upstream: 'u',
    timeoutS: 10,
    listed: (name) =>
      ({ name, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }) as Tool,
    call: async (tool) => {
      calls.push(tool);
      return answer;
    },
  };
}

describe('preview bounds (contract 12)', () => {
  it('cuts a text over 256 KiB at its last whole line, flagged truncated', () => {
    const text = 'a line of text\n'.repeat(30_000);
    const cut = bounded(text);
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(PREVIEW_MAX_BYTES);
    expect(cut.text.endsWith('a line of text\n')).toBe(true);
    expect(bounded('short\n')).toEqual({ text: 'short\n' });
  });

  it('never cuts inside a character', () => {
    const cut = bounded('€'.repeat(200_000));
    expect(cut.truncated).toBe(true);
    expect(cut.text).not.toContain('\uFFFD');
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(PREVIEW_MAX_BYTES);
  });

  it('a diff over 256 KiB is truncated in the preview', async () => {
    const current = 'old line of the file\n'.repeat(20_000);
    const p = await computePreview(
      spec,
      'write',
      { path: 'f.txt', content: 'new\n' },
      io({ content: [{ type: 'text', text: current }] }),
    );
    expect(p.status).toBe('ready');
    expect(p.truncated).toBe(true);
    expect(Buffer.byteLength(p.diff!)).toBeLessThanOrEqual(PREVIEW_MAX_BYTES);
    expect(p.diff!.startsWith('--- f.txt\n+++ f.txt\n@@ -1,20000 +1,1 @@\n')).toBe(true);
  });

  it('refuses proposed content over 1 MiB before reading anything', async () => {
    const calls: string[] = [];
    const p = await computePreview(
      spec,
      'write',
      { path: 'f', content: 'x'.repeat(1024 * 1024 + 1) },
      io({ content: [] }, calls),
    );
    expect(p).toMatchObject({ status: 'failed', error: 'the proposed content is larger than 1 MiB' });
    expect(calls).toEqual([]);
  });
});

describe('the launch-time check reuses the approved preview (contract 20)', () => {
  const args = { path: 'f.txt', content: 'b\n' };
  /** The write's preview with the file holding `text`, told what was approved (if anything). */
  const previewOf = (text: string, seen?: FileSeen) =>
    computePreview(spec, 'write', args, io({ content: [{ type: 'text', text }] }), seen);

  it('a read of the very file approved answers with the approved preview, and says what it read', async () => {
    const approved = await previewOf('a\n');
    const seen: FileSeen = { approved };
    expect(await previewOf('a\n', seen)).toBe(approved);
    expect(seen).toMatchObject({ path: 'f.txt', current: 'a\n', proposed: 'b\n', newFile: false });
  });

  it('a file that changed makes its diff again, from what it holds now', async () => {
    const approved = await previewOf('a\n');
    const seen: FileSeen = { approved };
    const again = await previewOf('c\n', seen);
    expect(again).not.toBe(approved);
    expect(again.basis_sha256).not.toBe(approved.basis_sha256);
    expect(again.diff).toContain('-c');
    expect(seen.current).toBe('c\n');
  });
});
