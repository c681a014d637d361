/**
 * Which store a data dir's daemon uses, as the CLI finds it (contract 16, v4: "Every CLI command given a
 * data dir whose daemon uses PostgreSQL (`status`, `list`, `token`, `grant`, `policy test`, `audit`) uses
 * that database, or exits 2 saying why it cannot — never an empty `broker.db`"; issue 35 finding 8d).
 *
 * The daemon records it in `<data-dir>/store.json` (0600, temp file + rename) when it opens a PostgreSQL
 * store (open.ts), and removes it when it opens broker.db: `{"store":"postgresql","url_from_env":NAME,
 * "since"}` — the name of the variable the URL came from, never the URL (it may hold a password). Unlike
 * database.json it outlives the daemon: a CLI run after a stop must still know where the history is.
 *
 * `storeOf` is the one decision every CLI command asks: the database when its URL is set in this shell
 * (OGF_BROKER_DATABASE_URL or the config's `database_url_from_env`), else broker.db — unless the data dir
 * says its daemon uses PostgreSQL: then a UsageError (exit 2) naming the variable to set. Lean on purpose
 * (node:fs and base only): `audit verify` is timed with Node's start-up (bench row 15).
 */
import { existsSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../base/index.js';
import { writePrivateFileExclusive } from '../datadir/index.js';

export interface StoreMark {
  store: 'postgresql';
  /** The environment variable the daemon read the URL from. */
  url_from_env: string;
  /** When a daemon first opened PostgreSQL for this data dir (ISO-8601). */
  since: string;
}

export function storeMarkPath(dataDir: string): string {
  return join(dataDir, 'store.json');
}

/** What the data dir says its daemon uses, or undefined (broker.db: no file, or one that does not parse). */
export function readStoreMark(dataDir: string): StoreMark | undefined {
  let text: string;
  try {
    text = readFileSync(storeMarkPath(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const data = JSON.parse(text) as Partial<StoreMark>;
    if (data.store === 'postgresql' && typeof data.url_from_env === 'string') {
      return {
        store: 'postgresql',
        url_from_env: data.url_from_env,
        since: typeof data.since === 'string' ? data.since : '',
      };
    }
  } catch {
    // Unreadable: still a mark (a daemon wrote it); which variable is not known.
  }
  return { store: 'postgresql', url_from_env: 'OGF_BROKER_DATABASE_URL', since: '' };
}

/** Records that this data dir's daemon uses PostgreSQL (the URL read from `urlFromEnv`); kept if unchanged. */
export function writeStoreMark(dataDir: string, urlFromEnv: string, now = new Date()): void {
  const before = readStoreMark(dataDir);
  if (before?.url_from_env === urlFromEnv && before.since !== '') return;
  const mark: StoreMark = { store: 'postgresql', url_from_env: urlFromEnv, since: now.toISOString() };
  const path = storeMarkPath(dataDir);
  const tmp = `${path}.${process.pid}.tmp`;
  writePrivateFileExclusive(tmp, `${JSON.stringify(mark)}\n`);
  renameSync(tmp, path);
}

/** The data dir's daemon uses broker.db now (it opened it): the mark goes. */
export function removeStoreMark(dataDir: string): void {
  try {
    unlinkSync(storeMarkPath(dataDir));
  } catch {
    // None.
  }
}

/** Where a CLI command reads (and writes) a data dir's history. */
export type StoreChoice = { kind: 'sqlite'; db: string } | { kind: 'postgres'; url: string };

/**
 * Contract 16 (v4): the store of `config`'s data dir for a CLI command — its `database_url` (already read
 * from this shell's environment by the config loader), else broker.db, unless the data dir's daemon uses
 * PostgreSQL: then exit 2 saying so and which variable to set.
 */
export function storeOf(config: { dataDir: string; database_url: string | null }): StoreChoice {
  if (config.database_url !== null) return { kind: 'postgres', url: config.database_url };
  const mark = readStoreMark(config.dataDir);
  if (mark !== undefined) {
    throw new UsageError(
      `the daemon of ${config.dataDir} uses PostgreSQL${mark.since === '' ? '' : ` (since ${mark.since})`}, and ${mark.url_from_env} is not set in this shell: set ${mark.url_from_env} to the database's URL (broker.db in the data dir does not hold its history)`,
    );
  }
  return { kind: 'sqlite', db: join(config.dataDir, 'broker.db') };
}

/**
 * Whether the data dir's config.json could name a database: only its `database_url_from_env` does. A file
 * that is not plain JSON (or cannot be read) may — the config's loader then says what is wrong with it.
 * Loading that loader (zod, CEL) was a third of `audit verify`'s time on a data dir with a config (row 15).
 */
function mayNameDatabase(dataDir: string): boolean {
  const file = join(dataDir, 'config.json');
  if (!existsSync(file)) return false;
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return typeof raw !== 'object' || raw === null || Array.isArray(raw) || 'database_url_from_env' in raw;
  } catch {
    return true;
  }
}

/**
 * The shared database's URL for a data dir, else null (broker.db), for commands that load the config only
 * when it may name a database (`audit verify`: its start-up is timed). Exit 2 as `storeOf`.
 */
export async function databaseUrlOf(dataDir: string): Promise<string | null> {
  const env = process.env;
  const set = (name: string) => (env[name] ?? '') !== '';
  let databaseUrl: string | null = null;
  // Without these the config cannot name a database: the config's code (zod, CEL) is not loaded.
  if (set('OGF_BROKER_DATABASE_URL') || set('OGF_BROKER_CONFIG') || mayNameDatabase(dataDir)) {
    const { loadConfig } = await import('../config/index.js');
    databaseUrl = loadConfig({ dataDir }).database_url;
  }
  const choice = storeOf({ dataDir, database_url: databaseUrl });
  return choice.kind === 'postgres' ? choice.url : null;
}
