/**
 * `ogf-broker backup` / `restore` (contract 17; issue 36 item 5): a backup taken by the real CLI while a
 * real daemon is under load (the AI submitting commands the whole time), restored into an empty data dir;
 * `audit verify` passes on it, and a daemon started on it takes the same MCP token and owner token and
 * shows the same history as at the backup. Also: the archive is 0600, restore refuses a non-empty data dir,
 * and a damaged archive restores nothing.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { call, echoConfig, httpClient, type McpClient } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

function commandIds(dataDir: string): string[] {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT id FROM commands ORDER BY id').pluck().all() as string[];
  } finally {
    db.close();
  }
}

let work: string;
let d: RunningDaemon;
let archive: string;
let submitted = 0;
let idsAfterBackup: string[];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'ogf-backup-'));
  d = await startDaemon({ config: echoConfig() });
  const ai: McpClient = await httpClient(`${d.url}/mcp`, d.mcpToken);
  try {
    // A history before the backup, then load during it: the AI keeps submitting until the backup is done.
    for (let i = 0; i < 5; i++)
      await call(ai, 'run_command_wait', { command: 'echo', args: { word: 'before' }, wait_seconds: 0 });
    let done = false;
    const load = (async () => {
      while (!done) {
        await call(ai, 'run_command_wait', { command: 'echo', args: { word: 'during' }, wait_seconds: 0 });
        submitted++;
      }
    })();
    archive = join(work, 'broker.ogfbackup');
    const r = await runCli(['backup', archive, '--data-dir', d.dataDir]);
    done = true;
    await load;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Wrote .*broker\.ogfbackup \(0600\)/);
    idsAfterBackup = commandIds(d.dataDir);
  } finally {
    await ai.close();
  }
}, 60_000);

afterAll(async () => {
  await d?.stop();
});

describe('[c17.backup] backup under load, restore into an empty data dir', () => {
  it('the archive is one 0600 file holding broker.db, the keys and the tokens', () => {
    expect(mode(archive)).toBe('600');
    expect(submitted).toBeGreaterThan(0);
    const manifest = JSON.parse(readFileSync(archive, 'utf8').split('\n')[1]!);
    const names = manifest.members.map((m: { name: string }) => m.name);
    for (const f of [
      'broker.db',
      'audit.key',
      'audit.pub',
      'vapid.json',
      'owner.token',
      'mcp.token',
      'config.json',
    ])
      expect(names).toContain(f);
    expect(names).not.toContain('daemon.json');
    expect(names).not.toContain('broker.db-wal');
    // No scratch copy of the database is left beside the archive.
    expect(readdirSync(work)).toEqual(['broker.ogfbackup']);
  });

  it('restore refuses a data dir that holds anything (exit 2) and writes nothing there', async () => {
    const busy = join(work, 'busy');
    mkdirSync(busy, { mode: 0o700 });
    writeFileSync(join(busy, 'keep.txt'), 'mine');
    const r = await runCli(['restore', archive, '--data-dir', busy]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ogf-broker: restore: .*not empty/);
    expect(readdirSync(busy)).toEqual(['keep.txt']);
  });

  it('a damaged archive restores nothing', async () => {
    const bad = join(work, 'bad.ogfbackup');
    const bytes = readFileSync(archive);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    writeFileSync(bad, bytes, { mode: 0o600 });
    const target = join(work, 'from-bad');
    const r = await runCli(['restore', bad, '--data-dir', target]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^ogf-broker: restore: .*sha256/);
    expect(existsSync(target)).toBe(false);
  });

  it('an archive naming a path instead of a file name restores nothing, anywhere', async () => {
    const evil = join(work, 'evil.ogfbackup');
    const body = Buffer.from('x');
    const sha256 = createHash('sha256').update(body).digest('hex');
    const manifest = {
      created_at: '2026-01-01T00:00:00.000Z',
      broker_version: '0.1.0',
      database: 'sqlite',
      members: [{ name: '../escaped', size: 1, sha256 }],
    };
    writeFileSync(
      evil,
      Buffer.concat([Buffer.from(`OGF-BROKER-BACKUP 1\n${JSON.stringify(manifest)}\n`), body]),
    );
    const target = join(work, 'from-evil');
    const r = await runCli(['restore', evil, '--data-dir', target]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ogf-broker: restore: .*not valid/);
    expect(existsSync(join(work, 'escaped'))).toBe(false);
    expect(existsSync(target)).toBe(false);
  });

  it('restored: 0700/0600, audit verify passes, the same tokens log in, the same history', async () => {
    const target = join(work, 'restored');
    const r = await runCli(['restore', archive, '--data-dir', target]);
    expect(r.code, r.stderr).toBe(0);
    expect(mode(target)).toBe('700');
    for (const f of readdirSync(target)) expect(mode(join(target, f)), f).toBe('600');

    const verify = await runCli(['audit', 'verify', '--data-dir', target]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);

    // The history at the backup: every command of the restored copy is one the daemon had, at least the 5 before.
    const restoredIds = commandIds(target);
    expect(restoredIds.length).toBeGreaterThanOrEqual(5);
    for (const id of restoredIds) expect(idsAfterBackup).toContain(id);

    await d.stop();
    const again = await startDaemon({ dataDir: target });
    try {
      // Same tokens: the old daemon's files, not new ones.
      expect(again.mcpToken).toBe(d.mcpToken);
      expect(again.ownerToken).toBe(d.ownerToken);
      const ai = await httpClient(`${again.url}/mcp`, d.mcpToken);
      expect((await ai.listTools()).tools.some((t) => t.name === 'run_command_wait')).toBe(true);
      await ai.close();
      const login = await fetch(`${again.url}/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: d.ownerToken }),
      });
      expect(login.status).toBe(200);
      const owner = await OwnerSocket.open(again);
      const snapshot = owner.frames.find((f) => f.type === 'snapshot')!;
      const shown = (snapshot.commands as Array<{ id: string }>).map((c) => c.id).sort();
      expect(shown).toEqual(restoredIds);
      await owner.close();
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('a data dir group/other can read is not backed up from (exit 2)', async () => {
    const open = mkdtempSync(join(tmpdir(), 'ogf-backup-open-'));
    chmodSync(open, 0o755);
    const r = await runCli(['backup', join(work, 'x.ogfbackup'), '--data-dir', open]);
    expect(r.code).toBe(2);
    expect(existsSync(join(work, 'x.ogfbackup'))).toBe(false);
  });
});
