/**
 * The relying party a passkey belongs to (contract 13.3): `public_url`'s host when the panel is reached
 * through it, or `localhost` for the daemon's own origin `http://localhost:PORT`. WebAuthn does not accept
 * an IP address as a relying party id, so the panel at `http://127.0.0.1:PORT` cannot use passkeys: it is
 * told to open `http://localhost:PORT` instead.
 */

/** A relying party: its id and the one origin a ceremony for it may come from. */
export interface RelyingParty {
  rp_id: string;
  origin: string;
}

export type RelyingPartyAnswer = { ok: true; rp: RelyingParty } | { ok: false; why: string };

/**
 * The relying party of a page at `origin` (the browser's `Origin` header, already checked to be one of
 * the daemon's own), given `public_url` (an https origin, or null) and the daemon's port.
 */
export function relyingPartyOf(
  origin: string | undefined,
  publicUrl: string | null,
  port: number,
): RelyingPartyAnswer {
  if (origin === undefined) {
    return {
      ok: false,
      why: 'passkeys work in the panel only (a browser with its Origin); the terminal cannot use them',
    };
  }
  const o = origin.toLowerCase();
  if (publicUrl !== null && o === new URL(publicUrl).origin) {
    return { ok: true, rp: { rp_id: new URL(publicUrl).hostname, origin: new URL(publicUrl).origin } };
  }
  if (o === `http://localhost:${port}`) return { ok: true, rp: { rp_id: 'localhost', origin: o } };
  return {
    ok: false,
    why: `passkeys need the panel at http://localhost:${port}${publicUrl === null ? '' : ` or ${publicUrl}`} (WebAuthn does not accept an IP address): open it there and log in`,
  };
}

/** The origins a passkey of relying party `rpId` signs from: the one named by `rp` (see relyingPartyOf). */
export function originsOf(rpId: string, publicUrl: string | null, port: number): string[] {
  if (rpId === 'localhost') return [`http://localhost:${port}`];
  if (publicUrl !== null && new URL(publicUrl).hostname === rpId) return [new URL(publicUrl).origin];
  return [];
}
