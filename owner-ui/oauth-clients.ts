/**
 * "Connected AI clients" (contract 15): every live OAuth connection — its client name, the host of its
 * client_id, when it connected and when it was last used — with a `Disconnect …` button that revokes its
 * tokens and closes its MCP sessions at once. Read over HTTP with the panel session (cookie and panel key);
 * refreshed every 10 s and when the tab comes back, while the owner socket is live (so a logged-out tab asks
 * nothing). Hidden when OAuth is off (`enabled: false`).
 */
import { panelKey } from './connection.js';
import { byId, el } from './dom.js';

interface Connected {
  client_name: string;
  client_id: string;
  client_id_host: string;
  redirect_host: string;
  connected_at: string;
  last_used_at: string;
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

export class OAuthClients {
  readonly #section = byId('oauth');
  readonly #list = byId('oauth-list');
  readonly #empty = byId('oauth-empty');
  readonly #count = byId('oauth-count');
  readonly #msg = byId('oauth-msg');

  #live = false;
  #timer: number | undefined;

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
        button.addEventListener('click', () => void this.#disconnect(c.client_name, button));
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
              c.client_id_host !== '' ? c.client_id_host : `registered here, answers to ${c.redirect_host}`,
            ),
            el(
              'div',
              { class: 'meta' },
              `connected ${when(c.connected_at)} · last used ${when(c.last_used_at)}`,
            ),
          ),
          button,
        );
      }),
    );
  }

  async #disconnect(name: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    this.#msg.textContent = '';
    try {
      const r = await fetch('/owner/oauth/disconnect', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', ...headers() },
        body: JSON.stringify({ client_name: name }),
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
