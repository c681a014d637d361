/**
 * The login page (contracts.md 5): the token arrives in the URL fragment (`/login#token=T`), which the
 * browser never sends to the server; we take it out of the address bar at once, POST it as JSON, and move
 * on to `/` once the daemon set the session cookie. A pasted token goes the same way.
 */
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
    location.replace('/');
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
  input.focus();
}
