/**
 * What a PostgreSQL failure means to the daemon (contract 16): the database out of reach is `Unavailable`
 * (a tool error for new MCP calls, nothing decided), told apart from a refusal of the write itself (a
 * version or a grant's uses that changed under it, a unique index); a serialization failure or a deadlock
 * is retried by the transaction (transaction.ts).
 */
import { BrokerError } from '../../base/index.js';
import { StaleWrite } from '../../core/index.js';

/** SQLSTATEs a transaction is simply run again for: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);

/** SQLSTATEs and Node socket codes that mean the server cannot be reached or went away. */
const GONE = new Set([
  '57P01', // admin_shutdown (pg_ctl stop)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, in recovery)
  '53300', // too_many_connections
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** node-postgres's own words when a connection ends or cannot be made (these errors carry no code). */
const GONE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end/i;

/** True when `e` says the database is out of reach (not that it refused this write). */
export function isUnreachable(e: unknown): boolean {
  if (e instanceof BrokerError) return e.code === 'Unavailable';
  const code = (e as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && (GONE.has(code) || code.startsWith('08'))) return true;
  return e instanceof Error && GONE_MESSAGE.test(e.message);
}

/** True when the whole transaction may simply run again. */
export function isRetryable(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

/** The error a caller sees: `Unavailable` when the database is out of reach, else `e` itself. */
export function storeError(e: unknown): unknown {
  // Contract 16: one request_id submitted to two nodes at once: the second insert lost (core/model/stale-write.ts).
  const pgErr = e as { code?: unknown; constraint?: unknown } | undefined;
  if (pgErr?.code === '23505' && pgErr.constraint === 'commands_request')
    return new StaleWrite('commands', undefined, 'store: another node stored this request_id first');
  if (e instanceof BrokerError || !isUnreachable(e)) return e;
  const why = e instanceof Error ? e.message : String(e);
  return new BrokerError(
    'Unavailable',
    `the shared database is out of reach, so nothing was queued or decided; try again once it is back (${why})`,
    { cause: e },
  );
}
