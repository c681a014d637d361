/**
 * Connections and their tokens (contract 15). A connection is one consent the owner gave: a client acting
 * as one client name on /mcp. Access tokens are opaque (32 random bytes), live 1 hour and name the
 * connection; refresh tokens rotate on every use, and presenting a rotated one again — someone holds a
 * copy — revokes the whole connection. Only SHA-256 hashes reach the store (through its port); a small
 * in-memory cache of checked access tokens keeps an MCP call from reading the store each time, and is
 * emptied for a connection the moment it ends.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Actor, OAuthConnection, OAuthStore, OAuthTokenRecord } from '../core/index.js';
import { sha256 } from './consent.js';

export const ACCESS_TTL_S = 60 * 60;
export const REFRESH_TTL_S = 30 * 24 * 60 * 60;
/** A connection's `last used` is written at most this often (an MCP call must not write each time). */
const TOUCH_EVERY_MS = 60 * 1000;
const CACHE_MAX = 10_000;

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

export interface NewConnection {
  client_name: string;
  client_id: string;
  client_host: string;
  redirect_host: string;
  owner: string;
}

/** Why a connection ended (said in the audit entry). */
export type DisconnectReason = 'owner' | 'refresh_token_reused' | 'code_reused' | 'revoked_by_client';

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export class Connections {
  readonly #store: OAuthStore;
  readonly #now: () => number;
  readonly #cache = new Map<string, { client: string; connection: string; expires: number }>();
  readonly #touched = new Map<string, number>();
  readonly #listeners = new Set<(clientName: string) => void>();

  constructor(store: OAuthStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  /** `listener(clientName)` hears every connection that ends (its MCP sessions are closed then). */
  onDisconnect(listener: (clientName: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #pair(connectionId: string): { pair: TokenPair; records: OAuthTokenRecord[] } {
    const now = this.#now();
    const access = newSecret();
    const refresh = newSecret();
    return {
      pair: { access_token: access, refresh_token: refresh, expires_in: ACCESS_TTL_S },
      records: [
        {
          hash: sha256(access),
          connection_id: connectionId,
          kind: 'access',
          state: 'live',
          expires_at: new Date(now + ACCESS_TTL_S * 1000).toISOString(),
        },
        {
          hash: sha256(refresh),
          connection_id: connectionId,
          kind: 'refresh',
          state: 'live',
          expires_at: new Date(now + REFRESH_TTL_S * 1000).toISOString(),
        },
      ],
    };
  }

  /** A new connection with its first tokens; audited `oauth_client_connected` (by the owner who allowed). */
  async connect(c: NewConnection): Promise<{ id: string; pair: TokenPair }> {
    const id = randomUUID();
    const at = new Date(this.#now()).toISOString();
    const { pair, records } = this.#pair(id);
    const connection: OAuthConnection = {
      id,
      client_name: c.client_name,
      client_id: c.client_id,
      client_host: c.client_host,
      redirect_host: c.redirect_host,
      connected_at: at,
      last_used_at: at,
    };
    await this.#store.connect(connection, records, {
      at,
      actor: { kind: 'owner', name: c.owner },
      action: 'oauth_client_connected',
      detail: { client: c.client_name, client_id: c.client_id, client_host: c.client_host },
    });
    return { id, pair };
  }

  /**
   * The client name an access token acts as on /mcp, or undefined (unknown, expired, revoked, or its
   * connection ended).
   */
  async clientFor(token: string): Promise<string | undefined> {
    if (token.length < 16 || token.length > 512) return undefined;
    const hash = sha256(token);
    const now = this.#now();
    let hit = this.#cache.get(hash);
    if (hit === undefined) {
      const found = await this.#store.token(hash);
      if (
        found === undefined ||
        found.token.kind !== 'access' ||
        found.token.state !== 'live' ||
        found.connection.revoked_at !== undefined
      )
        return undefined;
      hit = {
        client: found.connection.client_name,
        connection: found.connection.id,
        expires: Date.parse(found.token.expires_at),
      };
      if (this.#cache.size >= CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(hash, hit);
    }
    if (hit.expires <= now) {
      this.#cache.delete(hash);
      return undefined;
    }
    const last = this.#touched.get(hit.connection) ?? 0;
    if (now - last >= TOUCH_EVERY_MS) {
      this.#touched.set(hit.connection, now);
      await this.#store.touch(hit.connection, new Date(now).toISOString());
    }
    return hit.client;
  }

  /**
   * Exchanges a refresh token (rotation). A rotated token presented again revokes its connection
   * (`invalid_grant` either way). Returns undefined when the token is not good for `clientId`.
   */
  async refresh(token: string, clientId: string): Promise<TokenPair | undefined> {
    const found = await this.#store.token(sha256(token));
    if (found === undefined || found.token.kind !== 'refresh') return undefined;
    const { token: rec, connection } = found;
    if (connection.revoked_at !== undefined || connection.client_id !== clientId) return undefined;
    if (rec.state === 'rotated') {
      await this.disconnect(connection.id, { kind: 'daemon', name: 'daemon' }, 'refresh_token_reused');
      return undefined;
    }
    if (rec.state !== 'live' || Date.parse(rec.expires_at) <= this.#now()) return undefined;
    const { pair, records } = this.#pair(connection.id);
    const at = new Date(this.#now()).toISOString();
    if (!(await this.#store.rotate(rec.hash, records, at))) {
      // Another refresh with the same token won the race: this one is the reuse.
      await this.disconnect(connection.id, { kind: 'daemon', name: 'daemon' }, 'refresh_token_reused');
      return undefined;
    }
    return pair;
  }

  /** RFC 7009: ends a token. A refresh token ends its whole connection; an access token only itself. */
  async revoke(token: string, clientId: string | undefined): Promise<void> {
    const hash = sha256(token);
    const found = await this.#store.token(hash);
    if (found === undefined) return;
    if (clientId !== undefined && found.connection.client_id !== clientId) return;
    this.#cache.delete(hash);
    if (found.token.kind === 'refresh') {
      await this.disconnect(
        found.connection.id,
        { kind: 'client', name: found.connection.client_name },
        'revoked_by_client',
      );
    } else await this.#store.revokeToken(hash);
  }

  /** Ends a connection and every token of it, closes its MCP sessions; false when it had already ended. */
  async disconnect(connectionId: string, actor: Actor, reason: DisconnectReason): Promise<boolean> {
    const live = (await this.#store.connections()).find((c) => c.id === connectionId);
    if (live === undefined) return false;
    const at = new Date(this.#now()).toISOString();
    const done = await this.#store.disconnect(connectionId, at, {
      at,
      actor,
      action: 'oauth_client_disconnected',
      detail: { client: live.client_name, client_id: live.client_id, reason },
    });
    for (const [h, e] of this.#cache) if (e.connection === connectionId) this.#cache.delete(h);
    this.#touched.delete(connectionId);
    if (done) for (const l of [...this.#listeners]) l(live.client_name);
    return done;
  }

  /** Live connections, oldest first. */
  list(): Promise<OAuthConnection[]> {
    return this.#store.connections();
  }
}
