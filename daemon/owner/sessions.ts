/**
 * Browser login sessions (contracts.md 5): the owner token is exchanged once for a random session id
 * carried in an `HttpOnly; SameSite=Strict` cookie, so the token itself never sits in the browser's
 * cookie jar, history or a query string. Sessions live in memory only: a daemon restart logs every tab
 * out, which is the safe side for a gate that launches processes.
 *
 * **(v2) The panel key.** Browsers scope cookies by host, not by port, and `SameSite=Strict` counts another
 * 127.0.0.1 port as the same site: any local server the AI gets started receives this cookie the moment
 * the owner opens it. So each session also has a panel key, handed out once in the login response body;
 * the login page keeps it in `localStorage` (scoped by port) and the panel sends it as the WebSocket
 * subprotocol `ogf-owner.<key>`. The owner socket needs the cookie **and** its own session's key
 * (`authenticate`); neither alone opens it. Only digests of both are kept here.
 *
 * Each session belongs to one owner (contract 9) and remembers the credential it was made from (the owner's
 * name and token hash, never the token): rotating that owner's token ends it (`endWhere`, contract 5 v2).
 *
 * **Shadow cookies.** Any server on another 127.0.0.1 port may also *set* cookies for 127.0.0.1, e.g. an
 * `ogf_owner_session=junk; Path=/owner`, which the browser then sends before ours (longer paths first).
 * So every `ogf_owner_session` value a request carries is tried, and the request is the owner's when any
 * of them is a live session (with its key, where a key is needed): a planted cookie cannot shadow the real
 * one. (One set with `Path=/` replaces ours outright — cookies are keyed by name, host and path, never
 * port — which logs the owner out but opens nothing; only the `__Host-` prefix, which needs https, could
 * prevent that.)
 *
 * Ending a session (logout, expiry, eviction, rotation) tells the `onEnd` listeners, so the hub closes that
 * session's sockets at once (contract 5 v2).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { OwnerCredential } from '../tokens/index.js';

export const SESSION_COOKIE = 'ogf_owner_session';
/** A login lasts a working day; the owner logs in again from `ogf-broker token owner` after that. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Bounded so a flood of logins cannot grow memory without limit; the oldest session goes first. */
const MAX_SESSIONS = 256;
/** Session ids and panel keys are 32 random bytes, base64url: 43 characters. */
const SECRET_MAX = 128;

/** Why a session ended; the hub says it in the close frame it sends that session's sockets. */
export type SessionEnd = 'logged out' | 'session expired' | 'session evicted' | 'token rotated';

/** What a login hands the browser: the cookie value and the panel key (shown once, never stored clear). */
export interface NewSession {
  id: string;
  key: string;
}

/** How a session was signed in (contract 13.3): with the owner's token, or with one of their passkeys. */
export type SignedInWith = 'token' | 'passkey';

interface Session {
  digest: Buffer;
  keyDigest: Buffer;
  expires: number;
  owner: OwnerCredential;
  via: SignedInWith;
}

/** A live session a request carries: its handle, whose it is and how it was signed in. */
export interface SessionMatch {
  handle: string;
  owner: OwnerCredential;
  via: SignedInWith;
}

/**
 * Every value of one cookie in a Cookie header, in order (none: empty). All of them, not the first: a
 * cookie planted by another local server may come before ours (see the module comment). Their number is
 * bounded by Node's header size limit (16 KiB).
 */
export function readCookies(header: string | undefined, name: string): string[] {
  if (header === undefined) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

function secret(): string {
  return randomBytes(32).toString('base64url');
}

export class OwnerSessions {
  /**
   * Keyed by the hex SHA-256 of the session id — the session's handle, which the hub keeps beside each
   * socket. The map holds no usable cookie value or key.
   */
  readonly #sessions = new Map<string, Session>();
  readonly #listeners = new Set<(handle: string, why: SessionEnd) => void>();
  readonly #now: () => number;
  readonly #ttlMs: number;

  constructor(now: () => number = Date.now, ttlMs: number = SESSION_TTL_MS) {
    this.#now = now;
    this.#ttlMs = ttlMs;
  }

  /** Creates a session of `owner`, signed in `via` its token or a passkey: its id (the cookie value) and its panel key. */
  create(owner: OwnerCredential, via: SignedInWith = 'token'): NewSession {
    const id = secret();
    const key = secret();
    if (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#end(oldest, 'session evicted');
    }
    const d = digest(id);
    this.#sessions.set(d.toString('hex'), {
      digest: d,
      keyDigest: digest(key),
      expires: this.#now() + this.#ttlMs,
      owner,
      via,
    });
    return { id, key };
  }

  /** The live sessions a request's cookies name, in cookie order (an expired one is ended on sight). */
  #carried(req: IncomingMessage): Array<[string, Session]> {
    const found: Array<[string, Session]> = [];
    for (const id of readCookies(req.headers.cookie, SESSION_COOKIE)) {
      if (id.length === 0 || id.length > SECRET_MAX) continue;
      const d = digest(id);
      const handle = d.toString('hex');
      const entry = this.#sessions.get(handle);
      if (entry === undefined || !timingSafeEqual(entry.digest, d)) continue;
      if (entry.expires <= this.#now()) {
        this.#end(handle, 'session expired');
        continue;
      }
      found.push([handle, entry]);
    }
    return found;
  }

  /**
   * The handle of a live session a request's cookies name, or undefined. The cookie alone only chooses
   * between the panel page and the login page (neither holds command data); it opens nothing.
   */
  session(req: IncomingMessage): string | undefined {
    return this.#carried(req)[0]?.[0];
  }

  /**
   * The session when the request carries its cookie **and** `key` is that same session's panel key
   * (contract 5 v2); else undefined. Compares digests in constant time.
   */
  authenticate(req: IncomingMessage, key: string | undefined): SessionMatch | undefined {
    if (key === undefined || key.length === 0 || key.length > SECRET_MAX) return undefined;
    const keyDigest = digest(key);
    for (const [handle, entry] of this.#carried(req)) {
      if (timingSafeEqual(entry.keyDigest, keyDigest)) return { handle, owner: entry.owner, via: entry.via };
    }
    return undefined;
  }

  /**
   * Ends the session a logout request carries, cookie and key (contract 5 v2: the cookie alone opens
   * nothing — a server on another port that received the cookie must not log the owner out with it).
   * Returns whether a session ended.
   */
  end(req: IncomingMessage, key: string | undefined): boolean {
    const match = this.authenticate(req, key);
    if (match === undefined) return false;
    this.#end(match.handle, 'logged out');
    return true;
  }

  /** Ends every session whose owner credential `stale` says is no longer valid; returns how many. */
  endWhere(stale: (owner: OwnerCredential) => boolean, why: SessionEnd): number {
    let ended = 0;
    for (const [handle, s] of this.#sessions) {
      if (!stale(s.owner)) continue;
      this.#end(handle, why);
      ended++;
    }
    return ended;
  }

  /** Ends every expired session (the edge runs this every second) and returns how many ended. */
  sweep(): number {
    const now = this.#now();
    let ended = 0;
    for (const [handle, s] of this.#sessions) {
      if (s.expires > now) continue;
      this.#end(handle, 'session expired');
      ended++;
    }
    return ended;
  }

  /** Calls `listener` with the handle of every session that ends, as it ends. Returns unsubscribe. */
  onEnd(listener: (handle: string, why: SessionEnd) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The Set-Cookie value for a new session; `secure` when served over https (public_url). */
  cookie(id: string, secure: boolean): string {
    const maxAge = Math.floor(this.#ttlMs / 1000);
    return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  }

  /** The Set-Cookie value that clears the session cookie. */
  static clearCookie(): string {
    return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
  }

  #end(handle: string, why: SessionEnd): void {
    this.#sessions.delete(handle);
    for (const listener of this.#listeners) listener(handle, why);
  }
}
