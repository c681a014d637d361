/** Contract 12: an upstream's `preset` and `previews` — accepted as written, refused naming the field. */
import { describe, expect, it } from 'vitest';
import { describeZodError } from './fields.js';
import { fileSchema } from './file.js';

function refusal(upstream: Record<string, unknown>): string {
  const r = fileSchema.safeParse({ upstreams: { notes: { argv: ['x'], ...upstream } } });
  if (r.success) return 'accepted';
  return describeZodError(r.error);
}

describe('upstream previews config (contract 12)', () => {
  it('accepts the preset and both kinds, mode defaulting to replace', () => {
    const r = fileSchema.parse({
      upstreams: {
        notes: {
          argv: ['x'],
          preset: 'filesystem',
          previews: {
            append_note: { kind: 'file_diff', read: 'read_text_file', path_arg: 'path', content_arg: 'text' },
            edit: { kind: 'dry_run', arg: 'dryRun' },
          },
        },
      },
    });
    expect(r.upstreams.notes?.preset).toBe('filesystem');
    expect(r.upstreams.notes?.previews?.append_note).toMatchObject({ kind: 'file_diff', mode: 'replace' });
    expect(r.upstreams.notes?.previews?.edit).toEqual({ kind: 'dry_run', arg: 'dryRun' });
  });

  it.each([
    [{ preset: 'git' }, 'upstreams.notes.preset: must be one of "filesystem", got "git"'],
    [{ previews: { w: { kind: 'diff' } } }, 'upstreams.notes.previews.w'],
    [{ previews: { w: { kind: 'diff' } } }, 'must be "file_diff" or "dry_run"'],
    [{ previews: { w: 'x' } }, 'upstreams.notes.previews.w'],
    [
      { previews: { w: { kind: 'file_diff', read: 'r', path_arg: 'p' } } },
      'upstreams.notes.previews.w.content_arg: must be the name of the argument holding the proposed content',
    ],
    [
      { previews: { w: { kind: 'file_diff', read: 'r', path_arg: 'p', content_arg: 'c', mode: 'prepend' } } },
      'upstreams.notes.previews.w.mode: must be "replace" or "append", got "prepend"',
    ],
    [{ previews: { w: { kind: 'dry_run', arg: '' } } }, 'upstreams.notes.previews.w.arg: must be the name'],
    [
      { previews: { w: { kind: 'dry_run', arg: 'd', extra: 1 } } },
      'upstreams.notes.previews.w.extra: unknown key',
    ],
  ])('refuses %j naming the field', (upstream, words) => {
    expect(refusal(upstream)).toContain(words);
  });
});
