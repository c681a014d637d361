/**
 * `ogf-broker backup` on PostgreSQL (contract 17): the database is the shared one, so the archive holds this
 * node's files only and the command says to back the database up with pg_dump. A real daemon on a real
 * PostgreSQL (test/helpers/postgres.ts), the real CLI.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli, startDaemon } from './helpers/daemon.js';
import { echoConfig } from './helpers/mcp.js';
import { postgresForFile } from './helpers/postgres.js';

const { server, daemons } = postgresForFile();

it('[c17.backup] on PostgreSQL, backup copies this node’s files and says to use pg_dump for the database', async () => {
  const url = await server().createDatabase();
  const env = { OGF_BROKER_DATABASE_URL: url };
  const d = await startDaemon({ config: echoConfig(), env });
  daemons.push(d);
  const archive = join(mkdtempSync(join(tmpdir(), 'ogf-backup-pg-')), 'node.ogfbackup');
  const r = await runCli(['backup', archive, '--data-dir', d.dataDir], env);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/pg_dump/);
  const manifest = JSON.parse(readFileSync(archive, 'utf8').split('\n')[1]!);
  expect(manifest.database).toBe('postgres');
  const names = manifest.members.map((m: { name: string }) => m.name);
  expect(names).not.toContain('broker.db');
  for (const f of ['audit.key', 'audit.pub', 'config.json']) expect(names).toContain(f);
});
