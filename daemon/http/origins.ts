/**
 * Which Host headers and browser Origins the daemon answers (contract 5; DNS rebinding): loopback names
 * on the daemon's port, and `public_url` when the owner put the daemon behind a tunnel or reverse proxy.
 * The daemon only ever listens on loopback (contract 1.1 v2, config.ts), so a Host of `127.0.0.1:PORT`
 * can only arrive from this machine: a LAN peer cannot reach the socket to send it.
 */
import type { Origins } from './edge.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function createOrigins(publicUrl: string | null, port: () => number, bindHost: string): Origins {
  const pub = publicUrl === null ? undefined : new URL(publicUrl);
  const ownOrigins = () => {
    const p = port();
    const set = new Set(LOOPBACK_NAMES.map((h) => `http://${h}:${p}`));
    if (pub) set.add(pub.origin);
    return set;
  };
  return {
    url() {
      const h = bindHost.includes(':') ? `[${bindHost}]` : bindHost;
      return `http://${h}:${port()}`;
    },
    isAllowedHost(host) {
      if (host === undefined || host === '') return false;
      const h = host.toLowerCase();
      if (pub && h === pub.host) return true;
      const p = String(port());
      return LOOPBACK_NAMES.some((name) => h === `${name}:${p}`);
    },
    isAllowedOrigin(origin) {
      return ownOrigins().has(origin.toLowerCase());
    },
  };
}
