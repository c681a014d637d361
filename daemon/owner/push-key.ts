/**
 * `GET /owner/push-key` (contract 13.2): the daemon's VAPID public key, which the panel hands the browser's
 * Push API to subscribe this device. A public key: served like the panel's files, without a session, as
 * `{"public_key":"<base64url>"}`; 404 when Web Push is not available.
 */
import type { HttpRoute } from '../http/index.js';
import type { OwnerContext } from './context.js';
import { json } from './login.js';

export function pushKeyRoute(ctx: OwnerContext): HttpRoute {
  return (req, res, url) => {
    if (url.pathname !== '/owner/push-key' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    const key = ctx.push?.publicKey;
    if (key === undefined)
      json(req, res, 404, { error: { code: 'NotFound', message: 'Web Push is not available' } });
    else json(req, res, 200, { public_key: key });
    return true;
  };
}
