/**
 * The daemon's VAPID key pair (RFC 8292, contract 13.2): created by `web-push` at first start in
 * `<data-dir>/vapid.json` (0600, written exclusively, so two starts cannot make two pairs) and kept, so the
 * subscriptions browsers made with its public key stay valid across restarts. The private key never leaves
 * the file and this process; the public key is what `GET /owner/push-key` gives the panel.
 */
import webpush from 'web-push';
import { readOrCreateSecret } from '../datadir/index.js';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

export function loadVapidKeys(path: string): VapidKeys {
  const text = readOrCreateSecret(path, () => JSON.stringify(webpush.generateVAPIDKeys()));
  const keys = JSON.parse(text) as Partial<VapidKeys>;
  if (typeof keys.publicKey !== 'string' || typeof keys.privateKey !== 'string')
    throw new Error(`${path} does not hold a VAPID key pair; remove it to make a new one`);
  return { publicKey: keys.publicKey, privateKey: keys.privateKey };
}
