/**
 * The panel's sticky header (contracts.md 5 (v2)): who is signed in (`hello.owner`), whether the queue on
 * screen is live (with "Reconnect now" while waiting to reconnect), the logged-out banner, Log out, and
 * the toast in the corner. The header's size can move every card below it, so every change to it goes
 * through the ClickGuard (click-safety.ts).
 */
import type { ClickGuard } from '../click-safety.js';
import { type ConnectionState, logOut } from '../connection.js';
import { byId, el, setText } from '../dom.js';

export interface HeaderEvents {
  /** The owner pressed "Reconnect now". */
  retry(): void;
  /**
   * The login ended: what is on screen is no longer live, take it away (runs inside the guard's change,
   * before the title says "Logged out").
   */
  loggedOut(): void;
}

export class Header {
  readonly #guard: ClickGuard;
  readonly #events: HeaderEvents;
  readonly #conn = byId('connection');
  readonly #retry = byId<HTMLButtonElement>('retry');
  readonly #signedIn = byId('signed-in');
  readonly #toast = byId('toast');
  #state: ConnectionState = { kind: 'connecting' };

  constructor(guard: ClickGuard, events: HeaderEvents) {
    this.#guard = guard;
    this.#events = events;
    this.#retry.addEventListener('click', () => events.retry());
    byId('logout').addEventListener('click', () => {
      void logOut().finally(() => location.replace('/login'));
    });
  }

  /** Contract 5 (v2): the panel names the signed-in owner (`hello.owner`). */
  owner(name: string): void {
    const node = this.#signedIn;
    if (node.dataset.owner === name && !node.hidden) return;
    this.#guard.change(() => {
      node.dataset.owner = name;
      node.replaceChildren('Signed in as ', el('strong', {}, name));
      node.hidden = false;
    });
  }

  /** Shows the connection's state (connection.ts). */
  connection(s: ConnectionState): void {
    // The state line and the retry button live in the sticky header: their size can move every card.
    this.#guard.change(() => this.#show(s));
  }

  /** The once-a-second update of the reconnect countdown; call it inside the guard's change. */
  tick(): void {
    if (this.#state.kind === 'waiting') this.#show(this.#state);
  }

  /** A message not tied to a card. */
  toast(text: string): void {
    // Fixed in a corner (styles.css): it moves nothing, but goes through the guard all the same.
    this.#guard.change(() => setText(this.#toast, text));
  }

  #show(s: ConnectionState): void {
    this.#state = s;
    const conn = this.#conn;
    conn.dataset.state = s.kind;
    this.#retry.hidden = s.kind !== 'waiting';
    byId('logged-out').hidden = s.kind !== 'logged-out';
    if (s.kind === 'logged-out') this.#signedIn.hidden = true;
    if (s.kind === 'live') conn.textContent = 'Live: updates arrive as they happen';
    else if (s.kind === 'connecting') conn.textContent = 'Connecting…';
    else if (s.kind === 'logged-out') conn.textContent = 'Logged out';
    else {
      const wait = `reconnecting in ${Math.max(0, Math.ceil((s.retryAt - Date.now()) / 1000))} s`;
      conn.textContent = s.stopped ? `The daemon stopped: ${wait}` : `Disconnected: ${wait}`;
    }
    if (s.kind === 'logged-out') {
      this.#events.loggedOut();
      document.title = 'Logged out · ogf-broker owner';
    }
  }
}
