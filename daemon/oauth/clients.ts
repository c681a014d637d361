/**
 * Who a `client_id` is (contract 15): a Client ID Metadata Document (the client_id is the URL of its own
 * metadata, fetched SSRF-safely by fetch-document.ts, cached at most 1 hour) or a client registered here by
 * Dynamic Client Registration (RFC 7591, public clients only, at most 100 a day that the owner allowed;
 * the others are removed after 10 minutes, registrations.ts). Redirect URIs match
 * exactly, except that a loopback redirect may use any port (RFC 8252 §7.3).
 */
import { randomBytes } from 'node:crypto';
import { hasForbiddenCharacter } from '../base/index.js';
import type { OAuthStore } from '../core/index.js';
import { fetchClientDocument, MetadataFetchError, type Resolve } from './fetch-document.js';
import { registrationExpired, registrationsToDrop } from './registrations.js';

export const CIMD_CACHE_MS = 60 * 60 * 1000;
export const DCR_PER_DAY = 100;
const CACHE_MAX = 500;
const NAME_MAX = 100;
const REDIRECTS_MAX = 10;

/** A client as the authorization server knows it. */
export interface ClientInfo {
  client_id: string;
  kind: 'cimd' | 'dcr';
  /** The name the client gives itself (shown beside the host, never in place of it). */
  client_name?: string;
  /** CIMD: the client_id URL's host — the one name the client cannot choose freely. DCR: none. */
  host?: string;
  redirect_uris: string[];
}

/** A refusal that names the field and what it accepts (RFC 6749 / 7591 error code and description). */
export class OAuthError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(code: string, description: string, status = 400) {
    super(description);
    this.code = code;
    this.status = status;
  }
}

const LOOPBACK_REDIRECT_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

function isLoopbackRedirect(u: URL): boolean {
  return u.protocol === 'http:' && LOOPBACK_REDIRECT_HOSTS.has(u.hostname);
}

/** A redirect URI a client may list: https, or http on a loopback address (RFC 8252); no fragment. */
export function acceptableRedirect(raw: unknown): raw is string {
  if (typeof raw !== 'string' || raw.length > 2000) return false;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  if (u.hash !== '' || raw.includes('#')) return false;
  return (
    u.protocol === 'https:' || isLoopbackRedirect(u) || /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(u.protocol)
  );
}

/** True when `given` is one of `registered`, exactly — a loopback one on any port (RFC 8252 §7.3). */
export function redirectMatches(registered: readonly string[], given: string): boolean {
  if (registered.includes(given)) return true;
  let g: URL;
  try {
    g = new URL(given);
  } catch {
    return false;
  }
  if (!isLoopbackRedirect(g)) return false;
  const withoutPort = (u: URL) => {
    const c = new URL(u.href);
    c.port = '';
    return c.href;
  };
  return registered.some((r) => {
    try {
      const u = new URL(r);
      return isLoopbackRedirect(u) && withoutPort(u) === withoutPort(g);
    } catch {
      return false;
    }
  });
}

function cleanName(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  // No control or bidirectional characters: the name is shown to the owner, and must not reorder the card.
  const s = raw.trim();
  if (s === '' || hasForbiddenCharacter(s)) return undefined;
  return [...s].slice(0, NAME_MAX).join('');
}

/** True when the client_id is meant as a metadata document URL (https, or http loopback in development). */
export function isDocumentUrl(clientId: string, allowLoopback: boolean): URL | undefined {
  let u: URL;
  try {
    u = new URL(clientId);
  } catch {
    return undefined;
  }
  if (u.protocol === 'https:') return u;
  if (allowLoopback && u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === 'localhost'))
    return u;
  return undefined;
}

export interface ClientsOptions {
  store: OAuthStore;
  allowLoopback: boolean;
  now?: () => number;
  /** DCR client_ids never removed while so (contract 15 v4: a consent the owner opened is of them). */
  kept?: () => ReadonlySet<string>;
  resolve?: Resolve;
  timeoutMs?: number;
}

/** Resolves client_ids; registers DCR clients. */
export class Clients {
  readonly #o: ClientsOptions;
  readonly #cache = new Map<string, { info: ClientInfo; until: number }>();

  constructor(opts: ClientsOptions) {
    this.#o = opts;
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  #kept(): ReadonlySet<string> {
    return this.#o.kept?.() ?? new Set();
  }

  /**
   * Contract 15 (v4): the owner allowed an authorization of this client — a DCR registration now counts
   * toward the daily cap and stays. False when the registration is gone (removed after 10 minutes).
   */
  async complete(client: ClientInfo): Promise<boolean> {
    if (client.kind !== 'dcr') return true;
    return this.#o.store.completeRegistration(client.client_id, new Date(this.#now()).toISOString());
  }

  /** The client, or an OAuthError `invalid_client` / `invalid_request` naming why. */
  async get(clientId: string): Promise<ClientInfo> {
    if (clientId === '' || clientId.length > 2000)
      throw new OAuthError('invalid_request', 'client_id: required, at most 2000 characters');
    const url = isDocumentUrl(clientId, this.#o.allowLoopback);
    if (url === undefined) {
      let reg = await this.#o.store.registered(clientId);
      // Contract 15 (v4): 10 minutes without an authorization the owner allowed, and it is gone.
      if (
        reg !== undefined &&
        reg.completed_at === undefined &&
        registrationExpired(reg.created_at, this.#now()) &&
        !this.#kept().has(clientId)
      ) {
        await this.#o.store.dropRegistrations([clientId]);
        reg = undefined;
      }
      if (reg === undefined) {
        throw new OAuthError(
          'invalid_client',
          'client_id: not a registered client, and not an https URL of a Client ID Metadata Document',
          401,
        );
      }
      return {
        client_id: reg.client_id,
        kind: 'dcr',
        client_name: reg.client_name,
        redirect_uris: reg.redirect_uris,
      };
    }
    const hit = this.#cache.get(clientId);
    if (hit !== undefined && hit.until > this.#now()) return hit.info;
    const info = await this.#fetch(clientId, url);
    if (this.#cache.size >= CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(clientId, { info, until: this.#now() + CIMD_CACHE_MS });
    return info;
  }

  async #fetch(clientId: string, url: URL): Promise<ClientInfo> {
    if (url.pathname === '/' || url.pathname === '')
      throw new OAuthError('invalid_client', 'client_id: a metadata document URL must have a path');
    let doc: unknown;
    try {
      doc = await fetchClientDocument(url, {
        allowLoopback: this.#o.allowLoopback,
        ...(this.#o.resolve ? { resolve: this.#o.resolve } : {}),
        ...(this.#o.timeoutMs ? { timeoutMs: this.#o.timeoutMs } : {}),
      });
    } catch (e) {
      if (e instanceof MetadataFetchError) throw new OAuthError('invalid_client', e.message);
      throw e;
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
      throw new OAuthError('invalid_client', 'client_id document must be a JSON object');
    const d = doc as Record<string, unknown>;
    if (d.client_id !== clientId)
      throw new OAuthError(
        'invalid_client',
        'client_id document: its client_id must equal the URL it was fetched from',
      );
    const uris = d.redirect_uris;
    if (
      !Array.isArray(uris) ||
      uris.length === 0 ||
      uris.length > REDIRECTS_MAX ||
      !uris.every(acceptableRedirect)
    )
      throw new OAuthError(
        'invalid_client',
        `client_id document: redirect_uris must list 1 to ${REDIRECTS_MAX} https or loopback http URLs without fragments`,
      );
    const method = d.token_endpoint_auth_method;
    if (method !== undefined && method !== 'none')
      throw new OAuthError(
        'invalid_client',
        'client_id document: token_endpoint_auth_method must be "none" (public clients only)',
      );
    const name = cleanName(d.client_name);
    return {
      client_id: clientId,
      kind: 'cimd',
      host: url.host,
      redirect_uris: uris as string[],
      ...(name !== undefined ? { client_name: name } : {}),
    };
  }

  /** RFC 7591 registration of a public client; the answer body. */
  async register(body: unknown): Promise<Record<string, unknown>> {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
    const b = body as Record<string, unknown>;
    const uris = b.redirect_uris;
    if (
      !Array.isArray(uris) ||
      uris.length === 0 ||
      uris.length > REDIRECTS_MAX ||
      !uris.every(acceptableRedirect)
    )
      throw new OAuthError(
        'invalid_redirect_uri',
        `redirect_uris: must list 1 to ${REDIRECTS_MAX} https or loopback http URLs without fragments`,
      );
    if (b.token_endpoint_auth_method !== undefined && b.token_endpoint_auth_method !== 'none')
      throw new OAuthError(
        'invalid_client_metadata',
        'token_endpoint_auth_method: only "none" (public clients) is accepted',
      );
    const grants = b.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!Array.isArray(grants) || !grants.every((g) => g === 'authorization_code' || g === 'refresh_token'))
      throw new OAuthError(
        'invalid_client_metadata',
        'grant_types: only authorization_code and refresh_token',
      );
    const types = b.response_types ?? ['code'];
    if (!Array.isArray(types) || !types.every((t) => t === 'code'))
      throw new OAuthError('invalid_client_metadata', 'response_types: only "code"');
    const now = this.#now();
    // Contract 15 (v4): only registrations the owner allowed count toward the day's cap, so a stranger's
    // flood of them cannot refuse the owner's own client; the flood's rows are bounded and short-lived.
    const store = this.#o.store;
    await store.dropRegistrations(
      registrationsToDrop(await store.pendingRegistrations(), now, this.#kept(), 1),
    );
    const dayAgo = new Date(now - 24 * 60 * 60 * 1000).toISOString();
    if ((await store.registrationsSince(dayAgo)) >= DCR_PER_DAY)
      throw new OAuthError(
        'temporarily_unavailable',
        `at most ${DCR_PER_DAY} client registrations a day; try again later or use a Client ID Metadata Document`,
        429,
      );
    const clientId = `dcr_${randomBytes(16).toString('base64url')}`;
    const name = cleanName(b.client_name) ?? 'unnamed client';
    const at = new Date(now).toISOString();
    await this.#o.store.register({
      client_id: clientId,
      client_name: name,
      redirect_uris: uris as string[],
      created_at: at,
    });
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(now / 1000),
      client_name: name,
      redirect_uris: uris,
      token_endpoint_auth_method: 'none',
      grant_types: grants,
      response_types: ['code'],
    };
  }
}
