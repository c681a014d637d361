/**
 * Browser login sessions (contracts.md 5): the owner token is exchanged once for a random session id
 * carried in an `HttpOnly; SameSite=Strict` cookie, so the token itself never sits in the browser's
 * cookie jar, history or a query string. Sessions live in memory only: a daemon restart logs every tab
 * out, which is the safe side for a gate that launches processes.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const SESSION_COOKIE = 'ogf_owner_session';
/** A login lasts a working day; the owner logs in again from `ogf-broker token owner` after that. */
const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Bounded so a flood of logins cannot grow memory without limit; the oldest session goes first. */
const MAX_SESSIONS = 256;

/** Reads one cookie's value from a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function digest(id: string): Buffer {
  return createHash('sha256').update(id).digest();
}

export class OwnerSessions {
  /** Keyed by the SHA-256 of the session id, so the map holds no usable cookie value either. */
  readonly #sessions = new Map<string, { digest: Buffer; expires: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Creates a session and returns its id (32 random bytes, base64url): the cookie value. */
  create(): string {
    const id = randomBytes(32).toString('base64url');
    const d = digest(id);
    if (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
    this.#sessions.set(d.toString('hex'), { digest: d, expires: this.#now() + SESSION_TTL_MS });
    return id;
  }

  /** True when the request carries a live session cookie. Compares digests in constant time. */
  isValid(req: IncomingMessage): boolean {
    const id = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (id === undefined || id.length === 0 || id.length > 128) return false;
    const d = digest(id);
    const entry = this.#sessions.get(d.toString('hex'));
    if (entry === undefined || !timingSafeEqual(entry.digest, d)) return false;
    if (entry.expires <= this.#now()) {
      this.#sessions.delete(d.toString('hex'));
      return false;
    }
    return true;
  }

  /** Ends the session a request carries (logout). */
  end(req: IncomingMessage): void {
    const id = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (id !== undefined) this.#sessions.delete(digest(id).toString('hex'));
  }

  /** The Set-Cookie value for a new session; `secure` when served over https (public_url). */
  static cookie(id: string, secure: boolean): string {
    const maxAge = Math.floor(SESSION_TTL_MS / 1000);
    return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  }

  /** The Set-Cookie value that clears the session cookie. */
  static clearCookie(): string {
    return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
  }
}
