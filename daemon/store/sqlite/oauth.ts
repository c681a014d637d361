/**
 * OAuth clients, connections and token hashes in broker.db (contract 15). Only the SHA-256 of a token is
 * ever written; a code never reaches the file (codes live 60 s in the daemon's memory). A connection and its
 * first tokens are written with the `oauth_client_connected` audit entry in one transaction, and its end
 * with `oauth_client_disconnected`.
 */
import type {
  AuditEntry,
  OAuthConnection,
  OAuthNameUse,
  OAuthPendingRegistration,
  OAuthRegisteredClient,
  OAuthTokenRecord,
} from '../../core/index.js';
import { type ConnectionRow, toConnection } from '../rows/index.js';
import type { SqliteAudit } from './audit.js';
import type { Db } from './schema.js';

/** The OAuth tables, synchronously, on one connection. */
export class SqliteOAuth {
  readonly #audit: SqliteAudit;
  readonly #atomic: (fn: () => void) => void;
  readonly #s;

  constructor(db: Db, audit: SqliteAudit, atomic: (fn: () => void) => void) {
    this.#audit = audit;
    this.#atomic = atomic;
    this.#s = {
      register: db.prepare(
        'INSERT INTO oauth_clients (client_id, client_name, redirect_uris, created_at) VALUES (?, ?, ?, ?)',
      ),
      registered: db.prepare('SELECT * FROM oauth_clients WHERE client_id = ?'),
      since: db.prepare('SELECT count(*) FROM oauth_clients WHERE completed_at >= ?').pluck(),
      complete: db.prepare(
        'UPDATE oauth_clients SET completed_at = coalesce(completed_at, ?) WHERE client_id = ?',
      ),
      pending: db.prepare(
        'SELECT client_id, created_at FROM oauth_clients WHERE completed_at IS NULL ORDER BY created_at, client_id',
      ),
      drop: db.prepare('DELETE FROM oauth_clients WHERE client_id = ? AND completed_at IS NULL'),
      nameCommands: db.prepare('SELECT count(*) FROM commands WHERE client = ?').pluck(),
      nameConnections: db.prepare('SELECT count(*) FROM oauth_connections WHERE client_name = ?').pluck(),
      insertConnection: db.prepare(
        'INSERT INTO oauth_connections (id, client_name, client_id, client_host, redirect_host, connected_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      insertToken: db.prepare(
        'INSERT INTO oauth_tokens (hash, connection_id, kind, state, expires_at) VALUES (?, ?, ?, ?, ?)',
      ),
      token: db.prepare('SELECT * FROM oauth_tokens WHERE hash = ?'),
      connection: db.prepare('SELECT * FROM oauth_connections WHERE id = ?'),
      markRotated: db.prepare("UPDATE oauth_tokens SET state = 'rotated' WHERE hash = ? AND state = 'live'"),
      revokeToken: db.prepare("UPDATE oauth_tokens SET state = 'revoked' WHERE hash = ?"),
      revokeAll: db.prepare("UPDATE oauth_tokens SET state = 'revoked' WHERE connection_id = ?"),
      endConnection: db.prepare(
        'UPDATE oauth_connections SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
      ),
      live: db.prepare('SELECT * FROM oauth_connections WHERE revoked_at IS NULL ORDER BY connected_at, id'),
      touch: db.prepare('UPDATE oauth_connections SET last_used_at = ? WHERE id = ?'),
      // Expired tokens are of no use to anyone: dropped when new ones are written.
      dropExpired: db.prepare('DELETE FROM oauth_tokens WHERE expires_at < ?'),
    };
  }

  register(c: OAuthRegisteredClient): void {
    this.#s.register.run(c.client_id, c.client_name, JSON.stringify(c.redirect_uris), c.created_at);
  }

  registered(clientId: string): OAuthRegisteredClient | undefined {
    const r = this.#s.registered.get(clientId) as
      | {
          client_id: string;
          client_name: string;
          redirect_uris: string;
          created_at: string;
          completed_at: string | null;
        }
      | undefined;
    if (r === undefined) return undefined;
    const { completed_at, ...rest } = r;
    return {
      ...rest,
      redirect_uris: JSON.parse(r.redirect_uris) as string[],
      ...(completed_at !== null ? { completed_at } : {}),
    };
  }

  registrationsSince(at: string): number {
    return this.#s.since.get(at) as number;
  }

  completeRegistration(clientId: string, at: string): boolean {
    return this.#s.complete.run(at, clientId).changes === 1;
  }

  pendingRegistrations(): OAuthPendingRegistration[] {
    return this.#s.pending.all() as OAuthPendingRegistration[];
  }

  dropRegistrations(clientIds: readonly string[]): void {
    if (clientIds.length === 0) return;
    this.#atomic(() => {
      for (const id of clientIds) this.#s.drop.run(id);
    });
  }

  nameUse(name: string): OAuthNameUse {
    return {
      commands: this.#s.nameCommands.get(name) as number,
      connections: this.#s.nameConnections.get(name) as number,
    };
  }

  #insertTokens(tokens: OAuthTokenRecord[]): void {
    for (const t of tokens) this.#s.insertToken.run(t.hash, t.connection_id, t.kind, t.state, t.expires_at);
  }

  connect(c: OAuthConnection, tokens: OAuthTokenRecord[], audit: AuditEntry): void {
    this.#atomic(() => {
      this.#s.dropExpired.run(c.connected_at);
      this.#s.insertConnection.run(
        c.id,
        c.client_name,
        c.client_id,
        c.client_host,
        c.redirect_host,
        c.connected_at,
        c.last_used_at,
      );
      this.#insertTokens(tokens);
      this.#audit.append(audit);
    });
  }

  token(hash: string): { token: OAuthTokenRecord; connection: OAuthConnection } | undefined {
    const token = this.#s.token.get(hash) as OAuthTokenRecord | undefined;
    if (token === undefined) return undefined;
    const row = this.#s.connection.get(token.connection_id) as ConnectionRow | undefined;
    return row === undefined ? undefined : { token, connection: toConnection(row) };
  }

  rotate(oldHash: string, next: OAuthTokenRecord[], at: string): boolean {
    let done = false;
    this.#atomic(() => {
      if (this.#s.markRotated.run(oldHash).changes !== 1) return;
      this.#s.dropExpired.run(at);
      this.#insertTokens(next);
      done = true;
    });
    return done;
  }

  revokeToken(hash: string): void {
    this.#s.revokeToken.run(hash);
  }

  disconnect(connectionId: string, at: string, audit: AuditEntry): boolean {
    let done = false;
    this.#atomic(() => {
      this.#s.revokeAll.run(connectionId);
      if (this.#s.endConnection.run(at, connectionId).changes !== 1) return;
      this.#audit.append(audit);
      done = true;
    });
    return done;
  }

  connections(): OAuthConnection[] {
    return (this.#s.live.all() as ConnectionRow[]).map(toConnection);
  }

  /** The client names of live connections (the `token` command refuses them: one name, one identity). */
  liveNames(): Set<string> {
    return new Set((this.#s.live.all() as ConnectionRow[]).map((r) => r.client_name));
  }

  touch(connectionId: string, at: string): void {
    this.#s.touch.run(at, connectionId);
  }
}
