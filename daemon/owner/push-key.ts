/**
 * `GET /owner/push-key` (contract 13.2): the daemon's VAPID public key, which the panel hands the browser's
 * Push API to subscribe this device. A public key: served like the panel's files, without a session, as
 * `{"public_key":"<base64url>"}`; 404 when Web Push is not available.
 */
import type { HttpRoute } from '../http/index.js';
import type { OwnerContext } from './setup.js';
import { securityHeaders } from './static.js';

export function pushKeyRoute(ctx: OwnerContext): HttpRoute {
  return (req, res, url) => {
    if (url.pathname !== '/owner/push-key' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    const key = ctx.push?.publicKey;
    const body = JSON.stringify(
      key === undefined
        ? { error: { code: 'NotFound', message: 'Web Push is not available' } }
        : { public_key: key },
    );
    res.writeHead(key === undefined ? 404 : 200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      ...securityHeaders(req),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
