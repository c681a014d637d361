/**
 * A browser owner's credentials without a browser (contracts.md 5, v2): `POST /login` with the owner token
 * gives the session cookie (Set-Cookie) and the panel key (body); the owner socket needs both, the key
 * offered as the subprotocol `ogf-owner.<key>` beside the bare `ogf-owner`, as the panel does.
 */
import type { RunningDaemon } from './daemon.js';
import { OwnerSocket } from './owner.js';

export interface PanelLogin {
  /** `ogf_owner_session=<id>`, ready for a Cookie header. */
  cookie: string;
  key: string;
}

/**
 * Logs in like the login page does — as owner `owner`, or as the owner whose token is given (contract 9) —
 * and returns the cookie pair and the panel key.
 */
export async function panelLogin(d: RunningDaemon, token: string = d.ownerToken): Promise<PanelLogin> {
  const r = await fetch(`${d.url}/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  if (r.status !== 200) throw new Error(`login refused: HTTP ${r.status}`);
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!;
  const { key } = (await r.json()) as { key: string };
  return { cookie, key };
}

/** The subprotocols the panel offers for `key`. */
export function panelProtocols(key: string): string[] {
  return ['ogf-owner', `ogf-owner.${key}`];
}

/** Opens the owner socket as the panel does: cookie, the daemon's own Origin, and the key. */
export function openPanelSocket(d: RunningDaemon, login: PanelLogin): Promise<OwnerSocket> {
  return OwnerSocket.open(d, { Cookie: login.cookie, Origin: d.url }, panelProtocols(login.key));
}
