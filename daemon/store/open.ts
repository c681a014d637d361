/**
 * Which store a daemon (or the `token` command) opens (contract 16): the shared PostgreSQL when the config
 * names one (OGF_BROKER_DATABASE_URL or `database_url_from_env`), else the embedded SQLite in the data dir.
 * The PostgreSQL store is loaded only then, so a daemon on SQLite never loads `pg`.
 */
import { type Logger, UsageError } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { AuditSigner, StorePorts, TokenBook } from '../core/index.js';
import type { DataDir } from '../datadir/index.js';
import type { LiveNode, NodeRecord } from './postgres/index.js';
import { countOwners, countsByState, Store } from './sqlite/index.js';
import { writeDatabaseStatus } from './status-file.js';
import { readStoreMark, removeStoreMark, storeOf, writeStoreMark } from './where.js';

/** A store as the daemon holds it: the ports, and the token checks tokens/ makes. */
export type DaemonStore = StorePorts & TokenBook;

/**
 * Opens the configured store; a PostgreSQL that cannot be reached now rejects (the start fails). The daemon
 * opens it as its `node` (contract 16: its name held while it runs, exit 2 for a second live daemon with
 * the name); the `token` command is no node, so it works beside running daemons. `signer` signs the audit
 * checkpoints (contract 14: the daemon's key; the `token` command signs none). A node (the daemon) keeps
 * its view of the database's availability in the data dir's database.json (status-file.ts) for `status`,
 * and which store it uses in store.json (where.ts), so a CLI command never reads an empty broker.db in its
 * place (contract 16 v4) — the `token` command is refused (exit 2) here when that is all it could open.
 */
export async function openStore(
  config: Config,
  paths: DataDir,
  opts: { log?: Logger; node?: NodeRecord; signer?: AuditSigner } = {},
): Promise<DaemonStore> {
  const signer = opts.signer;
  if (opts.node === undefined) storeOf(config);
  if (config.database_url === null) {
    // A daemon on broker.db where one used PostgreSQL before (started without its URL?): said, not silent.
    const before = opts.node === undefined ? undefined : readStoreMark(paths.root);
    if (before !== undefined) {
      removeStoreMark(paths.root);
      opts.log?.log('warn', 'store_changed', { was: 'postgresql', url_from_env: before.url_from_env });
    }
    return new Store(paths.db, {
      ...(signer === undefined ? {} : { signer }),
      // Contract 16 (v4): the daemon's node adopts grants stored before grants named their node.
      ...(opts.node === undefined ? {} : { node: opts.node.name }),
    });
  }
  const { PostgresStore } = await import('./postgres/index.js');
  const log = opts.log;
  const publish = (available: boolean, error?: Error) => {
    if (opts.node === undefined) return;
    try {
      writeDatabaseStatus(paths.root, process.pid, available, error?.message);
    } catch (e) {
      log?.log('error', 'database_status_not_written', { error: (e as Error).message });
    }
  };
  try {
    const store = await PostgresStore.open(config.database_url, {
      ...(opts.node === undefined ? {} : { node: opts.node }),
      ...(signer === undefined ? {} : { signer }),
      onAvailability: (available, error) => {
        log?.log(available ? 'info' : 'error', available ? 'database_back' : 'database_unavailable', {
          ...(error === undefined ? {} : { error: error.message }),
        });
        publish(available, error);
      },
    });
    publish(store.available);
    if (opts.node !== undefined) {
      try {
        writeStoreMark(paths.root, config.database_url_env);
      } catch (e) {
        log?.log('error', 'store_mark_not_written', { error: (e as Error).message });
      }
    }
    return store;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new Error(`the shared database cannot be used: ${(e as Error).message}`, { cause: e });
  }
}

/** What `status` and `doctor` read of the store, without opening it for writing. */
export interface StoreLook {
  /** Commands by state; undefined when there are none anywhere yet, or the database cannot be read. */
  counts?: Record<string, number>;
  /** Owners stored; undefined when not known (no broker.db yet, or the database cannot be read). */
  owners?: number;
  /** Where: `broker.db`, `PostgreSQL`, or `PostgreSQL, out of reach (why)`. */
  where: string;
  /** False when the shared database cannot be read now. */
  reachable: boolean;
  /** Contract 16, on PostgreSQL: the live nodes (the `nodes` registry), by name. */
  nodes?: LiveNode[];
}

/**
 * Reads broker.db, or (contract 16) the shared database, where a database out of reach is said, not
 * hidden (never with its URL).
 */
export async function lookAtStore(
  config: Pick<Config, 'database_url'>,
  paths: Pick<DataDir, 'db'>,
): Promise<StoreLook> {
  if (config.database_url === null) {
    return {
      counts: countsByState(paths.db),
      owners: countOwners(paths.db),
      where: 'broker.db',
      reachable: true,
    };
  }
  const { lookAt } = await import('./postgres/index.js');
  const look = await lookAt(config.database_url);
  if (look.ok)
    return {
      counts: look.counts,
      owners: look.owners,
      where: 'PostgreSQL',
      reachable: true,
      nodes: look.nodes,
    };
  return { where: `PostgreSQL, out of reach (${look.error})`, reachable: false };
}
