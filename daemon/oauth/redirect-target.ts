/**
 * Where an Allow's answer goes, as the owner must read it (contract 15 v4, issue 35 finding 8b): a
 * redirect URI of a custom scheme is an app on this device, whatever its "host" says —
 * `https.claude.ai://claude.ai/cb` is the app that registered the scheme `https.claude.ai:`, not the web
 * site claude.ai, and the card showed it as "claude.ai". So the card names the scheme when it is not
 * `https`, and loopback `http` as a program on this computer.
 */

/** An https site (its host), an app on this device (its scheme), or a program on this computer. */
export type RedirectTarget =
  | { kind: 'web'; host: string }
  | { kind: 'app'; scheme: string }
  | { kind: 'loopback'; origin: string };

/** The target of a redirect URI the client registered (clients.ts acceptableRedirect: a valid URL). */
export function redirectTarget(uri: string): RedirectTarget {
  const u = new URL(uri);
  if (u.protocol === 'https:') return { kind: 'web', host: u.host };
  if (u.protocol === 'http:') return { kind: 'loopback', origin: u.origin };
  return { kind: 'app', scheme: u.protocol };
}

/**
 * The target in one line, as the panel's list of connections keeps it (`redirect_host`): the host of an
 * https one, else the scheme (`https.claude.ai:`) or the loopback origin (`http://127.0.0.1:8080`).
 */
export function redirectShown(uri: string): string {
  const t = redirectTarget(uri);
  return t.kind === 'web' ? t.host : t.kind === 'app' ? t.scheme : t.origin;
}
