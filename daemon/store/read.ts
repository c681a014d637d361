/**
 * Reads of a data dir's history by a CLI command (contract 16 v4), from the store its daemon uses
 * (where.ts `storeOf`): broker.db opened read-only, or the shared PostgreSQL over one short connection.
 * A database that cannot be read is exit 2 with the driver's reason, never the URL.
 */
import { UsageError } from '../base/index.js';
import type { Command } from '../core/index.js';
import { newestCommands } from './sqlite/index.js';
import { storeOf } from './where.js';

/** The newest `limit` commands, newest first (`policy test`, contract 11); none when there is no history. */
export async function newestCommandsOf(
  config: { dataDir: string; database_url: string | null },
  limit: number,
): Promise<Command[]> {
  const choice = storeOf(config);
  if (choice.kind === 'sqlite') return newestCommands(choice.db, limit) ?? [];
  const { newestPgCommands } = await import('./postgres/index.js');
  try {
    return await newestPgCommands(choice.url, limit);
  } catch (e) {
    throw new UsageError(`the shared database cannot be read: ${(e as Error).message}`);
  }
}
