/**
 * The owner edge (contracts.md 5, issue 4): the panel (`GET /`, `/ui/*`), login (`/login`), and the
 * owner WebSocket (`/owner/ws`). The daemon's HTTP server has already checked `Host` (403) for every
 * request and upgrade before these routes run.
 */
import type { Edge, EdgeContext } from '../context.js';
import { OwnerHub, type OwnerHubOptions } from './hub.js';
import { loginRoutes } from './login.js';
import { OwnerSessions } from './sessions.js';
import { serveAsset } from './static.js';
import { LoginThrottle } from './throttle.js';

/** Builds the owner edge; one hub (one broker subscription) per edge. */
export function createOwnerEdge(ctx: EdgeContext, opts: OwnerHubOptions = {}): Edge {
  const sessions = new OwnerSessions();
  const hub = new OwnerHub(ctx, sessions, opts);
  return {
    routes: [...loginRoutes({ ctx, sessions, throttle: new LoginThrottle() }), serveAsset],
    upgrades: [hub.upgrade],
    close: () => hub.close(),
  };
}
