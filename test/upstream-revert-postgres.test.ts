/**
 * Contract 20 on PostgreSQL (contract 16): the previous content a succeeded write keeps lives in the shared
 * database and survives a restart; a revert after it restores the file, and the content is in no owner
 * frame. Real PostgreSQL, real daemon, real @modelcontextprotocol/server-filesystem.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, structured } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';
import { type Postgres, startPostgres } from './helpers/postgres.js';
import { FILESYSTEM } from './helpers/upstreams.js';

let pg: Postgres;
let url: string;
const files = mkdtempSync(join(tmpdir(), 'ogf-revert-pg-'));
const dataDir = makeDataDir('ogf-revert-pg-');
const running: RunningDaemon[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  url = await pg.createDatabase();
});

afterAll(async () => {
  for (const d of running) await d.stop();
  await pg?.destroy();
});

async function start(): Promise<RunningDaemon> {
  const d = await startDaemon({
    dataDir,
    env: { OGF_BROKER_DATABASE_URL: url },
    config: {
      upstreams: {
        notes: { argv: [process.execPath, FILESYSTEM, files], preset: 'filesystem', wait_seconds: 0 },
      },
    },
  });
  running.push(d);
  return d;
}

describe('revert on PostgreSQL (contract 20, 16)', () => {
  it('[c20.revert] the kept content is in the shared database, survives a restart, and a revert restores it', async () => {
    const path = join(files, 'pg.md');
    writeFileSync(path, 'kept in postgres\n');
    const d = await start();
    const ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
    await waitFor(
      async () => (await ai.listTools()).tools.some((t) => t.name === 'notes__write_file'),
      'listed',
      30_000,
    );
    const owner = await OwnerSocket.open(d);
    const id = String(
      structured(await call(ai, 'notes__write_file', { path, content: 'overwritten\n' })).pending_id,
    );
    const v = await owner.view(id, (x) => x.preview?.status === 'ready', 'previewed');
    expect(await owner.request({ type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
    await owner.view(id, (x) => x.status === 'SUCCEEDED', 'written');
    await owner.close();
    await ai.close();
    await d.stop();
    const stored = await pg.sql(url.split('/').pop()!, `SELECT body FROM commands WHERE id = '${id}'`);
    expect(stored).toContain('kept in postgres');

    const d2 = await start();
    const owner2 = await OwnerSocket.open(d2);
    const done = await owner2.view(id, (x) => x.status === 'SUCCEEDED', 'seen after the restart');
    expect(done.revertible_until).toBeDefined();
    // The owners see it only as the write's diff (to show the diff back); the kept record is in no frame.
    expect(owner2.raw.some((t) => t.includes('revert_base') || t.includes('"previous"'))).toBe(false);
    const answer = await owner2.request({ type: 'revert', id });
    expect(answer.type).toBe('revert');
    await owner2.view(answer.id, (x) => x.status === 'SUCCEEDED', 'reverted');
    expect(readFileSync(path, 'utf8')).toBe('kept in postgres\n');
    await owner2.close();
  });
});
