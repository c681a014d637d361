/**
 * Deep links (contract 13.1, 13.2): `<base>/#<pending_id>` — the link every notification carries — opens
 * the panel on that card, scrolled to it and focused, whether it waits, is held behind "N new requests"
 * (it is placed at once: the owner asked for it) or is finished. The link survives the login round trip:
 * the login page (served at `/` without a session, with the fragment still in the address bar) and the
 * panel keep the wanted id in this tab's sessionStorage, and the login page returns to `/#<id>` once it
 * logged in, even when the owner came through the printed `/login#token=…` URL in between.
 */

const ITEM = 'ogf-deep-link';
/** A pending_id as the daemon makes them (and never `token=…`, the login fragment). */
const ID_RE = /^[A-Za-z0-9_-]{1,128}$/;

/** The card id this address asks for, if any. */
export function linkedId(hash: string = location.hash): string | undefined {
  let id: string;
  try {
    id = decodeURIComponent(hash.replace(/^#/, ''));
  } catch {
    return undefined;
  }
  return ID_RE.test(id) ? id : undefined;
}

/** Remembers the card this tab was sent to, across the login page. */
export function rememberLink(id: string | undefined = linkedId()): void {
  if (id === undefined) return;
  try {
    sessionStorage.setItem(ITEM, id);
  } catch {
    // Storage disabled: the link is lost at the login, nothing else.
  }
}

/** Where the login page goes once logged in: `/#<id>` when this tab was sent to a card, else `/`. */
export function afterLogin(): string {
  let id: string | null = null;
  try {
    id = sessionStorage.getItem(ITEM);
    sessionStorage.removeItem(ITEM);
  } catch {
    id = null;
  }
  return id !== null && ID_RE.test(id) ? `/#${encodeURIComponent(id)}` : '/';
}

/**
 * Opens linked cards in the panel: `open(id)` places the card (forcing held arrivals in), scrolls to it
 * and focuses it, and says whether it found it. Each link is followed once per address, when the first
 * snapshot shows it (or at once for a later `hashchange`); `missing(id)` tells the owner when it is not
 * among what the panel holds.
 */
export class DeepLinks {
  readonly #open: (id: string) => boolean;
  readonly #missing: (id: string) => void;
  #pending: string | undefined;
  #synced = false;

  constructor(open: (id: string) => boolean, missing: (id: string) => void) {
    this.#open = open;
    this.#missing = missing;
    this.#pending = linkedId();
    rememberLink(this.#pending);
    window.addEventListener('hashchange', () => {
      this.#pending = linkedId();
      if (this.#synced) this.#follow();
    });
  }

  /** A snapshot arrived: follow a link that waited for it. */
  synced(): void {
    this.#synced = true;
    this.#follow();
  }

  #follow(): void {
    const id = this.#pending;
    if (id === undefined) return;
    this.#pending = undefined;
    try {
      sessionStorage.removeItem(ITEM);
    } catch {
      // Nothing to forget.
    }
    if (!this.#open(id)) this.#missing(id);
  }
}
