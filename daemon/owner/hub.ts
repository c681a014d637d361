/**
 * The owner WebSocket `/owner/ws` (contracts.md 5): authenticates the upgrade, greets each owner with
 * `hello` + `snapshot`, fans every committed change out as `upsert` to every owner in commit order, and
 * maps `approve` / `deny` / `reconcile` / `history` onto the broker.
 *
 * Order on the upgrade (contract 5): Host (403) is checked by the daemon's HTTP server before any route;
 * here auth (401: the session cookie together with its panel key as the subprotocol `ogf-owner.<key>`, or
 * `Authorization: Bearer <owner token>`), then a browser `Origin` (403). A cookie alone is refused (v2):
 * any server on another 127.0.0.1 port receives the owner's cookies, never the key (sessions.ts). A
 * session's sockets are closed the moment it ends (logout, expiry, rotation: `closeSession`).
 *
 * Named owners (contract 9): any owner's token (or session) opens the socket; `hello.owner` is that
 * owner's name and every decision is recorded under it (`decided_by`, the audit actor). Each socket keeps
 * the credential it was opened with; a rotation of that owner's token (made by `ogf-broker token` in
 * another process) closes it (`closeStale`, called by the owner edge's poll), and every frame is checked
 * against the store first, so nothing a socket sends is acted on after its token was replaced.
 *
 * Commit order: the broker calls our one subscription synchronously after each commit, and a new socket
 * gets its snapshot synchronously in the same turn it joins the fan-out set, so no change can fall between
 * a snapshot and the first upsert. A socket that cannot keep up (send buffer past a bound) is cut rather
 * than silently skipped: its tab reconnects and resyncs from a fresh snapshot, so it misses nothing.
 *
 * No content and no frame size can stop the daemon (contract 5, v2). A snapshot or history is one message
 * sent in fragments of about FRAGMENT_BYTES, each encoded from the Views' cached text (fragments.ts), so
 * no string larger than one View is ever made (the whole snapshot used to be one string: past V8's string
 * limit its RangeError escaped the upgrade callback and killed the daemon, at every owner connect, restart
 * or not).
 * Anything that still throws while serving one owner closes that owner's socket (1011) and is logged.
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
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { ActionResult, EdgeContext, GrantResult, GrantSpec, UpgradeRoute } from '../context.js';
import type { Command } from '../core/lifecycle.js';
import { viewJson } from '../core/view.js';
import type { OwnerCredential } from '../tokens.js';
import { argsAnswer } from './args-frame.js';
import { FragmentPool, FragmentWriter } from './fragments.js';
import {
  OWNER_SUBPROTOCOL,
  PANEL_KEY_PREFIX,
  PROTOCOL,
  type ReplyCode,
  type ServerMessage,
} from './messages.js';
import { type ClientFrame, HISTORY_DEFAULT, MAX_FRAME_BYTES, parseClientFrame } from './protocol.js';
import type { OwnerSessions, SessionEnd } from './sessions.js';
import { watchSetup } from './setup.js';
import type { LoginThrottle } from './throttle.js';

export const OWNER_WS_PATH = '/owner/ws';
/** `grant list --all`: the newest this many grants in any state. */
const GRANTS_ALL_MAX = 1000;
/** Final commands in the snapshot besides every non-final one (contract 5). */
const SNAPSHOT_FINAL = 200;
/**
 * A socket with this much unsent data besides its snapshot (or largest history) is too slow to follow; it
 * is cut and resyncs on reconnect. Counted on top of what the snapshot left queued, so a healthy tab is
 * never cut for having been sent a big snapshot: with full PENDING caps that may be hundreds of MiB
 * (the worst case is computed in test/attack-flood.test.ts), and a flood of upserts may follow at once.
 */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

interface Owner {
  ws: WebSocket;
  /** Who this is (contract 9): the owner's name, recorded by the broker as `by`, and its token's hash. */
  cred: OwnerCredential;
  /** The owner's name: who decides, as the broker records it. Never a token. */
  by: string;
  alive: boolean;
  /** Bytes the daemon itself queued in one go (the snapshot, a history), allowed on top of MAX_BUFFERED_BYTES. */
  allowance: number;
}

export interface OwnerHubOptions {
  /** How often to ping; an owner that did not answer the previous ping is terminated. */
  heartbeatMs?: number;
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

export class OwnerHub {
  readonly #ctx: EdgeContext;
  readonly #sessions: OwnerSessions;
  /** The login gate, shared with POST /login: a bearer check is a login attempt too. */
  readonly #throttle: LoginThrottle;
  readonly #wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    clientTracking: false,
    handleProtocols: selectProtocol,
  });
  readonly #owners = new Set<Owner>();
  /** The buffers snapshots and histories are encoded into, reused once each socket has written them. */
  readonly #fragments = new FragmentPool();
  /** The open sockets of each browser session (by session handle), closed when the session ends. */
  readonly #bySession = new Map<string, Set<WebSocket>>();
  readonly #unsubscribe: () => void;
  readonly #heartbeat: NodeJS.Timeout;
  #closed = false;

  constructor(
    ctx: EdgeContext,
    sessions: OwnerSessions,
    throttle: LoginThrottle,
    opts: OwnerHubOptions = {},
  ) {
    this.#ctx = ctx;
    this.#sessions = sessions;
    this.#throttle = throttle;
    // One subscription per hub, fanned out to every socket (not one per socket): one serialisation per change.
    const offCommands = ctx.broker.subscribe((command) => this.#fanOut(command));
    const offGrants = ctx.broker.subscribeGrants((grant) =>
      this.#fanOutText(JSON.stringify({ type: 'grant_upsert', grant })),
    );
    // Issue 19: the first-run help follows upstream state (an upstream connects after start).
    const offSetup = ctx.setup ? watchSetup(ctx.setup, (text) => this.#fanOutText(text)) : () => {};
    this.#unsubscribe = () => {
      offCommands();
      offGrants();
      offSetup();
    };
    this.#heartbeat = setInterval(() => this.#beat(), opts.heartbeatMs ?? 15_000);
    this.#heartbeat.unref();
  }

  /** The `/owner/ws` upgrade route. */
  readonly upgrade: UpgradeRoute = (req, socket, head, url) => {
    if (url.pathname !== OWNER_WS_PATH) return false;
    if (this.#closed) {
      refuseUpgrade(socket, 503, 'the daemon is stopping');
      return true;
    }
    const bearer = bearerToken(req);
    if (bearer !== undefined) {
      // The owner token guessed over the socket goes through the same gate as POST /login (contract 5:
      // at most 4 checked at a time, a wrong one answered after 1 s), or /owner/ws would be a free oracle.
      const gone = new AbortController();
      socket.once('close', () => gone.abort());
      let cred: OwnerCredential | undefined;
      void this.#throttle
        .attempt(() => {
          cred = bearer === '' ? undefined : this.#ctx.tokens.ownerByToken(bearer);
          if (cred !== undefined) return true;
          this.#ctx.broker.audit({
            at: new Date().toISOString(),
            actor: { kind: 'owner', name: 'owner:terminal' },
            action: 'owner_login_refused',
            detail: { address: req.socket.remoteAddress ?? 'unknown', via: 'bearer' },
          });
          this.#ctx.log.log('warn', 'owner_login_refused', {
            address: req.socket.remoteAddress,
            via: 'bearer',
          });
          return false;
        }, gone.signal)
        .then(
          (outcome) => {
            if (outcome === 'gone' || socket.destroyed) return;
            if (outcome === 'busy')
              refuseUpgrade(socket, 503, 'owner WebSocket: busy checking other attempts');
            else if (outcome === 'refused') refuseUpgrade(socket, 401, 'owner WebSocket: wrong owner token');
            else if (cred !== undefined) this.#finishUpgrade(req, socket, head, { cred });
          },
          (e: unknown) => {
            this.#ctx.log.log('error', 'owner_upgrade_failed', { error: (e as Error).message });
            socket.destroy();
          },
        );
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
    this.#finishUpgrade(req, socket, head, who);
    return true;
  };

  /** After auth: a browser `Origin` must be ours (403), then the socket joins (order of contract 5). */
  #finishUpgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    who: { cred: OwnerCredential; session?: string },
  ): void {
    if (this.#closed) {
      refuseUpgrade(socket, 503, 'the daemon is stopping');
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.#ctx.origins.isAllowedOrigin(origin)) {
      refuseUpgrade(socket, 403, 'owner WebSocket: Origin is not one of the daemon’s own origins');
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      if (who.session !== undefined) this.#track(who.session, ws);
      this.#join(ws, who.cred, req);
    });
  }

  /** Number of connected owners (status, tests). */
  get size(): number {
    return this.#owners.size;
  }

  /** Who connects and, for a browser, its session; undefined → 401. */
  #authenticate(req: IncomingMessage): { cred: OwnerCredential; session: string } | undefined {
    // Cookie and key of the same session, never the cookie alone (contract 5 v2).
    const match = this.#sessions.authenticate(req, panelKey(req));
    if (match === undefined) return undefined;
    // A session of a token rotated a moment ago (before the edge's poll ended it) opens nothing.
    if (!this.#ctx.tokens.isCurrent(match.owner)) return undefined;
    return { cred: match.owner, session: match.handle };
  }

  #track(session: string, ws: WebSocket): void {
    const open = this.#bySession.get(session) ?? new Set<WebSocket>();
    this.#bySession.set(session, open);
    open.add(ws);
    ws.once('close', () => {
      open.delete(ws);
      if (open.size === 0 && this.#bySession.get(session) === open) this.#bySession.delete(session);
    });
  }

  /**
   * Closes every socket of a browser session that ended (logout, expiry; contract 5 v2), at once: from
   * this moment they get no upsert and nothing they send is acted on, and they are told why (1008).
   */
  closeSession(session: string, why: SessionEnd): void {
    const open = this.#bySession.get(session);
    if (open === undefined) return;
    this.#bySession.delete(session);
    for (const owner of this.#owners) {
      if (!open.has(owner.ws)) continue;
      this.#owners.delete(owner);
      owner.ws.removeAllListeners('message');
      owner.ws.close(1008, why);
    }
    this.#ctx.log.log('info', 'owner_session_closed', { why, sockets: open.size });
  }

  /**
   * Closes every socket, Bearer ones included, whose owner's token was rotated since it opened (contract 5
   * v2: "rotating an owner's token closes every socket and panel session of that owner"); `isCurrent`
   * says whether a credential is still its owner's. Other owners' sockets are untouched.
   */
  closeStale(isCurrent: (cred: OwnerCredential) => boolean): void {
    for (const owner of this.#owners) if (!isCurrent(owner.cred)) this.#revoke(owner);
  }

  /** Closes one socket whose token was rotated: no more upserts, nothing it sends acted on (1008). */
  #revoke(owner: Owner): void {
    this.#owners.delete(owner);
    owner.ws.removeAllListeners('message');
    owner.ws.close(1008, 'token rotated');
    this.#ctx.log.log('info', 'owner_token_revoked', { owner: owner.by });
  }

  #join(ws: WebSocket, cred: OwnerCredential, req: IncomingMessage): void {
    const owner: Owner = { ws, cred, by: cred.name, alive: true, allowance: 0 };
    try {
      this.#greet(owner, req);
    } catch (e) {
      // Called from the HTTP server's upgrade event: a throw here would end the process (contract 5).
      this.#drop(owner, 'owner_join_failed', e);
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
    ws.on('pong', () => {
      owner.alive = true;
    });
    ws.on('message', (data, isBinary) => {
      try {
        this.#onMessage(owner, data as Buffer, isBinary);
      } catch (e) {
        this.#drop(owner, 'owner_message_failed', e);
      }
    });
    // ws emits 'error' before closing with 1009 on an oversized frame; the close itself is what matters.
    ws.on('error', () => {});
    ws.on('close', () => {
      this.#owners.delete(owner);
      this.#ctx.log.log('info', 'owner_disconnected', { by, owners: this.#owners.size });
    });
    // Same turn as joining the fan-out set: nothing can commit in between (see the module comment).
    this.#send(owner, {
      type: 'hello',
      protocol: PROTOCOL,
      server_time: new Date().toISOString(),
      owner: owner.cred.name,
      ...(this.#ctx.setup ? { setup: this.#ctx.setup.current() } : {}),
    });
    // The same bytes as JSON.stringify({type, commands: views}), from each View's cached text (view.ts).
    this.#sendViews(
      owner,
      '{"type":"snapshot","commands":[',
      this.#ctx.broker.snapshot(SNAPSHOT_FINAL),
      `],"grants":${JSON.stringify(this.#ctx.broker.liveGrants())}}`,
    );
  }

  /** Logs what went wrong serving one owner and closes that owner's socket only (1011: reconnect). */
  #drop(owner: Owner, event: string, e: unknown): void {
    this.#ctx.log.log('error', event, { by: owner.by, error: (e as Error)?.message ?? String(e) });
    try {
      owner.ws.close(1011, 'internal error; reconnect to resync');
    } catch {
      owner.ws.terminate();
    }
  }

  /**
   * Sends `head` + the commands' Views joined by commas + `tail` as one text message, in fragments of
   * about FRAGMENT_BYTES (RFC 6455 5.4; browsers and ws reassemble them) encoded straight from each
   * View's cached text into pooled buffers (fragments.ts; ws calls back once a fragment is written or
   * dropped), so its size is bounded by memory, not by the longest string V8 can make. Synchronous, so
   * nothing interleaves with the fragments.
   */
  #sendViews(owner: Owner, head: string, commands: readonly Command[], tail: string): void {
    const ws = owner.ws;
    if (!this.#canSend(owner)) return;
    // binary: false: a Buffer is sent as a text frame only when told so (contract 5: JSON text frames).
    const out = new FragmentWriter(
      (bytes, fin, done) => ws.send(bytes, { binary: false, fin }, done),
      this.#fragments,
    );
    out.write(head);
    commands.forEach((c, i) => {
      out.write(viewJson(c), i > 0);
    });
    out.end(tail);
    owner.allowance = Math.max(owner.allowance, ws.bufferedAmount);
  }

  #send(owner: Owner, message: ServerMessage): void {
    this.#sendText(owner, JSON.stringify(message));
  }

  #sendText(owner: Owner, text: string): void {
    if (this.#canSend(owner)) owner.ws.send(text);
  }

  /** False when the socket is closed, or too slow to follow (then it is cut, see MAX_BUFFERED_BYTES). */
  #canSend(owner: Owner): boolean {
    if (owner.ws.readyState !== owner.ws.OPEN) return false;
    if (owner.ws.bufferedAmount > MAX_BUFFERED_BYTES + owner.allowance) {
      this.#ctx.log.log('warn', 'owner_too_slow', { by: owner.by });
      owner.ws.terminate();
      return false;
    }
    return true;
  }

  #fanOut(command: Command): void {
    if (this.#closed) return;
    let text: string;
    try {
      text = `{"type":"upsert","command":${viewJson(command)}}`;
    } catch (e) {
      // Called inside the broker right after its commit: never throw back into it. Every owner would miss
      // this change, so every owner resyncs.
      for (const owner of this.#owners) this.#drop(owner, 'owner_fanout_failed', e);
      return;
    }
    this.#fanOutText(text);
  }

  #fanOutText(text: string): void {
    if (this.#closed) return;
    for (const owner of this.#owners) {
      try {
        this.#sendText(owner, text);
      } catch (e) {
        this.#drop(owner, 'owner_send_failed', e);
      }
    }
  }

  #beat(): void {
    for (const owner of this.#owners) {
      if (!owner.alive) {
        this.#ctx.log.log('info', 'owner_heartbeat_lost', { by: owner.by });
        owner.ws.terminate();
        continue;
      }
      owner.alive = false;
      owner.ws.ping();
    }
  }

  #reply(
    owner: Owner,
    reqId: string | null,
    r: ActionResult | GrantResult | { ok: false; code: ReplyCode; message: string },
  ) {
    if (r.ok) {
      const grant = 'grant' in r ? r.grant : undefined;
      this.#send(owner, { type: 'reply', req_id: reqId, ok: true, ...(grant ? { grant } : {}) });
    } else
      this.#send(owner, {
        type: 'reply',
        req_id: reqId,
        ok: false,
        error: { code: r.code as ReplyCode, message: r.message },
      });
  }

  #onMessage(owner: Owner, data: Buffer, isBinary: boolean): void {
    // Re-checked on every frame: a rotation in another process may not have been polled yet.
    if (!this.#ctx.tokens.isCurrent(owner.cred)) {
      this.#revoke(owner);
      return;
    }
    if (isBinary) {
      this.#reply(owner, null, {
        ok: false,
        code: 'BadMessage',
        message: 'frames must be JSON text, got a binary frame',
      });
      return;
    }
    const parsed = parseClientFrame(data.toString('utf8'));
    if (!parsed.ok) {
      this.#reply(owner, parsed.req_id, { ok: false, code: 'BadMessage', message: parsed.message });
      return;
    }
    this.#act(owner, parsed.frame).catch((e: unknown) => {
      // A broker failure (e.g. the disk) is not the owner's mistake: say so and let the tab resync.
      this.#ctx.log.log('error', 'owner_action_failed', {
        type: parsed.frame.type,
        error: (e as Error).message,
      });
      owner.ws.close(1011, 'internal error; reconnect to resync');
    });
  }

  /** Replies after the broker's commit, so the acting owner hears the upsert before its reply. */
  async #act(owner: Owner, f: ClientFrame): Promise<void> {
    const broker = this.#ctx.broker;
    switch (f.type) {
      case 'approve':
        this.#reply(owner, f.req_id, await broker.approve(f.id, f.version, owner.by, f.grant));
        return;
      case 'grant': {
        const spec: GrantSpec = { command: f.command, client: f.client, ttl_s: f.ttl_s };
        if (f.args !== undefined) spec.args = f.args;
        if (f.uses !== undefined) spec.uses = f.uses;
        if (f.note !== undefined) spec.note = f.note;
        this.#reply(owner, f.req_id, await broker.grant(spec, owner.by));
        return;
      }
      case 'revoke':
        this.#reply(owner, f.req_id, await broker.revoke(f.grant_id, owner.by));
        return;
      case 'grants':
        this.#send(owner, {
          type: 'grants',
          req_id: f.req_id,
          grants: f.all === true ? broker.recentGrants(GRANTS_ALL_MAX) : broker.liveGrants(),
        });
        return;
      case 'deny':
        this.#reply(owner, f.req_id, await broker.deny(f.id, f.version, owner.by, f.note));
        return;
      case 'reconcile':
        this.#reply(owner, f.req_id, await broker.reconcile(f.id, f.outcome, owner.by, f.note));
        return;
      case 'args':
        this.#sendText(owner, argsAnswer(broker, f));
        return;
      case 'history':
        this.#sendViews(
          owner,
          `{"type":"history","req_id":${JSON.stringify(f.req_id)},"commands":[`,
          broker.history(f.limit ?? HISTORY_DEFAULT, f.before),
          ']}',
        );
        return;
    }
  }

  /** Stops the heartbeat, leaves the broker, and closes every owner socket (1001). Twice is harmless. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
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
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}
