/**
 * Contract 12 (v4) `preset: "filesystem"`: get_file_info before any read (./file-info.ts). The upstream here
 * is a PreviewIo answering with the filesystem server's own words (test/attack-previews-isolation.test.ts
 * runs the real server): only a regular file of at most 1 MiB is read; nothing is read on a guess.
 */
import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { PreviewIo } from './call.js';
import { computePreview } from './compute.js';
import type { RunDiff } from './presets.js';

const spec: RunDiff = {
  kind: 'file_diff',
  read: 'read_text_file',
  path_arg: 'path',
  content_arg: 'content',
  mode: 'replace',
  stat: { tool: 'get_file_info', path_arg: 'path' },
};

const info = (size: number, isFile: boolean) =>
  `size: ${size}\ncreated: Sun Dec 06 2026\nmodified: Sun Dec 06 2026\naccessed: Sun Dec 06 2026\nisDirectory: ${!isFile}\nisFile: ${isFile}\npermissions: 644`;
const text = (t: string, isError = false) => ({ content: [{ type: 'text', text: t }], isError });

function io(answers: Record<string, unknown>, calls: string[], readOnly = true): PreviewIo {
  return {
    upstream: 'notes',
    timeoutS: 10,
    listed: (name) =>
      ({ name, inputSchema: { type: 'object' }, annotations: { readOnlyHint: readOnly } }) as Tool,
    call: async (tool) => {
      calls.push(tool);
      return answers[tool];
    },
  };
}

async function preview(answers: Record<string, unknown>, readOnly = true) {
  const calls: string[] = [];
  const p = await computePreview(
    spec,
    'write_file',
    { path: '/n/f', content: 'new\n' },
    io(answers, calls, readOnly),
  );
  return { p, calls };
}

describe('[c12.file-info] get_file_info first', () => {
  it('[c12.file-info] reads a regular file of at most 1 MiB', async () => {
    const { p, calls } = await preview({
      get_file_info: text(info(1024 * 1024, true)),
      read_text_file: text('old\n'),
    });
    expect(p).toMatchObject({ status: 'ready', diff: '--- /n/f\n+++ /n/f\n@@ -1,1 +1,1 @@\n-old\n+new\n' });
    expect(calls).toEqual(['get_file_info', 'read_text_file']);
  });

  it('[c12.file-info] never reads a larger file, a FIFO or a directory, and says why', async () => {
    const big = await preview({ get_file_info: text(info(1024 * 1024 + 1, true)) });
    expect(big.p).toMatchObject({
      status: 'failed',
      error: 'the file is larger than 1 MiB (1048577 bytes), so no preview reads it',
    });
    const fifo = await preview({ get_file_info: text(info(0, false)) });
    expect(fifo.p).toMatchObject({
      status: 'failed',
      error: 'the path is not a regular file, so no preview reads it',
    });
    for (const r of [big, fifo]) expect(r.calls).toEqual(['get_file_info']);
  });

  it('[c12.file-info] no file is a new file, read by nobody; other errors and unknown answers fail', async () => {
    const missing = await preview({
      get_file_info: text("ENOENT: no such file or directory, stat '/n/f'", true),
    });
    expect(missing.p).toMatchObject({ status: 'ready', new_file: true });
    expect(missing.calls).toEqual(['get_file_info']);
    const denied = await preview({
      get_file_info: text('Access denied - path outside allowed directories: /etc/f', true),
    });
    expect(denied.p.error).toBe(
      'the upstream notes refused to read the file: Access denied - path outside allowed directories: /etc/f',
    );
    const vague = await preview({ get_file_info: text('it is a file, trust me') });
    expect(vague.p.error).toBe(
      "the get_file_info answer of the upstream notes did not say the file's size and type, so it was not read",
    );
    for (const r of [denied, vague]) expect(r.calls).toEqual(['get_file_info']);
  });

  it('[c12.readonly] a get_file_info not annotated read-only is never called', async () => {
    const { p, calls } = await preview({}, false);
    expect(p.status).toBe('failed');
    expect(calls).toEqual([]);
  });
});
