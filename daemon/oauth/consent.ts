/**
 * Authorization requests waiting for the owner's consent, and the codes an Allow hands out (contract 15).
 * Both live only in the daemon's memory: a request for 10 minutes (the owner may have to log in first), a
 * code for 60 s and exactly once. A code is kept by its SHA-256, like every credential; the code itself
 * exists only in the redirect the owner's browser follows.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ClientInfo } from './clients.js';

export const REQUEST_TTL_MS = 10 * 60 * 1000;
export const CODE_TTL_MS = 60 * 1000;
export const REQUESTS_MAX = 100;
const CODES_MAX = 1000;

/** Contract 15: the client name a connection uses on /mcp. */
export const CONNECTION_NAME_RE = /^[a-z][a-z0-9_-]{0,31}$/;

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A validated /authorize request. */
export interface AuthRequest {
  client: ClientInfo;
  redirect_uri: string;
  state: string;
  code_challenge: string;
  resource: string;
}

export interface PendingConsent extends AuthRequest {
  id: string;
  /**
   * The name the card suggests, chosen when the owner first opens it (so a stranger's /authorize calls
   * cost no look-up of names, and the suggestion is as fresh as the card).
   */
  suggested_name?: string;
  expires: number;
  /** The owner's page has read it (contract 15 v4: never pushed out by newer requests then). */
  opened: boolean;
}

/** What a code stands for once the owner allowed. */
export interface CodeGrant {
  client: ClientInfo;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  client_name: string;
  owner: string;
  expires: number;
}

/**
 * A client name suggested from the client_id's host (CIMD: `claude.ai` → `claude`) or the DCR client's
 * own name, fitted to ^[a-z][a-z0-9_-]{0,31}$; the owner may change it.
 */
export function suggestName(client: ClientInfo): string {
  let base = '';
  if (client.kind === 'cimd' && client.host !== undefined) {
    const labels = client.host
      .replace(/:\d+$/, '')
      .split('.')
      .filter((l) => l !== 'www');
    base = labels.length >= 2 ? labels[labels.length - 2]! : (labels[0] ?? '');
  } else base = client.client_name ?? '';
  let s = base
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '');
  s = s.slice(0, 32);
  return CONNECTION_NAME_RE.test(s) ? s : 'remote-ai';
}

export class ConsentBook {
  readonly #now: () => number;
  readonly #requests = new Map<string, PendingConsent>();
  readonly #codes = new Map<string, CodeGrant>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  #sweep(): void {
    const t = this.#now();
    for (const [k, r] of this.#requests) if (r.expires <= t) this.#requests.delete(k);
    for (const [k, c] of this.#codes) if (c.expires <= t) this.#codes.delete(k);
  }

  /**
   * Holds a request until the owner decides; returns it (its id is the consent page's handle), or
   * undefined when REQUESTS_MAX wait and the owner has opened every one of them.
   */
  hold(req: AuthRequest): PendingConsent | undefined {
    this.#sweep();
    // Bounded (contract 15 v4): at most 100 wait; the oldest the owner has not opened gives way, so
    // anyone's /authorize calls cannot fill memory, nor push out the card the owner is looking at.
    if (this.#requests.size >= REQUESTS_MAX) {
      const oldest = [...this.#requests.values()].find((r) => !r.opened);
      if (oldest === undefined) return undefined;
      this.#requests.delete(oldest.id);
    }
    const p: PendingConsent = {
      ...req,
      id: randomBytes(16).toString('base64url'),
      expires: this.#now() + REQUEST_TTL_MS,
      opened: false,
    };
    this.#requests.set(p.id, p);
    return p;
  }

  pending(id: string): PendingConsent | undefined {
    this.#sweep();
    return this.#requests.get(id);
  }

  /** The request as the owner's page reads it: from now on it is opened (never pushed out). */
  open(id: string): PendingConsent | undefined {
    const p = this.pending(id);
    if (p !== undefined) p.opened = true;
    return p;
  }

  /** The client_ids of requests the owner has opened (their DCR registrations stay: registrations.ts). */
  openedClients(): Set<string> {
    this.#sweep();
    const out = new Set<string>();
    for (const r of this.#requests.values()) if (r.opened) out.add(r.client.client_id);
    return out;
  }

  /** Takes the request out (decided either way). */
  take(id: string): PendingConsent | undefined {
    const p = this.pending(id);
    if (p !== undefined) this.#requests.delete(id);
    return p;
  }

  /** A new code for an allowed request. */
  issueCode(grant: Omit<CodeGrant, 'expires'>): string {
    this.#sweep();
    if (this.#codes.size >= CODES_MAX) this.#codes.delete(this.#codes.keys().next().value!);
    const code = randomBytes(32).toString('base64url');
    this.#codes.set(sha256(code), { ...grant, expires: this.#now() + CODE_TTL_MS });
    return code;
  }

  /** The code's grant, once: a second redemption finds nothing. */
  redeem(code: string): CodeGrant | undefined {
    this.#sweep();
    const h = sha256(code);
    const g = this.#codes.get(h);
    this.#codes.delete(h);
    return g;
  }
}
