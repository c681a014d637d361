/**
 * The login page (contracts.md 5): the token arrives in the URL fragment (`/login#token=T`), which the
 * browser never sends to the server; we take it out of the address bar at once, POST it as JSON, keep the
 * panel key from the answer in this origin's localStorage (v2: the owner socket needs it besides the
 * cookie), and move on to `/`. A pasted token goes the same way.
 *
 * When the daemon is busy checking other attempts (503, contract 5: at most 4 at a time) the page waits
 * the `Retry-After` it was given and tries again by itself, so one click still logs the owner in.
 */
import { storePanelKey } from './connection.js';
import { afterLogin, rememberLink } from './deep-link.js';
import { byId } from './dom.js';

const status = byId('login-status');
const form = byId<HTMLFormElement>('login-form');
const input = byId<HTMLInputElement>('token');

async function login(token: string): Promise<void> {
  status.textContent = 'Logging in…';
  let r: Response;
  try {
    r = await fetch('/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token }),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    status.textContent = 'The daemon does not answer. Is it running?';
    return;
  }
  if (r.ok) {
    let key: unknown;
    try {
      key = ((await r.json()) as { key?: unknown }).key;
    } catch {
      key = undefined;
    }
    if (typeof key !== 'string' || key === '') {
      status.textContent = 'Login failed: the daemon sent no panel key. Is it an older version?';
      return;
    }
    storePanelKey(key);
    // Back to the card a notification linked to, if this tab came for one (deep-link.ts). This page may
    // be served at `/#<id>` itself, where replacing the address would only change its fragment: reload.
    history.replaceState(null, '', afterLogin());
    location.reload();
    return;
  }
  if (r.status === 503) {
    const s = Math.min(60, Math.max(1, Number(r.headers.get('Retry-After')) || 1));
    status.textContent = `The daemon is busy checking other login attempts; trying again in ${s} s…`;
    window.setTimeout(() => void login(token), s * 1000);
    return;
  }
  let message = `Login refused (HTTP ${r.status}).`;
  try {
    const body = (await r.json()) as { error?: { message?: string } };
    if (body.error?.message) message = `Login refused: ${body.error.message}.`;
  } catch {
    // Keep the generic message.
  }
  status.textContent = message;
  input.focus();
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const token = input.value.trim();
  input.value = '';
  if (token !== '') void login(token);
});

const m = /^#token=([^&]+)/.exec(location.hash);
if (m?.[1] !== undefined) {
  // Out of the address bar and history before anything else happens.
  history.replaceState(null, '', '/login');
  void login(decodeURIComponent(m[1]));
} else {
  // `/#<pending_id>` without a session serves this page: keep the card it asked for for after the login.
  rememberLink();
  input.focus();
}
