/**
 * Contract 16 (v4), issue 35 finding 8d: a CLI command given a data dir whose daemon uses PostgreSQL uses
 * that database, or exits 2 saying why it cannot — never an empty broker.db. A real daemon on a real
 * PostgreSQL makes a history; `policy test` with the URL in the shell reports it, without the URL exits 2
 * naming the variable to set (before: "matched 0 of 0" from an empty broker.db), also after the daemon
 * stopped; `audit verify`, `status` and `token` the same; and the mark the daemon leaves (store.json) holds the
 * variable's name, never the URL.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, runCli, startDaemon } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';
import { type Postgres, postgresForFile } from './helpers/postgres.js';

const { server, daemons } = postgresForFile();
let pg: Postgres;
beforeAll(() => {
  pg = server();
});

describe('[c16.cli-store] CLI commands read the PostgreSQL the data dir’s daemon uses, or exit 2', () => {
  it('policy test, audit verify, status and token: the database with its URL, exit 2 without it', {
    timeout: 120_000,
  }, async () => {
    const url = await pg.createDatabase();
    const dataDir = makeDataDir('ogf-cli-pg-');
    const env = { OGF_BROKER_DATABASE_URL: url };
    const noUrl = { OGF_BROKER_DATABASE_URL: undefined };
    const d = await startDaemon({
      dataDir,
      env,
      config: ownerCatalog(join(dataDir, 'marks'), {
        rules: [{ id: 'cc', when: "args.word == 'c1'", decision: 'deny' }],
      }),
    });
    daemons.push(d);
    const ai = await mcpClient(d);
    const owner = await OwnerSocket.open(d);
    const a1 = await queue(ai, 'mark', { word: 'a1' });
    await queue(ai, 'mark', { word: 'a2' });
    await queue(ai, 'mark', { word: 'c1' });
    expect((await owner.request({ type: 'deny', id: a1, version: 1 })).ok).toBe(true);
    await ai.close();
    await owner.close();

    // The mark: 0600, the variable's name, never the URL.
    const mark = join(dataDir, 'store.json');
    expect(statSync(mark).mode & 0o777).toBe(0o600);
    const text = readFileSync(mark, 'utf8');
    expect(JSON.parse(text)).toMatchObject({ store: 'postgresql', url_from_env: 'OGF_BROKER_DATABASE_URL' });
    expect(text).not.toContain(url);
    expect(text).not.toContain('postgres://');

    const check = async () => {
      const withUrl = await runCli(['policy', 'test', '--data-dir', dataDir], env);
      expect(withUrl.code, withUrl.stderr).toBe(0);
      expect(withUrl.stdout).toBe('rule cc: matched 1 of 3 (0 would be decided otherwise)\n');
      const without = await runCli(['policy', 'test', '--data-dir', dataDir], noUrl);
      expect(without.code).toBe(2);
      expect(without.stdout).toBe('');
      expect(without.stderr).toMatch(/uses PostgreSQL/);
      expect(without.stderr).toMatch(/set OGF_BROKER_DATABASE_URL/);
      const verify = await runCli(['audit', 'verify', '--data-dir', dataDir], noUrl);
      expect(verify.code).toBe(2);
      expect(verify.stderr).toMatch(/uses PostgreSQL.*OGF_BROKER_DATABASE_URL/);
      const verified = await runCli(['audit', 'verify', '--data-dir', dataDir], env);
      expect(verified.code, verified.stderr).toBe(0);
      const status = await runCli(['status', '--data-dir', dataDir], noUrl);
      expect(status.code).toBe(2);
      expect(status.stderr).toMatch(/uses PostgreSQL.*OGF_BROKER_DATABASE_URL/);
      const counted = await runCli(['status', '--data-dir', dataDir], env);
      expect(counted.stdout).toMatch(/^commands: awaiting_review 1, .*denied 2/m);
      const token = await runCli(['token', 'mcp', '--data-dir', dataDir, '--client', 'other'], noUrl);
      expect(token.code).toBe(2);
      expect(token.stderr).toMatch(/uses PostgreSQL.*OGF_BROKER_DATABASE_URL/);
      // Nothing was made in an empty broker.db in the database's place.
      expect(existsSync(join(dataDir, 'broker.db'))).toBe(false);
    };
    await check();
    // The mark outlives the daemon: after a stop, the same answers.
    expect(await d.stop()).toBe(0);
    expect(existsSync(mark)).toBe(true);
    await check();
  });
});
