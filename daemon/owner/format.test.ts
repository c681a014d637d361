import { describe, expect, it } from 'vitest';
import type { View } from '../../common/owner-messages.js';
import { needsEscape } from '../base/text-rules.js';
import { formatView, showsNodes } from './format.js';

const ESC = '\u001b';
const base: View = {
  id: 'c_abcdefgh12345678',
  version: 1,
  tool: 'run_command_wait',
  command: 'note',
  display: ['note', 'plain'],
  summary: 'Run note with text="plain"',
  args: { text: 'plain' },
  client: 'local',
  created_at: '2026-11-30T10:00:00.000Z',
  review_expires_at: '2026-11-30T10:05:00.000Z',
  state: 'awaiting_review',
  status: 'PENDING',
  phase: 'awaiting_review',
};

describe('[c5.terminal-escaped] formatView (contract 5)', () => {
  it('prints a plain command as before: header, summary, argv, deadline', () => {
    expect(formatView({ ...base, justification: 'tidy up' }).split('\n')).toEqual([
      'c_abcdefgh12345678  PENDING (awaiting review)  client local  v1',
      '    Run note with text="plain"',
      '    argv: note plain',
      '    why: tidy up',
      '    decide before 2026-11-30T10:05:00.000Z',
    ]);
  });

  it('escapes every AI-supplied text, even from a row stored before the input rule', () => {
    const hostile = `${ESC}[2J\u009b1A\r\n\u202e`;
    const out = formatView({
      ...base,
      command: `note${ESC}[31m`,
      client: `local${ESC}]0;x\u0007`,
      display: ['note', hostile],
      summary: `Run note with text=${hostile}`,
      justification: `why${hostile}`,
      state: 'failed',
      status: 'ERROR',
      reason: 'NonZeroExit',
      reconciliation: { outcome: 'not_delivered', note: `n${hostile}`, at: base.created_at },
    });
    const lines = out.split('\n');
    expect(lines).toHaveLength(5);
    // needsEscape knows every character contract 1.3 names (text-rules.test.ts checks it one by one).
    for (const line of lines) expect(needsEscape(line), line).toBe(false);
    expect(lines[0]).toBe('c_abcdefgh12345678  ERROR NonZeroExit  client local\\u001b]0;x\\u0007  v1');
    expect(lines[1]).toBe('    Run note with text=\\u001b[2J\\u009b1A\\r\\n\\u202e');
    expect(lines[2]).toBe("    argv: note $'\\u001b[2J\\u009b1A\\r\\n\\u202e'");
    expect(lines[3]).toBe('    why: why\\u001b[2J\\u009b1A\\r\\n\\u202e');
    expect(lines[4]).toBe('    reconciled: not delivered — n\\u001b[2J\\u009b1A\\r\\n\\u202e');
  });
});

describe("[c16.nodes-list] list names each command's node once several nodes' commands are shown (contract 16)", () => {
  it('one node (or commands from before nodes) stays uncluttered; two nodes are marked', () => {
    const a = { ...base, node: 'laptop' };
    const b = { ...base, id: 'c_bbbbbbbb12345678', node: 'build-1' };
    expect(showsNodes([a, { ...a, id: 'c_other0012345678' }])).toBe(false);
    expect(showsNodes([a, { ...base }])).toBe(false);
    expect(showsNodes([a, b])).toBe(true);
    expect(formatView(a).split('\n')[0]).toBe(
      'c_abcdefgh12345678  PENDING (awaiting review)  client local  v1',
    );
    expect(formatView(b, { node: true }).split('\n')[0]).toBe(
      'c_bbbbbbbb12345678  PENDING (awaiting review)  client local  node build-1  v1',
    );
    expect(formatView(base, { node: true }).split('\n')[0]).toContain('  node (none)  ');
  });
});
