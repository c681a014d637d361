/**
 * The upgrade to the owner WebSocket `/owner/ws` (contracts.md 5): who may open it, checked in the
 * contract's order. Host (403) is checked by the daemon's HTTP server before any route; here auth (401:
 * the session cookie together with its panel key as the subprotocol `ogf-owner.<key>`, or
 * `Authorization: Bearer <owner token>`), then a browser `Origin` (403). A cookie alone is refused (v2):
 * any server on another 127.0.0.1 port receives the owner's cookies, never the key (sessions.ts).
 *
 * Named owners (contract 9): any owner's token (or session) opens the socket, as that owner. A bearer
 * token is a login attempt and goes through the login gate (throttle.ts); a session of a token rotated a
 * moment ago opens nothing.
 *
 * ```
 *  upgrade ─▶ stopping? ─yes─▶ 503
 *              │ no
 *  auth (bearer through the gate, or cookie + key)? ─no─▶ 401 (503 when the gate is busy)
 *              │ yes
 *  Origin ours (or none)? ─no─▶ 403
 *              │ yes
 *  101 with subprotocol ogf-owner ─▶ join (hub.ts)
 * ```
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { OWNER_SUBPROTOCOL, PANEL_KEY_PREFIX } from '../../common/owner-messages.js';
import type { EdgeContext, UpgradeRoute } from '../http/index.js';
import type { OwnerCredential } from '../tokens/index.js';
import { MAX_FRAME_BYTES } from './protocol.js';
import type { OwnerSessions } from './sessions.js';
import type { LoginThrottle } from './throttle.js';

export const OWNER_WS_PATH = '/owner/ws';

/** Who opened a socket: the owner's credential and, for a browser, its session's handle. */
export interface Who {
  cred: OwnerCredential;
  session?: string;
  /** Contract 13.3: the browser session was signed in with a passkey (it may add and remove passkeys). */
  viaPasskey?: boolean;
}

/** What the upgrade needs from the owner edge and its hub. */
export interface UpgradeDeps {
  ctx: EdgeContext;
  sessions: OwnerSessions;
  /** The login gate, shared with POST /login: a bearer check is a login attempt too. */
  throttle: LoginThrottle;
  /** True once the hub is closing: upgrades are refused (503). */
  closed: () => boolean;
  /** A socket that passed every check; called in the same turn as its 101. */
  join: (ws: WebSocket, who: Who, req: IncomingMessage) => void;
}

function refuseUpgrade(socket: Duplex, status: 401 | 403 | 503, message: string): void {
  const text = { 401: 'Unauthorized', 403: 'Forbidden', 503: 'Service Unavailable' }[status];
  const body = `${message}\n`;
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The panel key a browser offers as the subprotocol `ogf-owner.<key>`, or undefined. */
function panelKey(req: IncomingMessage): string | undefined {
  const offered = req.headers['sec-websocket-protocol'];
  if (offered === undefined) return undefined;
  for (const p of offered.split(',')) {
    const name = p.trim();
    if (name.startsWith(PANEL_KEY_PREFIX)) return name.slice(PANEL_KEY_PREFIX.length);
  }
  return undefined;
}

/**
 * Selects the bare `ogf-owner`, and nothing else: the 101 must never echo `ogf-owner.<key>` (a proxy in
 * front of public_url may log response headers). A client offering only the keyed name gets no subprotocol.
 */
function selectProtocol(offered: Set<string>): string | false {
  return offered.has(OWNER_SUBPROTOCOL) ? OWNER_SUBPROTOCOL : false;
}

/**
 * The token of an `Authorization` header: undefined without the header, '' when it is not `Bearer <token>`
 * (a malformed header counts as a wrong token, never as none: the caller meant the token, and a wrong
 * bearer is refused even alongside a valid cookie).
 */
function bearerToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (auth === undefined) return undefined;
  return /^Bearer\s+(\S{1,512})\s*$/i.exec(auth)?.[1] ?? '';
}

/** The `/owner/ws` upgrade route and the WebSocket server it hands sockets from. */
export class OwnerUpgrade {
  readonly #d: UpgradeDeps;
  readonly #wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    clientTracking: false,
    handleProtocols: selectProtocol,
  });

  constructor(deps: UpgradeDeps) {
    this.#d = deps;
  }

  /** The `/owner/ws` upgrade route. */
  readonly route: UpgradeRoute = (req, socket, head, url) => {
    if (url.pathname !== OWNER_WS_PATH) return false;
    if (this.#d.closed()) {
      refuseUpgrade(socket, 503, 'the daemon is stopping');
      return true;
    }
    const bearer = bearerToken(req);
    if (bearer !== undefined) {
      this.#bearer(req, socket, head, bearer);
      return true;
    }
    const who = this.#authenticate(req);
    if (who === undefined) {
      refuseUpgrade(
        socket,
        401,
        'owner WebSocket: send the session cookie with its panel key as the subprotocol ogf-owner.<key> (log in at /login), or Authorization: Bearer <owner token>',
      );
      return true;
    }
    this.#finish(req, socket, head, who);
    return true;
  };

  /**
   * The owner token guessed over the socket goes through the same gate as POST /login (contract 5: at most
   * 4 checked at a time, a wrong one answered after 1 s), or /owner/ws would be a free oracle.
   */
  #bearer(req: IncomingMessage, socket: Duplex, head: Buffer, bearer: string): void {
    const { ctx } = this.#d;
    const gone = new AbortController();
    socket.once('close', () => gone.abort());
    let cred: OwnerCredential | undefined;
    void this.#d.throttle
      .attempt(() => {
        cred = bearer === '' ? undefined : ctx.tokens.ownerByToken(bearer);
        if (cred !== undefined) return true;
        ctx.broker.audit({
          at: new Date().toISOString(),
          actor: { kind: 'owner', name: 'owner:terminal' },
          action: 'owner_login_refused',
          detail: { address: req.socket.remoteAddress ?? 'unknown', via: 'bearer' },
        });
        ctx.log.log('warn', 'owner_login_refused', {
          address: req.socket.remoteAddress,
          via: 'bearer',
        });
        return false;
      }, gone.signal)
      .then(
        (outcome) => {
          if (outcome === 'gone' || socket.destroyed) return;
          if (outcome === 'busy') refuseUpgrade(socket, 503, 'owner WebSocket: busy checking other attempts');
          else if (outcome === 'refused') refuseUpgrade(socket, 401, 'owner WebSocket: wrong owner token');
          else if (cred !== undefined) this.#finish(req, socket, head, { cred });
        },
        (e: unknown) => {
          ctx.log.log('error', 'owner_upgrade_failed', { error: (e as Error).message });
          socket.destroy();
        },
      );
  }

  /** Who connects and, for a browser, its session; undefined → 401. */
  #authenticate(req: IncomingMessage): Who | undefined {
    // Cookie and key of the same session, never the cookie alone (contract 5 v2).
    const match = this.#d.sessions.authenticate(req, panelKey(req));
    if (match === undefined) return undefined;
    // A session of a token rotated a moment ago (before the edge's poll ended it) opens nothing.
    if (!this.#d.ctx.tokens.isCurrent(match.owner)) return undefined;
    return { cred: match.owner, session: match.handle, viaPasskey: match.via === 'passkey' };
  }

  /** After auth: a browser `Origin` must be ours (403), then the socket joins (order of contract 5). */
  #finish(req: IncomingMessage, socket: Duplex, head: Buffer, who: Who): void {
    if (this.#d.closed()) {
      refuseUpgrade(socket, 503, 'the daemon is stopping');
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.#d.ctx.origins.isAllowedOrigin(origin)) {
      refuseUpgrade(socket, 403, 'owner WebSocket: Origin is not one of the daemon’s own origins');
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#d.join(ws, who, req));
  }

  /** Stops the WebSocket server (the sockets themselves are the hub's to close). */
  close(): Promise<void> {
    return new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}
