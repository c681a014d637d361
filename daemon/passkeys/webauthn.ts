/**
 * @simplewebauthn/server, loaded when a passkey is first added, asked or checked: its certificate stack
 * (@peculiar/x509 and some twenty ASN.1 modules) was a third of every daemon start, and most starts never
 * touch a passkey. The first ceremony after a start waits for it once.
 */
import { onFirstUse } from '../base/index.js';

export const webauthn = onFirstUse(() => import('@simplewebauthn/server'));
