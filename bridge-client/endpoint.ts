/**
 * The app side of `ogf-bridge/1` (contracts.md 6) for avatar apps written in JS/TS: issues and rotates
 * the session UUID, compares it in constant time, answers `welcome` with its `ready` flag, applies each
 * `cue_id` at most once (a repeat gets the first ack with `duplicate: true`), refuses a cue past its
 * `deliver_by` (`Expired`), keeps a bounded queue (`Busy` when full) and returns the avatar to neutral
 * after `ttl_ms`. The app renders `state` and listens to `onChange`.
 *
 * ```ts
 * const endpoint = new BridgeEndpoint({ apply: (cue) => renderer.play(cue) });
 * server.on('upgrade', (req, socket, head) => endpoint.handleUpgrade(req, socket, head));
 * showInBridgePanel(endpoint.sessionId);
 * ```
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { MAX_FRAME_BYTES, type NackCode, PROTOCOL } from '../common/ogf-bridge.js';
import {
  type AppliedCue,
  type AvatarState,
  applyCue,
  NEUTRAL,
  nextChangeAt,
  settle,
} from './avatar-state.js';
import { type CueFrame, cueFrame, helloFrame } from './protocol.js';

/** What the endpoint tells an observer (logs, tests). Never carries a session UUID. */
export type EndpointEvent =
  | { type: 'open'; conn: number }
  | { type: 'welcome'; conn: number; ready: boolean }
  | { type: 'refused'; conn: number; code: 'SessionUnknown' | 'ProtocolUnsupported' }
  | { type: 'cue'; conn: number; cue_id: string; outcome: 'applied' | 'duplicate' | NackCode }
  | { type: 'close'; conn: number };

export interface BridgeEndpointOptions {
  /** The initial session UUID; a fresh random one when absent. */
  sessionId?: string;
  /** Sent in `welcome`; a fresh random one when absent. */
  instanceId?: string;
  ready?: boolean;
  /** Cues waiting behind the one being applied; one more gets `Busy`. Default 8. */
  queueLimit?: number;
  /** Called for every cue being applied, after `state` changed; the ack waits for it. */
  apply?: (cue: AppliedCue) => void | Promise<void>;
  onEvent?: (event: EndpointEvent) => void;
  /** A connection that sends no valid hello within this time is closed. Default 10 s. */
  helloTimeoutMs?: number;
  /** How many acknowledged cue_ids are remembered for at-most-once. Default 4096. */
  rememberCues?: number;
  now?: () => number;
}

type Ack = { applied_at: string };
interface Queued {
  frame: CueFrame;
  done: (result: Ack | { nack: NackCode; message: string }) => void;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** An `ogf-bridge/1` endpoint: mount `handleUpgrade` on the app's HTTP server at its bridge path. */
export class BridgeEndpoint {
  readonly instanceId: string;
  #sessionDigest: Buffer;
  #sessionId: string;
  #ready: boolean;
  #state: AvatarState = NEUTRAL;
  #timer: NodeJS.Timeout | undefined;
  #queue: Queued[] = [];
  #busy = false;
  #acks = new Map<string, Promise<Ack | undefined>>();
  #listeners = new Set<() => void>();
  #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  #conns = new Set<WebSocket>();
  #nextConn = 1;
  #closed = false;
  #opts: BridgeEndpointOptions;
  #now: () => number;

  constructor(opts: BridgeEndpointOptions = {}) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.instanceId = opts.instanceId ?? randomUUID();
    this.#sessionId = (opts.sessionId ?? randomUUID()).toLowerCase();
    this.#sessionDigest = digest(this.#sessionId);
    this.#ready = opts.ready ?? true;
  }

  /** The current session UUID, to show in the app's Bridge panel (and nowhere else). */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** Issues a new session UUID; the old one stops working at once and open connections are closed. */
  rotate(): string {
    this.#sessionId = randomUUID();
    this.#sessionDigest = digest(this.#sessionId);
    for (const ws of this.#conns) ws.close(1008, 'session rotated');
    this.#changed();
    return this.#sessionId;
  }

  get ready(): boolean {
    return this.#ready;
  }
  set ready(value: boolean) {
    this.#ready = value;
    this.#changed();
  }

  /** What the avatar shows now. */
  get state(): AvatarState {
    return settle(this.#state, this.#now());
  }

  /** Called after any change of state, session or readiness. Returns unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Takes over an HTTP upgrade aimed at the bridge path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#serve(ws));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const ws of this.#conns) ws.terminate();
    for (const q of this.#queue.splice(0))
      q.done({ nack: 'Busy', message: 'the avatar app is shutting down' });
    await new Promise<void>((r) => this.#wss.close(() => r()));
  }

  #emit(event: EndpointEvent): void {
    this.#opts.onEvent?.(event);
  }

  #changed(): void {
    for (const l of this.#listeners) l();
  }

  #sameSession(candidate: string): boolean {
    // Hash both sides so the compare is constant-time over equal lengths whatever was sent (contract 6).
    return timingSafeEqual(digest(candidate.toLowerCase()), this.#sessionDigest);
  }

  #serve(ws: WebSocket): void {
    const conn = this.#nextConn++;
    this.#conns.add(ws);
    this.#emit({ type: 'open', conn });
    let welcomed = false;
    // Until hello: helloTimeoutMs. After welcome a bridge client sends its cue at once; an idle
    // connection is closed after a minute so a stuck peer cannot hold resources forever.
    let helloTimer = setTimeout(() => ws.close(1008, 'no hello'), this.#opts.helloTimeoutMs ?? 10_000);
    const idle = () => {
      clearTimeout(helloTimer);
      helloTimer = setTimeout(() => ws.close(1000, 'idle'), 60_000);
    };
    const send = (frame: object) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
    };
    const refuse = (code: 'SessionUnknown' | 'ProtocolUnsupported', message: string) => {
      this.#emit({ type: 'refused', conn, code });
      send({ type: 'error', code, message });
      ws.close(1008, code);
    };
    ws.on('close', () => {
      clearTimeout(helloTimer);
      this.#conns.delete(ws);
      this.#emit({ type: 'close', conn });
    });
    ws.on('error', () => ws.terminate());
    ws.on('message', (data, isBinary) => {
      let raw: unknown;
      try {
        raw = isBinary ? undefined : JSON.parse(data.toString());
      } catch {
        raw = undefined;
      }
      idle();
      if (!welcomed) {
        const hello = helloFrame.safeParse(raw);
        if (!hello.success) return refuse('ProtocolUnsupported', `expected a hello frame of ${PROTOCOL}`);
        if (hello.data.protocol !== PROTOCOL) {
          return refuse('ProtocolUnsupported', `this app speaks ${PROTOCOL} only`);
        }
        if (!this.#sameSession(hello.data.session_id)) {
          return refuse('SessionUnknown', 'this session is not the one shown in the Bridge panel');
        }
        welcomed = true;
        this.#emit({ type: 'welcome', conn, ready: this.#ready });
        send({ type: 'welcome', instance_id: this.instanceId, ready: this.#ready });
        return;
      }
      const parsed = cueFrame.safeParse(raw);
      if (!parsed.success) {
        const id = (raw as { cue_id?: unknown } | undefined)?.cue_id;
        const cue_id = typeof id === 'string' ? id.slice(0, 64) : '';
        this.#emit({ type: 'cue', conn, cue_id, outcome: 'Invalid' });
        send({
          type: 'cue_nack',
          cue_id,
          code: 'Invalid',
          message: parsed.error.issues[0]?.message ?? 'invalid cue',
        });
        return;
      }
      void this.#receive(parsed.data).then((r) => {
        const cue_id = parsed.data.cue_id;
        if ('nack' in r) {
          this.#emit({ type: 'cue', conn, cue_id, outcome: r.nack });
          send({ type: 'cue_nack', cue_id, code: r.nack, message: r.message });
        } else {
          this.#emit({ type: 'cue', conn, cue_id, outcome: r.duplicate ? 'duplicate' : 'applied' });
          send({ type: 'cue_ack', cue_id, applied_at: r.applied_at, duplicate: r.duplicate });
        }
      });
    });
  }

  /** At-most-once per cue_id: a repeat waits for the first and gets its ack with `duplicate: true`. */
  async #receive(
    frame: CueFrame,
  ): Promise<(Ack & { duplicate: boolean }) | { nack: NackCode; message: string }> {
    const first = this.#acks.get(frame.cue_id);
    if (first) {
      const ack = await first;
      if (ack) return { ...ack, duplicate: true };
      // The first was refused (never applied): this one is judged on its own.
    }
    if (this.#now() > Date.parse(frame.deliver_by))
      return { nack: 'Expired', message: 'deliver_by has passed' };
    if (this.#queue.length >= (this.#opts.queueLimit ?? 8)) {
      return { nack: 'Busy', message: 'the avatar app has too many cues waiting' };
    }
    const result = new Promise<Ack | { nack: NackCode; message: string }>((done) => {
      this.#queue.push({ frame, done });
    });
    const ackOnly = result.then((r) => ('nack' in r ? undefined : r));
    this.#acks.set(frame.cue_id, ackOnly);
    void ackOnly.then((ack) => {
      if (!ack && this.#acks.get(frame.cue_id) === ackOnly) this.#acks.delete(frame.cue_id);
    });
    this.#forgetOld();
    void this.#drain();
    const r = await result;
    return 'nack' in r ? r : { ...r, duplicate: false };
  }

  #forgetOld(): void {
    const limit = this.#opts.rememberCues ?? 4096;
    for (const key of this.#acks.keys()) {
      if (this.#acks.size <= limit) break;
      this.#acks.delete(key);
    }
  }

  async #drain(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (let item = this.#queue.shift(); item; item = this.#queue.shift()) {
        if (this.#closed) {
          item.done({ nack: 'Busy', message: 'the avatar app is shutting down' });
          continue;
        }
        // A cue that waited in the queue past its deliver_by is dropped, not played late (contract 6).
        const now = this.#now();
        if (now > Date.parse(item.frame.deliver_by)) {
          item.done({ nack: 'Expired', message: 'deliver_by passed while the cue waited' });
          continue;
        }
        const { type: _t, deliver_by: _d, ...cue } = item.frame;
        this.#state = applyCue(this.#state, cue, now);
        this.#schedule();
        this.#changed();
        try {
          await this.#opts.apply?.(cue);
        } catch {
          // The state already changed: the avatar shows the cue whatever the hook did.
        }
        item.done({ applied_at: new Date(now).toISOString() });
      }
    } finally {
      this.#busy = false;
    }
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    const at = nextChangeAt(this.#state);
    if (at === null || this.#closed) return;
    this.#timer = setTimeout(
      () => {
        this.#state = settle(this.#state, this.#now());
        this.#changed();
        this.#schedule();
      },
      Math.max(0, at - this.#now()),
    );
    this.#timer.unref();
  }
}
