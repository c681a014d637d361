/**
 * Commands in PostgreSQL: each row keeps its whole record as JSON text plus the columns queried by, as in
 * broker.db (store/sqlite/commands.ts); a row and its audit entry are one statement. An update names the
 * version it replaces: of two daemons updating one command at one version, PostgreSQL lets one through
 * and re-checks the other against the newer row, which it no longer matches (transaction.ts).
 */
import {
  type AuditEntry,
  type Command,
  type CommandStore,
  type PendingCaps,
  type RetentionRow,
  StaleWrite,
  type State,
  type TasksPage,
} from '../../core/index.js';
import { ACTIVE_STATES, FINAL_STATES, HISTORY_MAX_CHARS, inList } from '../rules/index.js';
import { AUDIT_SELECT, withAudit } from './audit-sql.js';
import type { Apply } from './mirror.js';
import { bounded, searchCommands } from './search.js';
import type { PgTransactions } from './transaction.js';

/**
 * The insert, with contract 1.3's caps checked in the same statement when `$10`/`$11` are given (contract 16
 * v4: every node's non-final commands, from `pending_counts`, schema.ts): over a cap, nothing is inserted.
 */
const INSERT = withAudit(
  `WITH c AS (INSERT INTO commands (id, client, request_id, state, version, created_at, body, task, node)
     SELECT $1::text, $2::text, $3::text, $4::text, $5::integer, $6::text, $7::text, $8::smallint, $9::text
     WHERE $10::integer IS NULL OR (
       coalesce((SELECT n FROM pending_counts WHERE client = $2::text), 0) < $10::integer
       AND coalesce((SELECT n FROM pending_counts WHERE client = '*'), 0) < $11::integer)
     RETURNING seq),
   a AS (${AUDIT_SELECT} FROM c RETURNING 1)
   SELECT c.seq FROM c, a`,
  11,
);

/** An amend (contract 12): the record replaced at the same version. */
const AMEND = withAudit(
  `WITH c AS (UPDATE commands SET body = $1 WHERE id = $2 AND version = $3 RETURNING seq),
   a AS (${AUDIT_SELECT} FROM c RETURNING 1)
   SELECT c.seq FROM c, a`,
  3,
);

const UPDATE = withAudit(
  `WITH c AS (UPDATE commands SET state = $1, version = $2, body = $3 WHERE id = $4 AND version = $2 - 1
     RETURNING seq),
   a AS (${AUDIT_SELECT} FROM c RETURNING 1)
   SELECT c.seq FROM c, a`,
  4,
);

type Page = { body: string; n: number; total: number };

const parse = (rows: Array<{ body: string }>): Command[] => rows.map((r) => JSON.parse(r.body) as Command);

export function pgCommands(tx: PgTransactions, apply: Apply): CommandStore {
  const writes = commandWrites(tx, apply);
  return {
    ...writes,
    updateMany: (changes) =>
      tx.run(() =>
        Promise.all(changes.map((c) => writes.update(c.next, c.audit))).then(() => undefined),
      ) as Promise<void>,
    ...commandReads(tx),
  };
}

/** A command's row written with its audit entry, refused as stale when another writer was first (contract 16). */
function commandWrites(tx: PgTransactions, apply: Apply): Pick<CommandStore, 'insert' | 'update' | 'amend'> {
  const insert = (command: Command, audit: AuditEntry, caps?: PendingCaps) =>
    tx.write<{ seq: number }>(
      INSERT,
      [
        command.id,
        command.client,
        command.request_id ?? null,
        command.phase.state,
        command.version,
        command.created_at,
        JSON.stringify(command),
        command.task === undefined ? null : 1,
        command.node ?? null,
        caps?.perClient ?? null,
        caps?.all ?? null,
      ],
      (rows) => {
        // Contract 16 (v4): another node's commands filled a cap first. Nothing of the batch is stored;
        // the broker reads the active commands again and decides anew (core/runtime/fleet.ts): TooManyPending.
        if (rows.length !== 1) {
          throw new StaleWrite(
            'caps',
            undefined,
            `store: ${command.client} or all clients together are at a PENDING cap (another node queued first)`,
          );
        }
        return () => apply((m) => m.applyCommand(command, rows[0]!.seq));
      },
      audit,
    );
  const update = (next: Command, audit: AuditEntry) =>
    tx.write<{ seq: number }>(
      UPDATE,
      [next.phase.state, next.version, JSON.stringify(next), next.id],
      (rows) => {
        if (rows.length !== 1)
          throw new StaleWrite(
            'commands',
            next.id,
            `store: command ${next.id} is not at version ${next.version - 1}`,
          );
        return () => apply((m) => m.applyCommand(next, rows[0]!.seq));
      },
      audit,
    );
  const amend = (next: Command, audit: AuditEntry) =>
    tx.write<{ seq: number }>(
      AMEND,
      [JSON.stringify(next), next.id, next.version],
      (rows) => {
        if (rows.length !== 1)
          throw new StaleWrite(
            'commands',
            next.id,
            `store: command ${next.id} is not at version ${next.version}`,
          );
        return () => apply((m) => m.applyCommand(next, rows[0]!.seq));
      },
      audit,
    );
  return { insert, update, amend };
}

/** One bounded page of commands (about `maxChars` of records), by the query `inner` in `order`. */
function pageOf(tx: PgTransactions) {
  return async (inner: string, order: string, values: unknown[], maxChars: number) =>
    tx.read<Page>(bounded(inner, order).replace('$MAX', `$${values.length + 1}`), [...values, maxChars]);
}

/** The committed commands as the broker and the edges read them. */
function commandReads(tx: PgTransactions): Omit<CommandStore, 'insert' | 'update' | 'amend' | 'updateMany'> {
  return {
    search: async (filter, limit, before) =>
      parse(await searchCommands(tx, filter, limit, before, HISTORY_MAX_CHARS)),
    get: async (id) => parse(await tx.read('SELECT body FROM commands WHERE id = $1', [id]))[0],
    active: async () =>
      parse(await tx.read(`SELECT body FROM commands WHERE state IN ${inList(ACTIVE_STATES)} ORDER BY seq`)),
    recentFinal: async (limit) =>
      parse(
        await tx.read(
          `SELECT body FROM commands WHERE state IN ${inList(FINAL_STATES)} ORDER BY seq DESC LIMIT $1`,
          [limit],
        ),
      ),
    history: (limit, before, maxChars = HISTORY_MAX_CHARS) => history(tx, limit, before, maxChars),
    tasksOf: (client, limit, maxChars, before) => tasksOf(tx, client, limit, maxChars, before),
    retentionScan: (afterSeq, limit) =>
      tx.read<RetentionRow>(
        'SELECT seq, id, state, created_at, length(body) AS chars FROM commands WHERE seq > $1 ORDER BY seq LIMIT $2',
        [afterSeq, limit],
      ),
    async counts() {
      const out: Partial<Record<State, number>> = {};
      const rows = await tx.read<{ state: State; n: number }>(
        'SELECT state, count(*) AS n FROM commands GROUP BY state',
      );
      for (const row of rows) out[row.state] = row.n;
      return out;
    },
  };
}

/** Commands newest first, before a pending_id (or an ISO time) when given. */
async function history(
  tx: PgTransactions,
  limit: number,
  before: string | undefined,
  maxChars: number,
): Promise<Command[]> {
  const page = pageOf(tx);
  if (before === undefined) {
    return parse(
      await page('SELECT seq, body FROM commands ORDER BY seq DESC LIMIT $1', 'seq DESC', [limit], maxChars),
    );
  }
  const seq = (await tx.read<{ seq: number }>('SELECT seq FROM commands WHERE id = $1', [before]))[0];
  if (seq !== undefined) {
    return parse(
      await page(
        'SELECT seq, body FROM commands WHERE seq < $1 ORDER BY seq DESC LIMIT $2',
        'seq DESC',
        [seq.seq, limit],
        maxChars,
      ),
    );
  }
  return parse(
    await page(
      'SELECT seq, created_at, body FROM commands WHERE created_at < $1 ORDER BY created_at DESC, seq DESC LIMIT $2',
      'created_at DESC, seq DESC',
      [before, limit],
      maxChars,
    ),
  );
}

/** One page of a client's tasks, newest first, older than the task `before`; undefined when it is not one. */
async function tasksOf(
  tx: PgTransactions,
  client: string,
  limit: number,
  maxChars: number,
  before: string | undefined,
): Promise<TasksPage | undefined> {
  let from = Number.MAX_SAFE_INTEGER;
  if (before !== undefined) {
    const row = (
      await tx.read<{ seq: number }>(
        'SELECT seq FROM commands WHERE id = $1 AND client = $2 AND task IS NOT NULL',
        [before, client],
      )
    )[0];
    if (row === undefined) return undefined;
    from = row.seq;
  }
  // One more row than the page, so `more` is known without a second query.
  const rows = await pageOf(tx)(
    'SELECT seq, body FROM commands WHERE client = $1 AND task IS NOT NULL AND seq < $2 ORDER BY seq DESC LIMIT $3',
    'seq DESC',
    [client, from, limit + 1],
    maxChars,
  );
  const kept = rows.slice(0, limit);
  return { commands: parse(kept), more: (rows[0]?.total ?? 0) > kept.length };
}
