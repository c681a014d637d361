import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.js';
import { openDataDir } from '../datadir/index.js';
import { openStore } from './open.js';
import {
  databaseUrlOf,
  readStoreMark,
  removeStoreMark,
  storeMarkPath,
  storeOf,
  writeStoreMark,
} from './where.js';

const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ogf-where-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('[c16.cli-store] which store a data dir’s daemon uses (contract 16 v4)', () => {
  it('no mark: broker.db; a URL in this shell: the database', () => {
    const d = dir();
    expect(storeOf({ dataDir: d, database_url: null })).toEqual({ kind: 'sqlite', db: join(d, 'broker.db') });
    expect(storeOf({ dataDir: d, database_url: 'postgres://h/db' })).toEqual({
      kind: 'postgres',
      url: 'postgres://h/db',
    });
  });

  it('a mark: 0600, the variable’s name, kept with its first time; without the URL exit 2 naming it', () => {
    const d = dir();
    writeStoreMark(d, 'MY_PG_URL', new Date('2026-12-01T00:00:00.000Z'));
    expect(statSync(storeMarkPath(d)).mode & 0o777).toBe(0o600);
    writeStoreMark(d, 'MY_PG_URL', new Date('2026-12-02T00:00:00.000Z'));
    expect(readStoreMark(d)).toEqual({
      store: 'postgresql',
      url_from_env: 'MY_PG_URL',
      since: '2026-12-01T00:00:00.000Z',
    });
    expect(() => storeOf({ dataDir: d, database_url: null })).toThrow(
      /uses PostgreSQL \(since 2026-12-01T00:00:00.000Z\), and MY_PG_URL is not set in this shell: set MY_PG_URL/,
    );
    expect(storeOf({ dataDir: d, database_url: 'postgres://h/db' }).kind).toBe('postgres');
    // Another variable later: recorded.
    writeStoreMark(d, 'OTHER_URL');
    expect(readStoreMark(d)?.url_from_env).toBe('OTHER_URL');
    removeStoreMark(d);
    expect(readStoreMark(d)).toBeUndefined();
    removeStoreMark(d);
  });

  it('an unreadable mark still says PostgreSQL (a daemon wrote it), naming the default variable', () => {
    const d = dir();
    writeFileSync(storeMarkPath(d), '{not json', { mode: 0o600 });
    expect(() => storeOf({ dataDir: d, database_url: null })).toThrow(/OGF_BROKER_DATABASE_URL/);
  });

  it('databaseUrlOf (audit): the same decision, loading the config only when it may name a database', async () => {
    const d = dir();
    expect(await databaseUrlOf(d)).toBeNull();
    writeStoreMark(d, 'OGF_BROKER_DATABASE_URL');
    await expect(databaseUrlOf(d)).rejects.toThrow(/uses PostgreSQL/);
  });

  it('databaseUrlOf reads config.json as JSON first: the loader runs only when the file names database_url_from_env or is not plain JSON', async () => {
    const d = dir();
    writeFileSync(join(d, 'config.json'), JSON.stringify({ commands: {} }));
    expect(await databaseUrlOf(d)).toBeNull();
    writeFileSync(join(d, 'config.json'), JSON.stringify({ database_url_from_env: 'OGF_TEST_NEVER_SET_41' }));
    await expect(databaseUrlOf(d)).rejects.toThrow(/database_url_from_env: names OGF_TEST_NEVER_SET_41/);
    writeFileSync(join(d, 'config.json'), '{"commands": ');
    await expect(databaseUrlOf(d)).rejects.toThrow(/config/);
  });

  it('a daemon opening broker.db removes the mark; the token command (no node) is refused while it stands', async () => {
    const d = dir();
    const config = loadConfig({ dataDir: d }, {});
    const paths = openDataDir(d);
    writeStoreMark(d, 'OGF_BROKER_DATABASE_URL');
    await expect(openStore(config, paths)).rejects.toThrow(/uses PostgreSQL/);
    const logged: Array<[string, string, unknown]> = [];
    const store = await openStore(config, paths, {
      node: { name: 'n', host: 'h', pid: process.pid, version: 'test' },
      log: { log: (level, event, fields) => logged.push([level, event, fields]) },
    });
    try {
      expect(readStoreMark(d)).toBeUndefined();
      expect(logged).toContainEqual([
        'warn',
        'store_changed',
        { was: 'postgresql', url_from_env: 'OGF_BROKER_DATABASE_URL' },
      ]);
      expect(readFileSync(paths.db).length).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  });
});
