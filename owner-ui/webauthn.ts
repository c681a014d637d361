/**
 * The browser half of WebAuthn, from @simplewebauthn/browser (no hand-written WebAuthn): the panel has no
 * bundler, so scripts/copy-assets.mjs copies the library's own bundle beside the panel as
 * `/ui/simplewebauthn-browser.js`, and importing it (for its effect: the bundle is UMD, and in a module it
 * sets `globalThis.SimpleWebAuthnBrowser`) makes it available here with the package's own types.
 */
import './simplewebauthn-browser.js';
import type { startAuthentication, startRegistration } from '@simplewebauthn/browser';

interface SimpleWebAuthnBrowser {
  startRegistration: typeof startRegistration;
  startAuthentication: typeof startAuthentication;
  browserSupportsWebAuthn(): boolean;
}

/** The library, or undefined when its file did not load (the panel says passkeys are unavailable). */
export function webauthn(): SimpleWebAuthnBrowser | undefined {
  return (globalThis as { SimpleWebAuthnBrowser?: SimpleWebAuthnBrowser }).SimpleWebAuthnBrowser;
}

/** Options as the daemon sent them, in the library's type (the daemon made them with its server half). */
export type RequestOptions = Parameters<typeof startAuthentication>[0]['optionsJSON'];
export type CreationOptions = Parameters<typeof startRegistration>[0]['optionsJSON'];

/** Words for a WebAuthn failure the owner can act on. */
export function webauthnTrouble(e: unknown): string {
  const name = (e as { name?: string })?.name;
  if (name === 'NotAllowedError') return 'The passkey prompt was cancelled or timed out: nothing was sent.';
  if (name === 'InvalidStateError') return 'This authenticator already holds a passkey for you here.';
  if (name === 'SecurityError')
    return `Passkeys need the panel at http://localhost:${location.port} (WebAuthn does not accept an IP address).`;
  return `The passkey did not answer: ${(e as Error)?.message ?? String(e)}`;
}
