/**
 * The change feed's second half (contract 16): rows another writer announced (feed.ts), read back and
 * applied to the mirror, then returned as the changes the store's listeners hear — the commands and
 * grants themselves, so a node's broker takes another node's decision without reading it again
 * (core/runtime/fleet.ts). Token tables are named only (the owner edge re-checks its sessions).
 */
import type { Command, Grant, StoreChange } from '../../core/index.js';
import type { TokenTable } from '../rules/index.js';
import type { Mirror } from './mirror.js';
import type { PgTransactions } from './transaction.js';

export async function readBack(
  tx: PgTransactions,
  m: Mirror,
  announced: Map<string, Set<string>>,
): Promise<StoreChange[]> {
  const changes: StoreChange[] = [];
  for (const [table, keys] of announced) {
    const ids = [...keys];
    if (table === 'commands') {
      const rows = await tx.read<{ seq: number; body: string }>(
        'SELECT seq, body FROM commands WHERE id = ANY($1) ORDER BY seq',
        [ids],
      );
      const commands: Command[] = [];
      for (const r of rows) {
        const c = JSON.parse(r.body) as Command;
        m.applyCommand(c, r.seq);
        commands.push(c);
      }
      changes.push({ table, commands });
    } else if (table === 'grants') {
      const rows = await tx.read<{ seq: number; rev: number; body: string }>(
        'SELECT seq, rev, body FROM grants WHERE id = ANY($1) ORDER BY seq',
        [ids],
      );
      const grants: Grant[] = [];
      for (const r of rows) {
        const g = JSON.parse(r.body) as Grant;
        m.applyGrant(g, r.seq, r.rev);
        grants.push(g);
      }
      changes.push({ table, grants });
    } else if (table === 'owner_rules') {
      // Contract 18: named only; each node reads the owners' rules again (app/owner-rules.ts).
      changes.push({ table });
    } else {
      const t = table as TokenTable;
      const rows = await tx.read<{ name: string; token_hash: string; rev: number }>(
        `SELECT name, token_hash, rev FROM ${t} WHERE name = ANY($1)`,
        [ids],
      );
      for (const r of rows) m.applyToken(t, r.name, r.token_hash, r.rev);
      changes.push({ table: t });
    }
  }
  return changes;
}
