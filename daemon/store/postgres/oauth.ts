/**
 * OAuth clients, connections and token hashes in PostgreSQL (contract 15), the same rows and meaning as
 * broker.db (store/sqlite/oauth.ts): only the SHA-256 of a token is written, a code never is. A connection
 * and its first tokens go with `oauth_client_connected` in one transaction, its end with
 * `oauth_client_disconnected`. A refresh token's rotation is decided on its row, which PostgreSQL locks and
 * re-checks: of two daemons rotating one token at once, the second finds it no longer live (a reuse).
 */
import type {
  OAuthPendingRegistration,
  OAuthRegisteredClient,
  OAuthStore,
  OAuthTokenRecord,
} from '../../core/index.js';
import { type ConnectionRow, toConnection } from '../rows/index.js';
import type { PgTransactions, Steps } from './transaction.js';

const LIVE = 'SELECT * FROM oauth_connections WHERE revoked_at IS NULL ORDER BY connected_at, id';

async function insertTokens(s: Steps, tokens: OAuthTokenRecord[]): Promise<void> {
  for (const t of tokens) {
    await s.query(
      'INSERT INTO oauth_tokens (hash, connection_id, kind, state, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [t.hash, t.connection_id, t.kind, t.state, t.expires_at],
    );
  }
}

/** Expired tokens are of no use to anyone: dropped when new ones are written. */
const DROP_EXPIRED = 'DELETE FROM oauth_tokens WHERE expires_at < $1';

export function pgOAuth(tx: PgTransactions): OAuthStore & { liveNames(): Promise<Set<string>> } {
  return { ...clientRegistrations(tx), ...connections(tx) };
}

/** The registered OAuth clients (contract 15: dynamic registration), pending until the owner consents. */
function clientRegistrations(tx: PgTransactions): Pick<OAuthStore, RegistrationPort> {
  return {
    register: (c: OAuthRegisteredClient) =>
      tx.write(
        'INSERT INTO oauth_clients (client_id, client_name, redirect_uris, created_at) VALUES ($1, $2, $3, $4)',
        [c.client_id, c.client_name, JSON.stringify(c.redirect_uris), c.created_at],
        () => undefined,
      ),
    registered: async (clientId) => {
      const r = (
        await tx.read<{
          client_id: string;
          client_name: string;
          redirect_uris: string;
          created_at: string;
          completed_at: string | null;
        }>('SELECT * FROM oauth_clients WHERE client_id = $1', [clientId])
      )[0];
      if (r === undefined) return undefined;
      const { completed_at, ...rest } = r;
      return {
        ...rest,
        redirect_uris: JSON.parse(r.redirect_uris) as string[],
        ...(completed_at !== null ? { completed_at } : {}),
      };
    },
    registrationsSince: async (at) =>
      Number(
        (
          await tx.read<{ n: string }>('SELECT count(*) AS n FROM oauth_clients WHERE completed_at >= $1', [
            at,
          ])
        )[0]!.n,
      ),
    completeRegistration: (clientId, at) =>
      tx.steps(
        async (s) =>
          (
            await s.query(
              'UPDATE oauth_clients SET completed_at = coalesce(completed_at, $1) WHERE client_id = $2',
              [at, clientId],
            )
          ).rowCount === 1,
      ),
    pendingRegistrations: () =>
      tx.read<OAuthPendingRegistration>(
        'SELECT client_id, created_at FROM oauth_clients WHERE completed_at IS NULL ORDER BY created_at, client_id',
      ),
    dropRegistrations: async (clientIds) => {
      if (clientIds.length === 0) return;
      await tx.write(
        'DELETE FROM oauth_clients WHERE client_id = ANY($1::text[]) AND completed_at IS NULL',
        [clientIds],
        () => undefined,
      );
    },
    nameUse: async (name) => {
      const [commands, connections] = await Promise.all([
        tx.read<{ n: string }>('SELECT count(*) AS n FROM commands WHERE client = $1', [name]),
        tx.read<{ n: string }>('SELECT count(*) AS n FROM oauth_connections WHERE client_name = $1', [name]),
      ]);
      return { commands: Number(commands[0]!.n), connections: Number(connections[0]!.n) };
    },
  };
}

/** The owner's connections and their tokens (stored as hashes), and the names in use. */
function connections(
  tx: PgTransactions,
): Omit<OAuthStore, RegistrationPort> & { liveNames(): Promise<Set<string>> } {
  return {
    connect: (c, tokens, audit) =>
      tx.steps(async (s) => {
        await s.query(DROP_EXPIRED, [c.connected_at]);
        await s.query(
          'INSERT INTO oauth_connections (id, client_name, client_id, client_host, redirect_host, connected_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [c.id, c.client_name, c.client_id, c.client_host, c.redirect_host, c.connected_at, c.last_used_at],
        );
        await insertTokens(s, tokens);
        await s.append(audit);
      }),
    token: async (hash) => {
      const token = (
        await tx.read<OAuthTokenRecord>(
          'SELECT hash, connection_id, kind, state, expires_at FROM oauth_tokens WHERE hash = $1',
          [hash],
        )
      )[0];
      if (token === undefined) return undefined;
      const row = (
        await tx.read<ConnectionRow>('SELECT * FROM oauth_connections WHERE id = $1', [token.connection_id])
      )[0];
      return row === undefined ? undefined : { token, connection: toConnection(row) };
    },
    rotate: (oldHash, next, at) =>
      tx.steps(async (s) => {
        const r = await s.query(
          "UPDATE oauth_tokens SET state = 'rotated' WHERE hash = $1 AND state = 'live'",
          [oldHash],
        );
        if (r.rowCount !== 1) return false;
        await s.query(DROP_EXPIRED, [at]);
        await insertTokens(s, next);
        return true;
      }),
    revokeToken: (hash) =>
      tx.write("UPDATE oauth_tokens SET state = 'revoked' WHERE hash = $1", [hash], () => undefined),
    disconnect: (connectionId, at, audit) =>
      tx.steps(async (s) => {
        await s.query("UPDATE oauth_tokens SET state = 'revoked' WHERE connection_id = $1", [connectionId]);
        const r = await s.query(
          'UPDATE oauth_connections SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL',
          [at, connectionId],
        );
        if (r.rowCount !== 1) return false;
        await s.append(audit);
        return true;
      }),
    connections: async () => (await tx.read<ConnectionRow>(LIVE)).map(toConnection),
    touch: (connectionId, at) =>
      tx.write(
        'UPDATE oauth_connections SET last_used_at = $1 WHERE id = $2',
        [at, connectionId],
        () => undefined,
      ),
    liveNames: async () => new Set((await tx.read<ConnectionRow>(LIVE)).map((r) => r.client_name)),
  };
}

type RegistrationPort =
  | 'register'
  | 'registered'
  | 'registrationsSince'
  | 'completeRegistration'
  | 'pendingRegistrations'
  | 'dropRegistrations'
  | 'nameUse';
