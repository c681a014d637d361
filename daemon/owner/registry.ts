/**
 * The owners connected to `/owner/ws` (contracts.md 5, 9): who each socket is, which browser session opened
 * it, and how a socket leaves when its session ends, its token is rotated, or serving it failed.
 *
 * Each socket keeps the credential it was opened with (contract 9): a rotation of that owner's token (made
 * by `ogf-broker token` in another process) closes it (`closeStale`, called by the owner edge's poll). A
 * session's sockets are closed the moment it ends (logout, expiry, rotation: `closeSession`). A socket that
 * leaves the set gets no upsert from that moment, and its message listeners are removed first so nothing
 * it still sends is acted on.
 */
import type { WebSocket } from 'ws';
import type { Logger } from '../base/index.js';
import type { OwnerCredential } from '../tokens/index.js';
import type { SessionEnd } from './sessions.js';

/** One connected owner socket. */
export interface Owner {
  ws: WebSocket;
  /** Who this is (contract 9): the owner's name, recorded by the broker as `by`, and its token's hash. */
  cred: OwnerCredential;
  /** The owner's name: who decides, as the broker records it. Never a token. */
  by: string;
  /** Answered the last ping (heartbeat.ts). */
  alive: boolean;
  /** The browser's `Origin` (absent for a terminal): which relying party its passkeys belong to (13.3). */
  origin?: string;
  /** Contract 13.3: signed in with a passkey, so it may add and remove the owner's passkeys. */
  viaPasskey: boolean;
  /** The browser's User-Agent at the upgrade: how the owner's device list names a device (contract 13.2). */
  userAgent?: string;
  /** Bytes the daemon itself queued in one go (the snapshot, a history), allowed on top of MAX_BUFFERED_BYTES. */
  allowance: number;
}

/** The set of joined owners, in the order they joined (the fan-out's order), and each session's sockets. */
export class OwnerRegistry {
  readonly #log: Logger;
  readonly #owners = new Set<Owner>();
  /** The open sockets of each browser session (by session handle), closed when the session ends. */
  readonly #bySession = new Map<string, Set<WebSocket>>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Number of joined owners. */
  get size(): number {
    return this.#owners.size;
  }

  /** Every joined owner; safe to leave the set while iterating (a Set visits what remains). */
  [Symbol.iterator](): IterableIterator<Owner> {
    return this.#owners.values();
  }

  add(owner: Owner): void {
    this.#owners.add(owner);
  }

  delete(owner: Owner): void {
    this.#owners.delete(owner);
  }

  /** Remembers that `ws` belongs to browser session `session`, until it closes. */
  track(session: string, ws: WebSocket): void {
    const open = this.#bySession.get(session) ?? new Set<WebSocket>();
    this.#bySession.set(session, open);
    open.add(ws);
    ws.once('close', () => {
      open.delete(ws);
      if (open.size === 0 && this.#bySession.get(session) === open) this.#bySession.delete(session);
    });
  }

  /**
   * Closes every socket of a browser session that ended (logout, expiry; contract 5 v2), at once: from
   * this moment they get no upsert and nothing they send is acted on, and they are told why (1008).
   */
  closeSession(session: string, why: SessionEnd): void {
    const open = this.#bySession.get(session);
    if (open === undefined) return;
    this.#bySession.delete(session);
    for (const owner of this.#owners) {
      if (!open.has(owner.ws)) continue;
      this.#owners.delete(owner);
      owner.ws.removeAllListeners('message');
      owner.ws.close(1008, why);
    }
    this.#log.log('info', 'owner_session_closed', { why, sockets: open.size });
  }

  /**
   * Closes every socket, Bearer ones included, whose owner's token was rotated since it opened (contract 5
   * v2: "rotating an owner's token closes every socket and panel session of that owner"); `isCurrent`
   * says whether a credential is still its owner's. Other owners' sockets are untouched.
   */
  closeStale(isCurrent: (cred: OwnerCredential) => boolean): void {
    for (const owner of this.#owners) if (!isCurrent(owner.cred)) this.revoke(owner);
  }

  /** Closes one socket whose token was rotated: no more upserts, nothing it sends acted on (1008). */
  revoke(owner: Owner): void {
    this.#owners.delete(owner);
    owner.ws.removeAllListeners('message');
    owner.ws.close(1008, 'token rotated');
    this.#log.log('info', 'owner_token_revoked', { owner: owner.by });
  }

  /** Logs what went wrong serving one owner and closes that owner's socket only (1011: reconnect). */
  drop(owner: Owner, event: string, e: unknown): void {
    this.#log.log('error', event, { by: owner.by, error: (e as Error)?.message ?? String(e) });
    try {
      owner.ws.close(1011, 'internal error; reconnect to resync');
    } catch {
      owner.ws.terminate();
    }
  }
}
