/**
 * The AI asks for noisy commands (contracts.md 1.3, 4, 5, all v2). Output is kept up to
 * `output_limit_bytes` (at most 1 MiB) for the MCP result, but every owner frame carries at most 16 KiB
 * of each stream: before, 16 MiB of control characters made one View ~192 MiB of JSON, an owner that
 * could take it was cut as "too slow", and three such commands made every later owner connection crash
 * the daemon. Driven through the real daemon: the SDK client as the AI, the real /owner/ws, real children.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { call, httpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';

const MIB = 1024 * 1024;
const VIEW_MAX = 16 * 1024;

// 16 bytes of UTF-8: control characters, an escape sequence, and 2-, 3- and 4-byte characters.
const UNIT_CODES = [1, 27, 91, 50, 74, 233, 8364, 128512, 9, 10];
const UNIT = String.fromCodePoint(...UNIT_CODES);
// stdout is exactly 1 MiB, laid out so that byte 16,384 falls inside the emoji: the owner's cut must back
// off to the code point boundary at 16,382. stderr is 1 MiB whose cut falls on a boundary.
const STDOUT = `aaaa${UNIT.repeat(65535)}${'z'.repeat(12)}`;
const STDERR = UNIT.repeat(65536);
const SCRIPT = `const u = String.fromCodePoint(${UNIT_CODES.join(',')});
process.stdout.write('aaaa' + u.repeat(65535) + 'z'.repeat(12));
process.stderr.write(u.repeat(65536));`;

/** The longest prefix of `text` whose UTF-8 fits in `max` bytes, whole code points only. */
function prefixOf(text: string, max: number): string {
  let out = '';
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > max) break;
    out += ch;
  }
  return out;
}

/** Every View in a frame. */
function viewsOf(f: Frame): Frame[] {
  if (f.type === 'upsert') return [f.command];
  if (f.type === 'snapshot' || f.type === 'history') return f.commands;
  return [];
}

describe('[c5.owner-frames-bounded] noisy commands at output_limit_bytes 1 MiB', () => {
  let d: RunningDaemon;
  let ai: Client;

  beforeAll(async () => {
    expect(Buffer.byteLength(STDOUT)).toBe(MIB);
    expect(Buffer.byteLength(STDERR)).toBe(MIB);
    d = await startDaemon({
      dataDir: makeDataDir('ogf-noisy-'),
      config: {
        output_limit_bytes: MIB,
        commands: {
          noisy: { description: 'Make noise', argv: [process.execPath, '-e', SCRIPT], timeout_s: 60 },
        },
      },
    });
    ai = await httpClient(d.info.mcp_url, d.mcpToken);
  });

  afterAll(async () => {
    await ai?.close();
    await d?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('[c5.owner-frames-bounded] the MCP result carries the whole 1 MiB; owner frames at most 16 KiB per stream, cut on a code point, flagged truncated', async () => {
    const owner = await OwnerSocket.open(d);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = structured(
        await call(ai, 'run_command_wait', { command: 'noisy', args: {}, wait_seconds: 0 }),
      );
      ids.push(r.pending_id as string);
    }
    for (const id of ids)
      expect(await owner.request({ type: 'approve', id, version: 1 })).toMatchObject({ ok: true });

    for (const id of ids) {
      const r = structured(await call(ai, 'await_command_result', { pending_id: id, wait_seconds: 60 }));
      expect(r.status).toBe('SUCCEEDED');
      expect(r.stdout).toBe(STDOUT);
      expect(r.stderr).toBe(STDERR);
      expect(r.output_truncated).not.toBe(true);
    }

    const wantOut = prefixOf(STDOUT, VIEW_MAX);
    expect(Buffer.byteLength(wantOut)).toBe(VIEW_MAX - 2);
    const wantErr = STDERR.slice(0, (VIEW_MAX / 16) * UNIT.length);
    for (const id of ids) {
      const v = await owner.upsert(id, (c) => c.state === 'succeeded', `${id} succeeded`);
      expect(v.result.stdout).toBe(wantOut);
      expect(v.result.stderr).toBe(wantErr);
      expect(v.result.output_truncated).toBe(true);
    }
    // The same through a fresh snapshot and a history answer.
    const late = await OwnerSocket.open(d);
    const history = await late.request({ type: 'history', limit: 10 });
    for (const id of ids) {
      const inSnapshot = late.snapshotView(id)!;
      const inHistory = (history.commands as Frame[]).find((v) => v.id === id)!;
      for (const v of [inSnapshot, inHistory]) {
        expect(v.result.stdout).toBe(wantOut);
        expect(v.result.stderr).toBe(wantErr);
        expect(v.result.output_truncated).toBe(true);
      }
    }
    // No frame either owner received carries more.
    for (const f of [...owner.frames, ...late.frames]) {
      for (const v of viewsOf(f)) {
        expect(Buffer.byteLength(v.result?.stdout ?? '')).toBeLessThanOrEqual(VIEW_MAX);
        expect(Buffer.byteLength(v.result?.stderr ?? '')).toBeLessThanOrEqual(VIEW_MAX);
      }
    }
    await owner.close();
    await late.close();
    expect(d.child.exitCode).toBeNull();
  });
});

describe('[c3.2.bad-input] output and PENDING limits in the config file', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'ogf-limits-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const cases: Array<[Record<string, unknown>, string]> = [
    [
      { output_limit_bytes: MIB + 1 },
      'output_limit_bytes: must be an integer from 1024 to 1048576, got 1048577',
    ],
    [
      { output_limit_bytes: 16 * MIB },
      'output_limit_bytes: must be an integer from 1024 to 1048576, got 16777216',
    ],
    [{ max_pending_per_client: 0 }, 'max_pending_per_client: must be an integer from 1 to 10000, got 0'],
    [
      { max_pending_per_client: 10_001 },
      'max_pending_per_client: must be an integer from 1 to 10000, got 10001',
    ],
    [
      { max_pending_per_client: '5' },
      'max_pending_per_client: must be an integer from 1 to 10000, got a string',
    ],
    [{ max_pending: 100_001 }, 'max_pending: must be an integer from 1 to 100000, got 100001'],
    [{ max_pending: 2.5 }, 'max_pending: must be an integer from 1 to 100000, got 2.5'],
  ];
  it.each(cases)(
    '[c5.owner-frames-bounded] start refuses %j: exit 2, one line naming the field and its range',
    (config, line) => {
      const file = join(root, `config-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify(config));
      const dataDir = join(root, `never-${Math.random().toString(36).slice(2)}`);
      const r = spawnSync(
        process.execPath,
        [CLI, 'start', '--data-dir', dataDir, '--port', '0', '--config', file],
        {
          encoding: 'utf8',
          env: { ...process.env, OGF_BROKER_CONFIG: '', OGF_BRIDGE_URL: '' },
          timeout: 20_000,
        },
      );
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([`ogf-broker: config ${file}: ${line}`]);
      expect(existsSync(dataDir)).toBe(false);
    },
  );
});
