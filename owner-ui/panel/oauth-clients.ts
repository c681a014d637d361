/**
 * "Connected AI clients" (contract 15): every live OAuth connection — its client name, the host of its
 * client_id, when it connected and when it was last used — with a `Disconnect …` button that revokes its
 * tokens and closes its MCP sessions at once, and (contract 15 v4) ends the grants made for its name unless
 * the owner unticks that box in the confirmation. Read over HTTP with the panel session (cookie and panel key);
 * refreshed every 10 s and when the tab comes back, while the owner socket is live (so a logged-out tab asks
 * nothing). Hidden when OAuth is off (`enabled: false`).
 */
import { panelKey } from '../connection.js';
import { byId, el } from '../dom.js';

interface Connected {
  client_name: string;
  client_id: string;
  client_id_host: string;
  redirect_host: string;
  connected_at: string;
  last_used_at: string;
  /** Live grants made for its client name (contract 15 v4: Disconnect ends them unless unticked). */
  grants?: number;
}

const REFRESH_MS = 10_000;

function headers(): Record<string, string> {
  const key = panelKey();
  return key === null ? {} : { 'X-OGF-Owner-Key': key };
}

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/**
 * Where a connection's answers go (contract 15 v4): the daemon keeps an https host, an app's scheme
 * (`claude:`) or a loopback origin (daemon/oauth/redirect-target.ts), and a scheme is an app, not a site.
 */
function answersTo(redirect: string): string {
  if (redirect.startsWith('http://')) return `a program on this computer (${redirect})`;
  if (redirect.endsWith(':')) return `an app on this device (${redirect})`;
  return redirect;
}

export class OAuthClients {
  readonly #section = byId('oauth');
  readonly #list = byId('oauth-list');
  readonly #empty = byId('oauth-empty');
  readonly #count = byId('oauth-count');
  readonly #msg = byId('oauth-msg');

  #live = false;
  #timer: number | undefined;
  /** The client whose Disconnect is being confirmed, and its box (kept across the 10 s refreshes). */
  #confirming: { name: string; endGrants: boolean } | undefined;

  constructor() {
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && this.#live) void this.refresh();
    });
  }

  /** The owner socket is live (refresh now and every 10 s) or not (stop asking). */
  live(on: boolean): void {
    if (on === this.#live) return;
    this.#live = on;
    window.clearInterval(this.#timer);
    if (!on) return;
    void this.refresh();
    this.#timer = window.setInterval(() => void this.refresh(), REFRESH_MS);
  }

  async refresh(): Promise<void> {
    let r: Response;
    try {
      r = await fetch('/owner/oauth/clients', {
        credentials: 'same-origin',
        headers: headers(),
        cache: 'no-store',
      });
    } catch {
      return;
    }
    if (!r.ok) return;
    const body = (await r.json().catch(() => ({}))) as { enabled?: boolean; clients?: Connected[] };
    if (body.enabled !== true) {
      this.#section.hidden = true;
      return;
    }
    this.#render(body.clients ?? []);
  }

  #render(clients: Connected[]): void {
    this.#section.hidden = false;
    this.#empty.hidden = clients.length > 0;
    this.#count.textContent = clients.length > 0 ? String(clients.length) : '';
    this.#list.replaceChildren(
      ...clients.map((c) => {
        const button = el(
          'button',
          { type: 'button', class: 'revoke', 'aria-label': `Disconnect ${c.client_name}` },
          'Disconnect…',
        );
        button.addEventListener('click', () => {
          this.#confirming = { name: c.client_name, endGrants: true };
          this.#render(clients);
        });
        const confirming = this.#confirming?.name === c.client_name ? this.#confirming : undefined;
        return el(
          'li',
          { 'data-client': c.client_name },
          el(
            'div',
            {},
            el('strong', {}, c.client_name),
            ' · ',
            el(
              'span',
              {},
              c.client_id_host !== ''
                ? c.client_id_host
                : `registered here, answers to ${answersTo(c.redirect_host)}`,
            ),
            el(
              'div',
              { class: 'meta' },
              `connected ${when(c.connected_at)} · last used ${when(c.last_used_at)}`,
            ),
          ),
          confirming === undefined ? button : this.#confirm(c, confirming, clients),
        );
      }),
    );
  }

  /**
   * Contract 15 (v4): Disconnect also ends the grants made for the name, unless the owner unticks the box
   * (a later connection given that name would hold them).
   */
  #confirm(c: Connected, state: { name: string; endGrants: boolean }, clients: Connected[]): HTMLElement {
    const n = c.grants ?? 0;
    const id = `oauth-end-grants-${c.client_name}`;
    const box = el('input', { type: 'checkbox', id });
    box.checked = state.endGrants;
    box.addEventListener('change', () => {
      state.endGrants = box.checked;
    });
    const go = el('button', { type: 'button', class: 'revoke' }, 'Disconnect');
    const cancel = el('button', { type: 'button' }, 'Cancel');
    go.addEventListener('click', () => void this.#disconnect(c.client_name, state.endGrants, go));
    cancel.addEventListener('click', () => {
      this.#confirming = undefined;
      this.#render(clients);
    });
    return el(
      'div',
      { class: 'oauth-confirm' },
      el(
        'label',
        { for: id },
        box,
        ` Also end its grants (${n === 0 ? 'no live grants' : n === 1 ? '1 live grant' : `${n} live grants`})`,
      ),
      go,
      cancel,
    );
  }

  async #disconnect(name: string, endGrants: boolean, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    this.#msg.textContent = '';
    this.#confirming = undefined;
    try {
      const r = await fetch('/owner/oauth/disconnect', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', ...headers() },
        body: JSON.stringify({ client_name: name, end_grants: endGrants }),
      });
      if (!r.ok) {
        const body = (await r.json().catch(() => ({}))) as { error?: { message?: string } };
        this.#msg.textContent = body.error?.message ?? `Disconnect refused (HTTP ${r.status}).`;
      }
    } catch {
      this.#msg.textContent = 'The daemon does not answer. Is it running?';
    }
    await this.refresh();
  }
}
