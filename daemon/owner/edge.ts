/**
 * The owner edge (contracts.md 5, issue 4): the panel (`GET /`, `/ui/*`), login (`/login`), and the
 * owner WebSocket (`/owner/ws`). The daemon's HTTP server has already checked `Host` (403) for every
 * request and upgrade before these routes run.
 *
 * Rotations (contract 5 v2, 9): `ogf-broker token owner --rotate` runs in another process and writes only
 * the store. The edge listens to the store's change feed (core/ports.ts: SQLite's `PRAGMA data_version`
 * polled, section 16's LISTEN/NOTIFY); when another process committed, every panel session and socket whose
 * owner's token hash is no longer current ends at once (1008 "token rotated"). The hub also re-checks the
 * credential on every frame and every upgrade, so nothing slips through before the feed tells.
 */
import type { IncomingMessage } from 'node:http';
import type { Edge } from '../http/index.js';
import { type OwnerDoor, oauthOffRoute, oauthOwnerRoutes } from '../oauth/index.js';
import type { OwnerCredential } from '../tokens/index.js';
import { actRoute } from './act-routes.js';
import type { OwnerContext } from './context.js';
import { OwnerHub, type OwnerHubOptions } from './hub.js';
import { json, loginRoutes, PANEL_KEY_HEADER } from './login.js';
import { challengeTtlMs, PasskeyCeremonies } from './passkey-ceremonies.js';
import { passkeyLoginRoutes } from './passkey-login.js';
import { pushKeyRoute } from './push-key.js';
import { OwnerSessions, SESSION_TTL_MS } from './sessions.js';
import { sendPage, serveAsset } from './static.js';
import { LOGIN_SLOTS, LoginThrottle, MAX_WAITING } from './throttle.js';

const HEARTBEAT_ENV = 'OGF_BROKER_OWNER_HEARTBEAT_MS';
const SESSION_TTL_ENV = 'OGF_BROKER_OWNER_SESSION_TTL_MS';
/** How often expired sessions are ended (and their sockets closed, contract 5 v2). */
const SWEEP_MS = 1000;

/**
 * The heartbeat interval: 15 s, or `OGF_BROKER_OWNER_HEARTBEAT_MS` (100..600000) — a tuning knob for
 * slow links and for tests that prove a silent tab is dropped without waiting half a minute.
 */
function heartbeatMs(ctx: OwnerContext, env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[HEARTBEAT_ENV];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 100 && n <= 600_000) return n;
  ctx.log.log('warn', 'owner_heartbeat_ignored', {
    reason: `${HEARTBEAT_ENV} must be an integer from 100 to 600000`,
  });
  return undefined;
}

/**
 * How long a panel login lasts: 12 h, or `OGF_BROKER_OWNER_SESSION_TTL_MS` (1000..43200000) — it can only
 * shorten a session, never lengthen it; for owners who want shorter logins and for tests that watch an
 * expiry close a socket.
 */
function sessionTtlMs(ctx: OwnerContext, env: NodeJS.ProcessEnv): number {
  const raw = env[SESSION_TTL_ENV];
  if (raw === undefined || raw === '') return SESSION_TTL_MS;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 1000 && n <= SESSION_TTL_MS) return n;
  ctx.log.log('warn', 'owner_session_ttl_ignored', {
    reason: `${SESSION_TTL_ENV} must be an integer from 1000 to ${SESSION_TTL_MS}`,
  });
  return SESSION_TTL_MS;
}

/**
 * What the owner's OAuth routes (oauth/owner-routes.ts: consents and connected clients) borrow from the
 * edge: the signed-in owner (session cookie and panel key, token still current) and the panel's answers.
 */
function ownerDoor(ctx: OwnerContext, sessions: OwnerSessions): OwnerDoor {
  return {
    ownerOf(req: IncomingMessage) {
      const key = req.headers[PANEL_KEY_HEADER];
      const match = sessions.authenticate(req, typeof key === 'string' ? key : undefined);
      return match !== undefined && ctx.tokens.isCurrent(match.owner) ? match.owner.name : undefined;
    },
    isAllowedOrigin: (origin) => ctx.origins.isAllowedOrigin(origin),
    json: (req, res, status, body) => json(req, res, status, body),
    consentPage: (req, res) => sendPage(req, res, 'consent.html'),
    log: ctx.log,
  };
}

export interface OwnerEdgeOptions extends OwnerHubOptions {
  /**
   * How many login attempts may be checked or wait at once (the HTTP gate's `loginMax`): past it an
   * attempt is answered "busy", so waiting logins never fill the connections kept for the owner.
   */
  loginMax?: number;
}

/** Builds the owner edge; one hub (one broker subscription) per edge. */
export function createOwnerEdge(ctx: OwnerContext, opts: OwnerEdgeOptions = {}, env = process.env): Edge {
  const sessions = new OwnerSessions(Date.now, sessionTtlMs(ctx, env));
  const beat = opts.heartbeatMs ?? heartbeatMs(ctx, env);
  // One login gate for POST /login and bearer upgrades of /owner/ws: both try owner tokens.
  const throttle = new LoginThrottle(
    opts.loginMax === undefined
      ? {}
      : { maxWaiting: Math.min(MAX_WAITING, Math.max(0, opts.loginMax - LOGIN_SLOTS)) },
  );
  // Contract 13.3: passkeys belong to public_url's host or to localhost on the daemon's port.
  const port = () => Number(new URL(ctx.origins.url()).port);
  const passkeys = new PasskeyCeremonies(
    ctx.passkeys,
    ctx.config.public_url,
    port,
    challengeTtlMs(ctx.log, env),
  );
  const hub = new OwnerHub(
    ctx,
    sessions,
    throttle,
    passkeys,
    beat === undefined ? {} : { heartbeatMs: beat },
  );
  // Logout, expiry and eviction close that session's sockets at once (contract 5 v2).
  const unsubscribe = sessions.onEnd((handle, why) => hub.closeSession(handle, why));
  const sweep = setInterval(() => sessions.sweep(), SWEEP_MS);
  sweep.unref();
  const offFeed = ctx.tokens.onStoreChange(() => {
    try {
      const isCurrent = ctx.tokens.credentialCheck();
      const stale = (cred: OwnerCredential) => !isCurrent(cred);
      sessions.endWhere(stale, 'token rotated');
      hub.closeStale(isCurrent);
    } catch (e) {
      // A store that cannot be read now is read again at the next change; the per-frame check still holds.
      ctx.log.log('error', 'owner_revocation_poll_failed', { error: (e as Error).message });
    }
  });
  return {
    routes: [
      ...loginRoutes({ ctx, sessions, throttle }),
      ctx.oauth !== undefined
        ? oauthOwnerRoutes(ownerDoor(ctx, sessions), ctx.oauth)
        : oauthOffRoute(ownerDoor(ctx, sessions)),
      ...passkeyLoginRoutes({ ctx, sessions, throttle }, passkeys),
      pushKeyRoute(ctx),
      actRoute(ctx),
      serveAsset,
    ],
    upgrades: [hub.upgrade],
    close: () => {
      clearInterval(sweep);
      offFeed();
      unsubscribe();
      return hub.close();
    },
  };
}
