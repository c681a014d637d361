/**
 * The login page (contracts.md 5): the token arrives in the URL fragment (`/login#token=T`), which the
 * browser never sends to the server; we take it out of the address bar at once, POST it as JSON, keep the
 * panel key from the answer in this origin's localStorage (v2: the owner socket needs it besides the
 * cookie), and move on to `/`. A pasted token goes the same way.
 *
 * When the daemon is busy checking other attempts (503, contract 5: at most 4 at a time) the page waits
 * the `Retry-After` it was given and tries again by itself, so one click still logs the owner in.
 */
import { storePanelKey } from '../connection.js';
import { afterLogin, rememberLink } from '../deep-link.js';
import { byId } from '../dom.js';
import { type RequestOptions, webauthn, webauthnTrouble } from '../webauthn.js';

const status = byId('login-status');
const form = byId<HTMLFormElement>('login-form');
const input = byId<HTMLInputElement>('token');
const passkeyButton = byId<HTMLButtonElement>('passkey-login');

function post(path: string, body: unknown): Promise<Response> {
  return fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
}

/** True when a consent request (consent.ts) is waiting for this login, fresh (under 10 minutes). */
function pendingConsent(): boolean {
  try {
    const saved = JSON.parse(localStorage.getItem('ogf-consent-request') ?? 'null') as { at?: number } | null;
    return typeof saved?.at === 'number' && Date.now() - saved.at < 10 * 60 * 1000;
  } catch {
    return false;
  }
}

async function login(token: string): Promise<void> {
  status.textContent = 'Logging in…';
  let r: Response;
  try {
    r = await post('/login', { token });
  } catch {
    status.textContent = 'The daemon does not answer. Is it running?';
    return;
  }
  await loggedIn(r, () => void login(token));
}

/**
 * Contract 13.3, "Sign in with a passkey": the daemon's request options (a discoverable credential, user
 * verification required), the authenticator's answer, and the same session as the token login gives.
 */
async function passkeyLogin(): Promise<void> {
  const lib = webauthn();
  if (lib === undefined) {
    status.textContent = 'This browser cannot use passkeys here.';
    return;
  }
  status.textContent = 'Follow your device’s prompt (fingerprint, face or PIN)…';
  let r: Response;
  try {
    const o = await post('/login/passkey/options', {});
    const body = (await o.json()) as { options?: RequestOptions; error?: { message?: string } };
    if (!o.ok || body.options === undefined) {
      status.textContent = `Passkey sign-in unavailable: ${body.error?.message ?? `HTTP ${o.status}`}.`;
      return;
    }
    const response = await lib.startAuthentication({ optionsJSON: body.options });
    status.textContent = 'Signing in…';
    r = await post('/login/passkey', { response });
  } catch (e) {
    status.textContent =
      e instanceof TypeError ? 'The daemon does not answer. Is it running?' : webauthnTrouble(e);
    return;
  }
  await loggedIn(r, () => void passkeyLogin());
}

/** Keeps the panel key of a successful login and opens the panel, or says why not. */
async function loggedIn(r: Response, again: () => void): Promise<void> {
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
    // Contract 15: an AI's connection request that sent the owner here to log in first survives the trip.
    if (pendingConsent()) {
      location.replace('/oauth/consent');
      return;
    }
    // Back to the card a notification linked to, if this tab came for one (deep-link.ts). This page may
    // be served at `/#<id>` itself, where replacing the address would only change its fragment: reload.
    history.replaceState(null, '', afterLogin());
    location.reload();
    return;
  }
  if (r.status === 503) {
    const s = Math.min(60, Math.max(1, Number(r.headers.get('Retry-After')) || 1));
    status.textContent = `The daemon is busy checking other login attempts; trying again in ${s} s…`;
    window.setTimeout(again, s * 1000);
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

passkeyButton.addEventListener('click', () => void passkeyLogin());

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
