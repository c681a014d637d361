/**
 * The one read port of a data dir's history and audit chain for a CLI command (contract 16 v4: `policy
 * test`, `audit verify`, `audit export`), chosen where it is opened — `recordOf` asks where.ts `storeOf`
 * once — so no command decides again which store to read (issue 37 item 3). broker.db is opened read-only;
 * the shared PostgreSQL over one short connection in one read-only snapshot, loaded only then. A database
 * that cannot be read is exit 2 with the driver's reason, never the URL.
 *
 * Lean on purpose: `audit verify` is timed with Node's start-up (bench row 15), so broker.db's side loads
 * its read-only reader alone, not the SQLite store.
 */
import { join } from 'node:path';
import { UsageError } from '../base/index.js';
import type { Checkpoint, Command } from '../core/index.js';
import type { NodeKey } from './postgres/index.js';
import type { StoredHistoryRow } from './rows/index.js';
import type { AuditRange } from './rules/index.js';
import {
  type AuditChainReader,
  newestCommands,
  openAuditChain,
  readAuditChain,
  readHistory,
} from './sqlite/readonly.js';
import { databaseUrlOf, storeOf } from './where.js';

export type { AuditChainReader, AuditRange, NodeKey };

/** The chain's rows (of a range), its checkpoints, and on a shared database the nodes' published keys. */
export interface RecordChain {
  rows: Array<{ seq: number; entry: string | null; hash: string | null }>;
  checkpoints: Checkpoint[];
  nodes?: NodeKey[];
}

/** The commands table and the audit rows (`[seq, command_id column, entry]`) whose column may be off. */
export interface StoredHistoryRead {
  rows: readonly Readonly<StoredHistoryRow>[];
  links: ReadonlyArray<readonly [number, string | null, string]>;
}

/** The first pass over the whole chain, as the store serves it. */
export type ChainSource =
  /** broker.db: read in seq ranges, a reader per thread (audit/walk-threads.ts); undefined: no chain. */
  | { kind: 'ranges'; open(): AuditChainReader | undefined }
  /**
   * The shared database: every row streamed in seq order to `visit` (false stops it), then the
   * checkpoints, the nodes' keys and the history, in the same snapshot.
   */
  | {
      kind: 'stream';
      walk(visit: (entry: string | null, hash: string | null) => boolean): Promise<
        Required<Pick<RecordChain, 'checkpoints' | 'nodes'>> & {
          stopped: boolean;
          history?: StoredHistoryRead;
        }
      >;
    };

/** What a CLI command reads of a data dir's store. */
export interface RecordReads {
  /** The newest `limit` commands, newest first; none when there is no history. */
  newestCommands(limit: number): Promise<Command[]>;
  /** The chain (or the entries of `range`); exit 2 when the store holds none. */
  chain(range?: AuditRange): Promise<RecordChain>;
  /** The history in a snapshot of its own (undefined: broker.db cannot be read). */
  history(): Promise<StoredHistoryRead | undefined>;
  readonly source: ChainSource;
}

/** The read port of the store `config`'s data dir uses (exit 2 as where.ts `storeOf`). */
export function recordOf(config: { dataDir: string; database_url: string | null }): RecordReads {
  const choice = storeOf(config);
  return choice.kind === 'sqlite' ? brokerDb(choice.db, config.dataDir) : sharedDatabase(choice.url);
}

/** As recordOf, for a command that loads the config only when it may name a database (`audit`). */
export async function recordOfDataDir(dataDir: string): Promise<RecordReads> {
  const url = await databaseUrlOf(dataDir);
  return url === null ? brokerDb(join(dataDir, 'broker.db'), dataDir) : sharedDatabase(url);
}

function brokerDb(db: string, dataDir: string): RecordReads {
  return {
    newestCommands: async (limit) => newestCommands(db, limit) ?? [],
    async chain(range) {
      const chain = readAuditChain(db, range);
      if (chain === undefined) {
        throw new UsageError(
          `--data-dir: ${dataDir} holds no readable broker.db with an audit chain (start this version's daemon there once, or pass --file EXPORT)`,
        );
      }
      return chain;
    },
    history: async () => readHistory(db),
    source: { kind: 'ranges', open: () => openAuditChain(db) },
  };
}

/** A read of the shared database, its failures as exit 2 (never with the URL). */
async function fromDatabase<T>(read: (pg: typeof import('./postgres/index.js')) => Promise<T>): Promise<T> {
  const pg = await import('./postgres/index.js');
  try {
    return await read(pg);
  } catch (e) {
    if (e instanceof pg.NoAuditChain) {
      throw new UsageError(
        'the shared database holds no audit chain (start this version’s daemon on it once, or pass --file EXPORT)',
      );
    }
    throw new UsageError(`the shared database cannot be read: ${(e as Error).message}`);
  }
}

function sharedDatabase(url: string): RecordReads {
  return {
    newestCommands: (limit) => fromDatabase((pg) => pg.newestPgCommands(url, limit)),
    chain: (range) => fromDatabase((pg) => pg.readPgAuditChain(url, range)),
    // As before this port: a failure here is the driver's own error.
    history: async () => (await import('./postgres/index.js')).readPgHistory(url),
    source: { kind: 'stream', walk: (visit) => fromDatabase((pg) => pg.walkPgAuditChain(url, visit)) },
  };
}
