/**
 * The browser half of WebAuthn, from @simplewebauthn/browser (no hand-written WebAuthn), bundled into the
 * entries that use it (the panel's passkey settings and approvals, the login page) by vite.panel.config.ts.
 */
import { browserSupportsWebAuthn, startAuthentication, startRegistration } from '@simplewebauthn/browser';

interface SimpleWebAuthnBrowser {
  startRegistration: typeof startRegistration;
  startAuthentication: typeof startAuthentication;
  browserSupportsWebAuthn(): boolean;
}

const LIBRARY: SimpleWebAuthnBrowser = { startRegistration, startAuthentication, browserSupportsWebAuthn };
// Also where the library's own browser bundle put it when it was a separate file, so a page's scripts (and the
// browser tests that sign with the virtual authenticator: test/browser-passkeys.test.ts) reach the same one.
(globalThis as { SimpleWebAuthnBrowser?: SimpleWebAuthnBrowser }).SimpleWebAuthnBrowser = LIBRARY;

/**
 * The library (bundled, so always here; callers still handle undefined, as when it was a separate file the
 * page might fail to load).
 */
export function webauthn(): SimpleWebAuthnBrowser | undefined {
  return LIBRARY;
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
