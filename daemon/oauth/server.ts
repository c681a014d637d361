/**
 * The authorization server for the daemon's own /mcp (contract 15), built on node:crypto — docs/oauth.md
 * says why not oidc-provider. It validates /authorize, holds the request for the owner's consent in the
 * panel, hands out codes, and answers /token, /register and /revoke; /mcp asks it which client name an
 * access token acts as. Every answer here is the protocol's (RFC 6749 error codes), not the MCP tools'.
 */
import { createHash } from 'node:crypto';
import type { Actor, BrokerApi, OAuthConnection, StorePorts } from '../core/index.js';
import { type ClientInfo, Clients, OAuthError, redirectMatches } from './clients.js';
import { Connections, type TokenPair } from './connections.js';
import { ConsentBook, sha256, suggestName } from './consent.js';
import type { Resolve } from './fetch-document.js';
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata.js';
import { ClientNames, type NameCheck } from './names.js';
import { type RedirectTarget, redirectShown, redirectTarget } from './redirect-target.js';

const PKCE_VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;
const PKCE_CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/;
const STATE_MAX = 1024;
/** A spent code remembers its connection this long, so a second redemption can revoke what the first got. */
const SPENT_MS = 10 * 60 * 1000;

/** What the owner sees on the consent card. */
export interface ConsentView {
  id: string;
  /** The name the client gives itself (a CIMD document's or a DCR registration's client_name). */
  client_name?: string;
  client_id: string;
  kind: 'cimd' | 'dcr';
  /** CIMD: the host of the client_id URL. DCR: absent (nothing verified it). */
  client_id_host?: string;
  redirect_host: string;
  /** Contract 15 (v4): what the redirect is — an https site, an app on this device (its scheme), loopback. */
  redirect_target: RedirectTarget;
  suggested_name: string;
  expires_at: string;
}

/** A live connection as the panel lists it, with the live grants made for its name (Disconnect ends them). */
export type ListedConnection = OAuthConnection & { grants: number };

/** The outcome of GET /authorize. */
export type AuthorizeOutcome =
  | { kind: 'consent'; id: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'page'; status: number; message: string };

export interface OAuthServerOptions {
  store: Pick<StorePorts, 'oauth' | 'clientTokens'>;
  /** The grants a client name holds, and their ending (contract 15 v4); absent, none are seen. */
  grants?: Pick<BrokerApi, 'liveGrants' | 'revoke'>;
  allowLoopbackMetadata: boolean;
  /** `public_url`, else the daemon's own URL (contract 15: `<base>`). */
  base: () => string;
  now?: () => number;
  resolve?: Resolve;
}

export class OAuthServer {
  readonly #o: OAuthServerOptions;
  readonly #now: () => number;
  readonly clients: Clients;
  readonly connections: Connections;
  readonly #consents: ConsentBook;
  readonly #names: ClientNames;
  readonly #spent = new Map<string, { connection: string; until: number }>();

  constructor(o: OAuthServerOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.clients = new Clients({
      store: o.store.oauth,
      allowLoopback: o.allowLoopbackMetadata,
      now: this.#now,
      kept: () => this.#consents.openedClients(),
      ...(o.resolve ? { resolve: o.resolve } : {}),
    });
    this.connections = new Connections(o.store.oauth, this.#now);
    this.#consents = new ConsentBook(this.#now);
    const grants = o.grants;
    this.#names = new ClientNames({
      store: o.store,
      ...(grants !== undefined ? { liveGrants: () => grants.liveGrants() } : {}),
    });
  }

  get base(): string {
    return this.#o.base().replace(/\/$/, '');
  }

  get resource(): string {
    return `${this.base}/mcp`;
  }

  protectedResource(): Record<string, unknown> {
    return protectedResourceMetadata(this.base);
  }

  authorizationServer(): Record<string, unknown> {
    return authorizationServerMetadata(this.base);
  }

  /** The `WWW-Authenticate` of a 401 from /mcp (RFC 9728 §5.1). */
  challenge(tokenGiven: boolean): string {
    const rm = `resource_metadata="${this.base}/.well-known/oauth-protected-resource/mcp"`;
    return tokenGiven ? `Bearer error="invalid_token", ${rm}` : `Bearer ${rm}`;
  }

  /** GET /authorize: a consent to hold, an error redirect, or an error page when the redirect is not trusted. */
  async authorize(q: URLSearchParams): Promise<AuthorizeOutcome> {
    const clientId = q.get('client_id') ?? '';
    let client: ClientInfo;
    try {
      client = await this.clients.get(clientId);
    } catch (e) {
      if (e instanceof OAuthError) return { kind: 'page', status: 400, message: e.message };
      throw e;
    }
    const redirectUri = q.get('redirect_uri') ?? '';
    // Until the redirect is known to be the client's, errors go to the browser, never to the redirect.
    if (!redirectMatches(client.redirect_uris, redirectUri)) {
      return {
        kind: 'page',
        status: 400,
        message: 'redirect_uri: must be exactly one of the redirect URIs the client registered',
      };
    }
    const state = q.get('state');
    const back = (error: string, description: string): AuthorizeOutcome => ({
      kind: 'redirect',
      location: this.#redirect(redirectUri, {
        error,
        error_description: description,
        ...(state ? { state } : {}),
      }),
    });
    if (q.get('response_type') !== 'code')
      return back('unsupported_response_type', 'response_type: must be "code"');
    if (state === null || state === '' || state.length > STATE_MAX)
      return back('invalid_request', `state: required, at most ${STATE_MAX} characters`);
    if (q.get('code_challenge_method') !== 'S256')
      return back('invalid_request', 'code_challenge_method: must be "S256" (PKCE is required)');
    const challenge = q.get('code_challenge') ?? '';
    if (!PKCE_CHALLENGE_RE.test(challenge))
      return back(
        'invalid_request',
        'code_challenge: must be the base64url SHA-256 of the verifier (43 characters)',
      );
    const resources = q.getAll('resource');
    if (resources.length !== 1 || resources[0] !== this.resource)
      return back('invalid_target', `resource: must be ${this.resource} (RFC 8707)`);
    const pending = this.#consents.hold({
      client,
      redirect_uri: redirectUri,
      state,
      code_challenge: challenge,
      resource: this.resource,
    });
    if (pending === undefined)
      return back(
        'temporarily_unavailable',
        'too many connection requests wait for the owner; try again later',
      );
    return { kind: 'consent', id: pending.id };
  }

  /**
   * The consent card's content, or undefined when the request is unknown or expired. Read by the owner's
   * page: the request is opened from now on, and newer ones never push it out (contract 15 v4).
   */
  async consent(id: string): Promise<ConsentView | undefined> {
    const p = this.#consents.open(id);
    if (p === undefined) return undefined;
    // Contract 15 (v4): never a name any other connection, token or the history has used.
    p.suggested_name ??= await this.#names.suggest(suggestName(p.client), await this.connections.list());
    return {
      id: p.id,
      ...(p.client.client_name !== undefined ? { client_name: p.client.client_name } : {}),
      client_id: p.client.client_id,
      kind: p.client.kind,
      ...(p.client.host !== undefined ? { client_id_host: p.client.host } : {}),
      redirect_host: new URL(p.redirect_uri).host,
      redirect_target: redirectTarget(p.redirect_uri),
      suggested_name: p.suggested_name,
      expires_at: new Date(p.expires).toISOString(),
    };
  }

  /** Whether a new connection may take `name`, and what it would inherit (the card asks as the owner types). */
  async checkName(name: string): Promise<NameCheck> {
    return this.#names.check(name, await this.connections.list());
  }

  /**
   * The owner's decision: Allow (with the client name) → a redirect carrying code, state and iss; Deny →
   * `error=access_denied`. A refused name, or a used one without `inherit` (contract 15 v4: the box the
   * owner ticks — enforced here, not only on the page), refuses with a message and keeps the request waiting.
   */
  async decide(
    id: string,
    owner: string,
    allow: boolean,
    name: string,
    inherit = false,
  ): Promise<{ redirect: string } | { error: string }> {
    const gone = {
      error: 'This request is no longer waiting (it expired or was decided). Connect again from the AI.',
    };
    const p = this.#consents.pending(id);
    if (p === undefined) return gone;
    if (!allow) {
      this.#consents.take(id);
      return {
        redirect: this.#redirect(p.redirect_uri, { error: 'access_denied', state: p.state, iss: this.base }),
      };
    }
    const check = await this.checkName(name);
    if (check.kind === 'refused') return { error: check.message };
    if (check.kind === 'used' && !inherit)
      return {
        error: `client_name: ${check.inherits.text}; tick "inherit" to give this connection all of that, or choose another name`,
      };
    // A DCR registration the owner allowed stays and counts toward the day's cap; one removed meanwhile
    // (10 minutes without an Allow) cannot be connected.
    if (!(await this.clients.complete(p.client))) {
      this.#consents.take(id);
      return {
        error:
          'This client’s registration was removed (10 minutes without an authorization). Connect again from the AI.',
      };
    }
    // Decided once: another Allow of the same request that got here first took it while this one waited.
    if (this.#consents.take(id) === undefined) return gone;
    const code = this.#consents.issueCode({
      client: p.client,
      redirect_uri: p.redirect_uri,
      code_challenge: p.code_challenge,
      resource: p.resource,
      client_name: name,
      owner,
    });
    return { redirect: this.#redirect(p.redirect_uri, { code, state: p.state, iss: this.base }) };
  }

  #redirect(uri: string, params: Record<string, string>): string {
    const u = new URL(uri);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return u.href;
  }

  /** POST /token. */
  async token(f: URLSearchParams): Promise<TokenPair & { token_type: 'Bearer' }> {
    const grant = f.get('grant_type');
    const clientId = f.get('client_id') ?? '';
    if (grant === 'authorization_code')
      return { ...(await this.#exchange(f, clientId)), token_type: 'Bearer' };
    if (grant === 'refresh_token') {
      const resource = f.get('resource');
      if (resource !== null && resource !== this.resource)
        throw new OAuthError('invalid_target', `resource: must be ${this.resource}`);
      const pair = await this.connections.refresh(f.get('refresh_token') ?? '', clientId);
      if (pair === undefined)
        throw new OAuthError('invalid_grant', 'refresh_token: not a live refresh token of this client');
      return { ...pair, token_type: 'Bearer' };
    }
    throw new OAuthError('unsupported_grant_type', 'grant_type: must be authorization_code or refresh_token');
  }

  async #exchange(f: URLSearchParams, clientId: string): Promise<TokenPair> {
    const code = f.get('code') ?? '';
    const g = this.#consents.redeem(code);
    if (g === undefined) {
      // A code presented twice: whatever the first redemption got is revoked (RFC 6749 §4.1.2).
      const spent = this.#spent.get(sha256(code));
      if (spent !== undefined && spent.until > this.#now())
        await this.connections.disconnect(
          spent.connection,
          { kind: 'daemon', name: 'daemon' },
          'code_reused',
        );
      throw new OAuthError('invalid_grant', 'code: unknown, expired or already used');
    }
    if (g.client.client_id !== clientId)
      throw new OAuthError('invalid_grant', 'client_id: the code was issued to another client');
    if (f.get('redirect_uri') !== g.redirect_uri)
      throw new OAuthError('invalid_grant', 'redirect_uri: must equal the one sent to /authorize');
    if (f.get('resource') !== g.resource)
      throw new OAuthError('invalid_target', `resource: must be ${g.resource}, as sent to /authorize`);
    const verifier = f.get('code_verifier') ?? '';
    if (
      !PKCE_VERIFIER_RE.test(verifier) ||
      createHash('sha256').update(verifier).digest('base64url') !== g.code_challenge
    )
      throw new OAuthError('invalid_grant', 'code_verifier: does not match the code_challenge');
    // The name may have been taken since the owner chose it (another consent): refuse rather than share it.
    const check = await this.checkName(g.client_name);
    if (check.kind === 'refused') throw new OAuthError('invalid_grant', check.message);
    const { id, pair } = await this.connections.connect({
      client_name: g.client_name,
      client_id: g.client.client_id,
      // A DCR client has no host anyone vouched for: stored empty, and the panel says so.
      client_host: g.client.host ?? '',
      redirect_host: redirectShown(g.redirect_uri),
      owner: g.owner,
    });
    for (const [k, v] of this.#spent) if (v.until <= this.#now()) this.#spent.delete(k);
    this.#spent.set(sha256(code), { connection: id, until: this.#now() + SPENT_MS });
    return pair;
  }

  /** POST /revoke (RFC 7009): always succeeds for the caller. */
  async revoke(f: URLSearchParams): Promise<void> {
    const token = f.get('token');
    if (token === null || token === '') throw new OAuthError('invalid_request', 'token: required');
    await this.connections.revoke(token, f.get('client_id') ?? undefined);
  }

  /** The panel's list: each live connection with the live grants of its name. */
  async list(): Promise<ListedConnection[]> {
    return (await this.connections.list()).map((c) => ({
      ...c,
      grants: this.#names.grantsOf(c.client_name).length,
    }));
  }

  /**
   * The panel's Disconnect: every live connection named `clientName`, and with `endGrants` (contract 15
   * v4: the box ticked unless the owner unticks it) the owner grants made for that name, so a later
   * connection of the name inherits none. Undefined when no connection was live; else how many grants ended.
   */
  async disconnectByName(
    clientName: string,
    owner: string,
    endGrants = true,
  ): Promise<{ grants_ended: number } | undefined> {
    const actor: Actor = { kind: 'owner', name: owner };
    let any = false;
    for (const c of await this.connections.list())
      if (c.client_name === clientName)
        any = (await this.connections.disconnect(c.id, actor, 'owner')) || any;
    if (!any) return undefined;
    let ended = 0;
    if (endGrants && this.#o.grants !== undefined)
      // A config grant is the config's to end (NotRevocable): it stays, and still counts as inherited.
      for (const g of this.#names.grantsOf(clientName))
        if (g.source === 'owner' && (await this.#o.grants.revoke(g.id, owner)).ok) ended++;
    return { grants_ended: ended };
  }
}
