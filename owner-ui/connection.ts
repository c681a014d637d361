/**
 * The panel's owner WebSocket: connects to `/owner/ws` on the page's own host, reconnects with a growing
 * delay when it drops, and tells the page its state so the owner always sees whether the queue on screen
 * is live. Each (re)connect starts with a fresh `snapshot`, so a tab that was away misses nothing
 * (contract 5).
 *
 * Authentication (contract 5 v2) is the session cookie together with the panel key, which the login page
 * stored in `localStorage` and we offer as the subprotocol `ogf-owner.<key>`. localStorage is scoped by
 * port, cookies are not: a page on another 127.0.0.1 port gets the cookie but never the key. Every tab of
 * this origin shares the key, so a new tab just works. The key never goes into a URL.
 *
 * A browser cannot read the 401 of a refused upgrade, so after a failed connect we ask `/owner/session`
 * (with the key in a header): 401 there means the login ended (e.g. the daemon restarted, or the owner
 * logged out in another tab) and reconnecting is pointless.
 */
import type { OwnerSubprotocol, ServerMessage } from '../common/owner-messages.js';

/** Where the login page keeps the panel key: this origin's localStorage. */
const KEY_ITEM = 'ogf-owner-key';
const SUBPROTOCOL: OwnerSubprotocol = 'ogf-owner';

/** Stores the panel key POST /login returned (the login page, just before it moves on to `/`). */
export function storePanelKey(key: string): void {
  localStorage.setItem(KEY_ITEM, key);
}

export function panelKey(): string | null {
  try {
    return localStorage.getItem(KEY_ITEM);
  } catch {
    // Storage disabled: there is no key, so no login this tab can use.
    return null;
  }
}

/**
 * Logs this browser out: POST /logout with the panel key beside the cookie (the daemon ends a session only
 * for both, contract 5 v2), then the caller moves to the login page whatever the answer.
 */
export async function logOut(): Promise<void> {
  const key = panelKey();
  await fetch('/logout', {
    method: 'POST',
    credentials: 'same-origin',
    headers: key === null ? {} : { 'X-OGF-Owner-Key': key },
  });
}

export type ConnectionState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  /** `stopped`: the daemon said it is stopping (contract 17: its sockets close 1001). */
  | { kind: 'waiting'; retryAt: number; stopped?: boolean }
  | { kind: 'logged-out' };

export interface ConnectionEvents {
  onState(state: ConnectionState): void;
  onMessage(message: ServerMessage): void;
}

const MIN_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

export class OwnerConnection {
  readonly #events: ConnectionEvents;
  #ws: WebSocket | undefined;
  #delay = MIN_DELAY_MS;
  #timer: number | undefined;

  constructor(events: ConnectionEvents) {
    this.#events = events;
  }

  /** Opens the socket (again). */
  connect(): void {
    window.clearTimeout(this.#timer);
    const key = panelKey();
    if (key === null) {
      // Never logged in from this origin (or storage was cleared): the cookie alone opens nothing.
      this.#events.onState({ kind: 'logged-out' });
      return;
    }
    this.#events.onState({ kind: 'connecting' });
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    // The bare name first: the daemon selects it, so the 101 does not echo the key.
    const ws = new WebSocket(`${scheme}//${location.host}/owner/ws`, [SUBPROTOCOL, `${SUBPROTOCOL}.${key}`]);
    this.#ws = ws;
    let opened = false;
    ws.addEventListener('open', () => {
      opened = true;
      this.#delay = MIN_DELAY_MS;
      this.#events.onState({ kind: 'live' });
    });
    ws.addEventListener('message', (e) => {
      if (typeof e.data !== 'string') return;
      try {
        this.#events.onMessage(JSON.parse(e.data) as ServerMessage);
      } catch (err) {
        console.error('panel: bad frame from the daemon', err);
      }
    });
    ws.addEventListener('close', (e) => {
      if (this.#ws !== ws) return;
      this.#ws = undefined;
      // Contract 17: the daemon's own clean stop says so (1001 "daemon stopping"); a proxy going away does not.
      void this.#afterClose(opened, key, e.code === 1001 && e.reason === 'daemon stopping');
    });
  }

  async #afterClose(wasOpen: boolean, key: string, stopped: boolean): Promise<void> {
    if (!wasOpen) {
      try {
        const r = await fetch('/owner/session', {
          credentials: 'same-origin',
          cache: 'no-store',
          headers: { 'X-OGF-Owner-Key': key },
        });
        if (r.status === 401) {
          this.#events.onState({ kind: 'logged-out' });
          return;
        }
      } catch {
        // The daemon is unreachable: keep trying.
      }
    }
    const delay = this.#delay;
    this.#delay = Math.min(MAX_DELAY_MS, this.#delay * 2);
    this.#events.onState({ kind: 'waiting', retryAt: Date.now() + delay, ...(stopped ? { stopped } : {}) });
    this.#timer = window.setTimeout(() => this.connect(), delay);
  }

  /** Sends a frame; false when not connected (the caller says so to the owner). */
  send(frame: object): boolean {
    const ws = this.#ws;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(frame));
    return true;
  }

  /** Reconnects at once (the "Reconnect now" button). */
  retryNow(): void {
    if (this.#ws === undefined) this.connect();
  }
}
