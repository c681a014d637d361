/**
 * The owner WebSocket `/owner/ws` (contracts.md 5): the hub owns its lifecycle. It admits each socket the
 * upgrade let through (upgrade.ts), greets it with `hello` + `snapshot`, fans every committed change out to
 * every owner in commit order (fanout.ts), hands each frame to actions.ts, pings (heartbeat.ts), and closes
 * every socket when the daemon stops. Who is connected, and how a socket leaves when its session ends or
 * its token is rotated, is registry.ts.
 *
 * Commit order: one broker subscription per hub (one serialisation per change, not one per socket), called
 * synchronously after each commit; a new socket gets its snapshot in the same turn it joins the registry,
 * so no change can fall between a snapshot and the first upsert.
 * Anything that still throws while serving one owner closes that owner's socket (1011) and is logged: this
 * runs from the HTTP server's upgrade event and from socket events, where a throw would end the process.
 *
 * ```
 *  upgrade ─▶ auth? ─no─▶ 401     message ─▶ parse ─bad─▶ reply BadMessage (socket stays open)
 *              │ yes                            │ ok
 *  Origin ok? ─no─▶ 403                         ▼
 *              │ yes                 broker.approve/deny/reconcile ─▶ (upserts to all) ─▶ reply
 *  hello, snapshot, then upserts     broker.history ─▶ history
 * ```
 */
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { PROTOCOL } from '../../common/owner-messages.js';
import type { UpgradeRoute } from '../http/index.js';
import type { OwnerCredential } from '../tokens/index.js';
import { onOwnerFrame } from './actions.js';
import { FanOut } from './fanout.js';
import { startHeartbeat, watchPongs } from './heartbeat.js';
import type { PasskeyCeremonies } from './passkey-ceremonies.js';
import { type Owner, OwnerRegistry } from './registry.js';
import type { OwnerSessions, SessionEnd } from './sessions.js';
import { type OwnerContext, watchSetup } from './setup.js';
import type { LoginThrottle } from './throttle.js';
import { OwnerUpgrade, type Who } from './upgrade.js';

/** Final commands in the snapshot besides every non-final one (contract 5). */
const SNAPSHOT_FINAL = 200;

export interface OwnerHubOptions {
  /** How often to ping; an owner that did not answer the previous ping is terminated. */
  heartbeatMs?: number;
}

export class OwnerHub {
  readonly #ctx: OwnerContext;
  readonly #owners: OwnerRegistry;
  readonly #out: FanOut;
  readonly #upgrade: OwnerUpgrade;
  /** The `/owner/ws` upgrade route. */
  readonly upgrade: UpgradeRoute;
  readonly #unsubscribe: () => void;
  readonly #stopHeartbeat: () => void;
  readonly #passkeys: PasskeyCeremonies;
  #closed = false;

  constructor(
    ctx: OwnerContext,
    sessions: OwnerSessions,
    throttle: LoginThrottle,
    passkeys: PasskeyCeremonies,
    opts: OwnerHubOptions = {},
  ) {
    this.#ctx = ctx;
    this.#passkeys = passkeys;
    this.#owners = new OwnerRegistry(ctx.log);
    const closed = () => this.#closed;
    this.#out = new FanOut(this.#owners, ctx.log, closed);
    this.#upgrade = new OwnerUpgrade({
      ctx,
      sessions,
      throttle,
      closed,
      join: (ws, who, req) => this.#join(ws, who, req),
    });
    this.upgrade = this.#upgrade.route;
    // One subscription per hub, fanned out to every socket (not one per socket): one serialisation per change.
    const offCommands = ctx.broker.subscribe((command) => this.#out.command(command));
    const offGrants = ctx.broker.subscribeGrants((grant) =>
      this.#out.text(JSON.stringify({ type: 'grant_upsert', grant })),
    );
    // Issue 19: the first-run help follows upstream state (an upstream connects after start).
    const offSetup = ctx.setup ? watchSetup(ctx.setup, (text) => this.#out.text(text)) : () => {};
    this.#unsubscribe = () => {
      offCommands();
      offGrants();
      offSetup();
    };
    this.#stopHeartbeat = startHeartbeat(this.#owners, ctx.log, opts.heartbeatMs);
  }

  /** Number of connected owners (status, tests). */
  get size(): number {
    return this.#owners.size;
  }

  /** Closes every socket of a browser session that ended (registry.ts; contract 5 v2). */
  closeSession(session: string, why: SessionEnd): void {
    this.#owners.closeSession(session, why);
  }

  /** Closes every socket whose owner's token was rotated since it opened (registry.ts; contract 5 v2). */
  closeStale(isCurrent: (cred: OwnerCredential) => boolean): void {
    this.#owners.closeStale(isCurrent);
  }

  #join(ws: WebSocket, who: Who, req: IncomingMessage): void {
    if (who.session !== undefined) this.#owners.track(who.session, ws);
    const owner: Owner = {
      ws,
      cred: who.cred,
      by: who.cred.name,
      alive: true,
      allowance: 0,
      viaPasskey: who.viaPasskey === true,
    };
    if (req.headers.origin !== undefined) owner.origin = req.headers.origin;
    const ua = req.headers['user-agent'];
    if (typeof ua === 'string' && ua !== '') owner.userAgent = ua.slice(0, 200);
    try {
      this.#greet(owner, req);
    } catch (e) {
      // Called from the HTTP server's upgrade event: a throw here would end the process (contract 5).
      this.#owners.drop(owner, 'owner_join_failed', e);
    }
  }

  #greet(owner: Owner, req: IncomingMessage): void {
    const { ws, by } = owner;
    this.#owners.add(owner);
    this.#ctx.log.log('info', 'owner_connected', {
      by,
      address: req.socket.remoteAddress,
      owners: this.#owners.size,
    });
    watchPongs(owner);
    const deps = { ctx: this.#ctx, owners: this.#owners, out: this.#out, passkeys: this.#passkeys };
    ws.on('message', (data, isBinary) => {
      try {
        onOwnerFrame(deps, owner, data as Buffer, isBinary);
      } catch (e) {
        this.#owners.drop(owner, 'owner_message_failed', e);
      }
    });
    // ws emits 'error' before closing with 1009 on an oversized frame; the close itself is what matters.
    ws.on('error', () => {});
    ws.on('close', () => {
      this.#owners.delete(owner);
      this.#ctx.log.log('info', 'owner_disconnected', { by, owners: this.#owners.size });
    });
    // Same turn as joining the fan-out set: nothing can commit in between (see the module comment).
    this.#out.send(owner, {
      type: 'hello',
      protocol: PROTOCOL,
      server_time: new Date().toISOString(),
      owner: owner.cred.name,
      ...(owner.origin === undefined ? {} : { signed_in_with: owner.viaPasskey ? 'passkey' : 'token' }),
      ...(this.#ctx.setup ? { setup: this.#ctx.setup.current() } : {}),
    });
    // The same bytes as JSON.stringify({type, commands: views}), from each View's cached text (view.ts).
    this.#out.sendViews(
      owner,
      '{"type":"snapshot","commands":[',
      this.#ctx.broker.snapshot(SNAPSHOT_FINAL),
      `],"grants":${JSON.stringify(this.#ctx.broker.liveGrants())}}`,
    );
  }

  /** Stops the heartbeat, leaves the broker, and closes every owner socket (1001). Twice is harmless. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopHeartbeat();
    this.#unsubscribe();
    for (const owner of this.#owners) owner.ws.close(1001, 'daemon stopping');
    const pending = [...this.#owners].map(
      (o) =>
        new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            o.ws.terminate();
            resolve();
          }, 1000);
          o.ws.once('close', () => {
            clearTimeout(t);
            resolve();
          });
        }),
    );
    await Promise.all(pending);
    await this.#upgrade.close();
  }
}
