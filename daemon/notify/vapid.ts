/**
 * The daemon's VAPID key pair (RFC 8292, contract 13.2): created by `web-push` at first start in
 * `<data-dir>/vapid.json` (0600, written exclusively, so two starts cannot make two pairs) and kept, so the
 * subscriptions browsers made with its public key stay valid across restarts. The private key never leaves
 * the file and this process; the public key is what `GET /owner/push-key` gives the panel. `web-push` is
 * loaded only when a pair must be made (notify/libraries.ts).
 */
import { readOrCreateSecret } from '../datadir/index.js';
import { webPush } from './libraries.js';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** Thrown by the first read's maker: the file is missing, so the pair is made and the read tried again. */
const MAKE_ONE = Symbol('make a VAPID pair');

export async function loadVapidKeys(path: string): Promise<VapidKeys> {
  let made: string | undefined;
  const make = () => {
    if (made === undefined) throw MAKE_ONE;
    return made;
  };
  let text: string;
  try {
    text = readOrCreateSecret(path, make);
  } catch (e) {
    if (e !== MAKE_ONE) throw e;
    made = JSON.stringify((await webPush()).generateVAPIDKeys());
    text = readOrCreateSecret(path, make);
  }
  const keys = JSON.parse(text) as Partial<VapidKeys>;
  if (typeof keys.publicKey !== 'string' || typeof keys.privateKey !== 'string')
    throw new Error(`${path} does not hold a VAPID key pair; remove it to make a new one`);
  return { publicKey: keys.publicKey, privateKey: keys.privateKey };
}
