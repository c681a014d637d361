/**
 * Owner Views carry at most 16 KiB of each output stream (contract 5, v2), and with the PENDING caps
 * (contract 1.3) the largest snapshot is a number we can compute: here, from the Views themselves.
 */
import { describe, expect, it } from 'vitest';
import { KINDS } from '../../kinds/index.js';
import { OWNER_CLIENT_MAX_PAYLOAD } from '../../owner-terminal/index.js';
import type { Command } from './lifecycle.js';
import { toView, VIEW_OUTPUT_MAX_BYTES, viewJson } from './owner-view.js';
import { cutUtf8, toResult } from './tool-result.js';

const T = '2026-11-30T10:00:00.000Z';

function command(extra: Partial<Command> = {}): Command {
  return {
    id: 'c_V1StGXR8_Z5jdHi6B-myT',
    version: 1,
    tool: 'run_command_wait',
    command: 'note',
    args: {},
    display: ['/bin/echo'],
    client: 'local',
    created_at: T,
    review_expires_at: T,
    phase: { state: 'awaiting_review' },
    ...extra,
  };
}

function finished(stdout: string, stderr: string, base: Partial<Command> = {}): Command {
  return command({
    ...base,
    version: 4,
    phase: {
      state: 'succeeded',
      decided_at: T,
      decided_by: 'owner',
      started_at: T,
      finished_at: T,
      outcome: { exit_code: 0, stdout, stderr, output_truncated: false },
    },
  });
}

describe('[c5.owner-frames-bounded] cutUtf8', () => {
  it('keeps what fits, and cuts whole code points only', () => {
    expect(cutUtf8('abc', 3)).toBeUndefined();
    expect(cutUtf8('abcd', 3)).toBe('abc');
    expect(cutUtf8('aé', 2)).toBe('a'); // é is 2 bytes
    expect(cutUtf8('a€', 3)).toBe('a'); // € is 3 bytes
    expect(cutUtf8('a😀', 4)).toBe('a'); // never half a surrogate pair
    expect(cutUtf8('a😀', 5)).toBeUndefined();
    expect(cutUtf8('\ud800\ud800', 3)).toBe('\ud800'); // a lone surrogate encodes as 3 bytes
    for (const s of ['x'.repeat(20_000), '😀'.repeat(9000), 'é€😀\u0001'.repeat(3000)]) {
      const cut = cutUtf8(s, VIEW_OUTPUT_MAX_BYTES)!;
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(VIEW_OUTPUT_MAX_BYTES);
      expect(s.startsWith(cut)).toBe(true);
      const next = String.fromCodePoint(s.codePointAt(cut.length)!);
      expect(Buffer.byteLength(cut + next)).toBeGreaterThan(VIEW_OUTPUT_MAX_BYTES);
    }
  });
});

describe('[c5.owner-frames-bounded] the View of a finished command', () => {
  it('cuts each stream to 16 KiB and says so; the MCP result keeps everything', () => {
    const big = '\u0001'.repeat(1024 * 1024);
    const c = finished(big, 'short');
    const v = toView(c, KINDS);
    expect(v.result?.stdout).toBe(big.slice(0, VIEW_OUTPUT_MAX_BYTES));
    expect(v.result?.stderr).toBe('short');
    expect(v.result?.output_truncated).toBe(true);
    expect(toResult(c)).toMatchObject({ stdout: big, output_truncated: false });
  });

  it('leaves output that fits as it is', () => {
    const v = toView(finished('x'.repeat(VIEW_OUTPUT_MAX_BYTES), ''), KINDS);
    expect(v.result?.stdout).toHaveLength(VIEW_OUTPUT_MAX_BYTES);
    expect(v.result?.output_truncated).toBe(false);
  });
});

describe('[c5.daemon-survives] the worst-case snapshot at the default caps', () => {
  it('2000 PENDING and 200 final worst-case Views fit the terminal client with room to spare', () => {
    // A catalog param of 4096 lone surrogates (6 bytes of JSON each, 7 in the quoted summary), shown once
    // in argv (and again in the result's display), a justification of 500 of them, the longest names.
    const text = '\ud800'.repeat(4096);
    const base: Partial<Command> = {
      command: 'n'.repeat(64),
      args: { text },
      display: ['/bin/echo', text],
      justification: '\udfff'.repeat(500),
      client: 'c'.repeat(32),
      request_id: 'r'.repeat(32),
    };
    const pending = viewJson(command(base), KINDS).length;
    const noisy = '\u0001'.repeat(1024 * 1024);
    const final = viewJson(finished(noisy, noisy, base), KINDS).length;
    const snapshot = '{"type":"snapshot","commands":[]}'.length + 2000 * (pending + 1) + 200 * (final + 1);
    // ~104 KiB a PENDING View, ~296 KiB a final one: ~261 MiB in all (test/attack-flood.test.ts sends
    // exactly this through the real daemon and measures 272,760,932 bytes with its shorter names).
    expect(pending).toBeLessThan(110 * 1024);
    expect(final).toBeLessThan(pending + 2 * 6 * VIEW_OUTPUT_MAX_BYTES + 1024);
    expect(snapshot).toBeLessThan(0.55 * OWNER_CLIENT_MAX_PAYLOAD);
  });
});
