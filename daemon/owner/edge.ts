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

const HEARTBEAT_ENV = 'OGF_BROKER_OWNER_HEARTBEAT_MS';

/**
 * The heartbeat interval: 15 s, or `OGF_BROKER_OWNER_HEARTBEAT_MS` (100..600000) — a tuning knob for
 * slow links and for tests that prove a silent tab is dropped without waiting half a minute.
 */
function heartbeatMs(ctx: EdgeContext, env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[HEARTBEAT_ENV];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 100 && n <= 600_000) return n;
  ctx.log.log('warn', 'owner_heartbeat_ignored', {
    reason: `${HEARTBEAT_ENV} must be an integer from 100 to 600000`,
  });
  return undefined;
}

/** Builds the owner edge; one hub (one broker subscription) per edge. */
export function createOwnerEdge(ctx: EdgeContext, opts: OwnerHubOptions = {}, env = process.env): Edge {
  const sessions = new OwnerSessions();
  const beat = opts.heartbeatMs ?? heartbeatMs(ctx, env);
  const hub = new OwnerHub(ctx, sessions, beat === undefined ? {} : { heartbeatMs: beat });
  return {
    routes: [...loginRoutes({ ctx, sessions, throttle: new LoginThrottle() }), serveAsset],
    upgrades: [hub.upgrade],
    close: () => hub.close(),
  };
}
