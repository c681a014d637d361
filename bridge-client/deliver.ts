/**
 * Delivers one cue over `ogf-bridge/1` (contracts.md 4 and 6): hello → welcome → cue → ack, and says
 * exactly one of three things about it.
 *
 * ```
 *  connect ──open──▶ hello sent ──welcome ready──▶ cue handed to the socket ──cue_ack──▶ delivered
 *     │                  │  error frame / nack / ready:false / expired           │ close, error, silence,
 *     │                  ▼                                                       │ garbage
 *     └──────────▶ not_delivered  (the cue frame was never written)              ▼
 *                                                                   unknown (DeliveryUnconfirmed)
 * ```
 *
 * The line between `not_delivered` and `unknown` is whether the cue frame was written: before
 * `ws.send` nothing can have been applied; once the frame is handed to the socket, the app may have
 * applied it, so any failure after that is `unknown` — unless the socket's write callback reports the
 * write itself failed (the kernel never took the whole frame, so the app cannot have parsed it). A close
 * that races the write callback waits for the callback before deciding.
 *
 * Imports stay small (no zod): the client is spawned once per cue.
 */
import { createRequire } from 'node:module';
import type WebSocketClass from 'ws';
import type { DeliverLine } from '../common/ogf-bridge.js';
import { DELIVERED_CODE, MAX_FRAME_BYTES, PROTOCOL } from '../common/ogf-bridge.js';
import { type CheckedSessionFile, checkAppFrame } from './session-check.js';

export type { DeliverLine };

// `ws` is CommonJS. `import WebSocket from 'ws'` sends it through Node's ESM→CJS translator, whose export
// lexer costs the spawned client ~100 ms of CPU at start-up on the bench machine (Node 20); `require`
// loads the same module without it (docs/performance.md, row 3).
const WebSocket = createRequire(import.meta.url)('ws') as typeof WebSocketClass;

export interface DeliverOptions {
  /** Sent in `hello` as `client` (contract 6 step 1): `ogf-broker/<version>`. */
  client: string;
  now?: () => number;
}

/** Exit status of `ogf-bridge-client deliver` for a line (contract 4): 0 / 2 / 3. */
export function exitCodeFor(line: DeliverLine): 0 | 2 | 3 {
  if (line.outcome === 'delivered') return 0;
  return line.outcome === 'not_delivered' ? 2 : 3;
}

export function notDelivered(code: string, detail: string): DeliverLine {
  return { outcome: 'not_delivered', code, detail };
}

function unconfirmed(detail: string): DeliverLine {
  return { outcome: 'unknown', code: 'DeliveryUnconfirmed', detail };
}

// App-supplied text goes into `detail`; keep it one short line and never let it carry a UUID (the app
// knows the session UUID and a careless one might echo it).
function appText(s: string): string {
  return (
    s
      .replace(/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g, '<uuid>')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
      .slice(0, 200)
  );
}

/**
 * Runs the handshake and the cue for a validated session file. Never rejects. Resolves with the line
 * as soon as the outcome is known; the socket is then closed (terminated at most 250 ms later).
 */
export function deliverCue(file: CheckedSessionFile, opts: DeliverOptions): Promise<DeliverLine> {
  const now = opts.now ?? Date.now;
  if (now() > Date.parse(file.deliver_by)) {
    return Promise.resolve(
      notDelivered('CueExpired', `the cue's deliver_by (${file.deliver_by}) has passed`),
    );
  }
  return new Promise((resolve) => new Delivery(file, opts.client, now, resolve).start());
}

/** The app's text frame as JSON, or undefined for a binary or unparsable one (checkAppFrame says why). */
function parseFrame(data: WebSocketClass.RawData, isBinary: boolean): unknown {
  if (isBinary) return undefined;
  try {
    return JSON.parse(data.toString());
  } catch {
    return undefined;
  }
}

/** The handshake's answer, when it refuses the cue: anything but a valid `welcome` with `ready: true`. */
function handshakeRefusal(checked: ReturnType<typeof checkAppFrame>): DeliverLine | undefined {
  if (!checked.ok) {
    return notDelivered(
      'BridgeRejected',
      `the avatar app sent an invalid handshake frame: ${checked.message}`,
    );
  }
  const f = checked.value;
  if (f.type === 'error') {
    return notDelivered(
      'BridgeRejected',
      `the avatar app refused the handshake: ${appText(f.code)} (${appText(f.message)})`,
    );
  }
  if (f.type !== 'welcome') {
    return notDelivered('BridgeRejected', `the avatar app sent ${f.type} before welcome`);
  }
  if (!f.ready) return notDelivered('AvatarNotReady', 'the avatar app answered welcome with ready:false');
  return undefined;
}

/** What the app's answer to the written cue frame means: only its own ack or nack is an answer. */
function answerVerdict(checked: ReturnType<typeof checkAppFrame>, cueId: string): DeliverLine {
  if (!checked.ok) {
    return unconfirmed(`the avatar app answered the cue with an invalid frame: ${checked.message}`);
  }
  const f = checked.value;
  if (f.type === 'cue_ack' && f.cue_id === cueId) {
    return {
      outcome: 'delivered',
      code: DELIVERED_CODE,
      detail: f.duplicate
        ? 'the avatar app had already applied this cue and acknowledged it again'
        : 'the avatar app applied the cue',
      ack: { type: 'cue_ack', cue_id: f.cue_id, applied_at: f.applied_at, duplicate: f.duplicate },
    };
  }
  if (f.type === 'cue_nack' && f.cue_id === cueId) {
    return notDelivered(
      'BridgeRejected',
      `the avatar app refused the cue: ${f.code} (${appText(f.message)})`,
    );
  }
  return unconfirmed(`the avatar app answered the cue with an unexpected ${f.type} frame`);
}

/** One delivery: the socket, where it is (handshake or sent), and whether the cue frame's write is known. */
class Delivery {
  #phase: 'handshake' | 'sent' = 'handshake';
  /** The cue frame's write: pending until the socket's callback says written or failed. */
  #write: 'pending' | 'written' | 'failed' = 'pending';
  #settled = false;
  #pendingFailure: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #ws: WebSocketClass;
  readonly #deliverBy: number;

  constructor(
    private readonly file: CheckedSessionFile,
    private readonly client: string,
    private readonly now: () => number,
    private readonly resolve: (line: DeliverLine) => void,
  ) {
    this.#deliverBy = Date.parse(file.deliver_by);
    this.#ws = new WebSocket(file.bridge_url, {
      handshakeTimeout: file.delivery_timeout_ms,
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
      followRedirects: false,
    });
  }

  start(): void {
    const dt = this.file.delivery_timeout_ms;
    this.#arm(dt, () =>
      this.#finish(notDelivered('BridgeUnreachable', `no welcome from the avatar app within ${dt} ms`)),
    );
    const { file, client } = this;
    this.#ws.on('open', () =>
      this.#ws.send(
        JSON.stringify({ type: 'hello', protocol: PROTOCOL, session_id: file.session_id, client }),
      ),
    );
    this.#ws.on('error', (err) => this.#lost(`the connection failed (${appText(err.message)})`));
    this.#ws.on('close', (code) => this.#lost(`the avatar app closed the connection (code ${code})`));
    this.#ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
  }

  #onMessage(data: WebSocketClass.RawData, isBinary: boolean): void {
    if (this.#settled) return;
    const checked = checkAppFrame(parseFrame(data, isBinary));
    if (this.#phase === 'sent') {
      this.#finish(answerVerdict(checked, this.file.pending_id));
      return;
    }
    const refusal = handshakeRefusal(checked) ?? this.#cannotSend();
    if (refusal !== undefined) this.#finish(refusal);
    else this.#sendCue();
  }

  /** After a ready welcome: why the cue can still not be sent (its time passed, the socket closed). */
  #cannotSend(): DeliverLine | undefined {
    if (this.now() > this.#deliverBy) {
      return notDelivered(
        'CueExpired',
        `the cue's deliver_by (${this.file.deliver_by}) passed during the handshake`,
      );
    }
    if (this.#ws.readyState !== WebSocket.OPEN) {
      return notDelivered('BridgeUnreachable', 'the connection closed before the cue could be sent');
    }
    return undefined;
  }

  /** Hands the cue frame to the socket: from here on the app may apply it, so every failure is `unknown`
   * unless the write itself fails. */
  #sendCue(): void {
    const { file } = this;
    const dt = file.delivery_timeout_ms;
    // The daemon kills us at spawn + delivery_timeout_ms + 10 s and deliver_by is about spawn +
    // delivery_timeout_ms + 5 s: stop waiting a little before the kill so the owner reads a precise reason.
    const hardStop = this.#deliverBy + 4000;
    const frame = { type: 'cue', cue_id: file.pending_id, ...file.cue, deliver_by: file.deliver_by };
    this.#phase = 'sent';
    this.#arm(Math.min(dt, hardStop - this.now()), () =>
      this.#finish(unconfirmed(`no acknowledgement from the avatar app within ${dt} ms of sending the cue`)),
    );
    this.#ws.send(JSON.stringify(frame), (err) => {
      this.#write = err ? 'failed' : 'written';
      if (err)
        this.#lost(this.#pendingFailure ?? 'the connection failed while the cue frame was being written');
      else if (this.#pendingFailure !== undefined) this.#lost(this.#pendingFailure);
    });
  }

  /** The connection failed or closed: what that means depends on where we were. */
  #lost(what: string): void {
    if (this.#settled) return;
    if (this.#phase === 'handshake') {
      this.#finish(notDelivered('BridgeUnreachable', `${what} before the avatar app's welcome`));
    } else if (this.#write === 'pending') {
      this.#pendingFailure = what; // decided when the write callback reports
    } else if (this.#write === 'failed') {
      this.#finish(notDelivered('BridgeUnreachable', `${what}; the cue frame was never written`));
    } else {
      this.#finish(unconfirmed(`${what} after the cue was sent, before its acknowledgement`));
    }
  }

  #arm(ms: number, onTimeout: () => void): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(onTimeout, Math.max(0, ms));
  }

  #finish(line: DeliverLine): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    try {
      this.#ws.close(1000);
    } catch {
      // CONNECTING sockets throw on close in some versions; terminate below handles them.
    }
    setTimeout(() => this.#ws.terminate(), 250).unref();
    this.resolve(line);
  }
}
