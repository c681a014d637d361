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
  const dt = file.delivery_timeout_ms;
  const deliverBy = Date.parse(file.deliver_by);
  if (now() > deliverBy) {
    return Promise.resolve(
      notDelivered('CueExpired', `the cue's deliver_by (${file.deliver_by}) has passed`),
    );
  }
  // The daemon kills us at spawn + delivery_timeout_ms + 10 s and deliver_by is about spawn +
  // delivery_timeout_ms + 5 s: stop waiting a little before the kill so the owner reads a precise reason.
  const hardStop = deliverBy + 4000;

  return new Promise((resolve) => {
    let phase: 'handshake' | 'sent' = 'handshake';
    /** The cue frame's write: pending until the socket's callback says written or failed. */
    let write: 'pending' | 'written' | 'failed' = 'pending';
    let settled = false;
    let pendingFailure: string | undefined;
    let timer: NodeJS.Timeout | undefined;

    const ws = new WebSocket(file.bridge_url, {
      handshakeTimeout: dt,
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
      followRedirects: false,
    });

    const finish = (line: DeliverLine) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        ws.close(1000);
      } catch {
        // CONNECTING sockets throw on close in some versions; terminate below handles them.
      }
      setTimeout(() => ws.terminate(), 250).unref();
      resolve(line);
    };
    const arm = (ms: number, onTimeout: () => void) => {
      clearTimeout(timer);
      timer = setTimeout(onTimeout, Math.max(0, ms));
    };
    /** The connection failed or closed: what that means depends on where we were. */
    const lost = (what: string) => {
      if (settled) return;
      if (phase === 'handshake') {
        finish(notDelivered('BridgeUnreachable', `${what} before the avatar app's welcome`));
      } else if (write === 'pending') {
        pendingFailure = what; // decided when the write callback reports
      } else if (write === 'failed') {
        finish(notDelivered('BridgeUnreachable', `${what}; the cue frame was never written`));
      } else {
        finish(unconfirmed(`${what} after the cue was sent, before its acknowledgement`));
      }
    };

    arm(dt, () =>
      finish(notDelivered('BridgeUnreachable', `no welcome from the avatar app within ${dt} ms`)),
    );

    ws.on('open', () => {
      ws.send(
        JSON.stringify({
          type: 'hello',
          protocol: PROTOCOL,
          session_id: file.session_id,
          client: opts.client,
        }),
      );
    });
    ws.on('error', (err) => lost(`the connection failed (${appText(err.message)})`));
    ws.on('close', (code) => lost(`the avatar app closed the connection (code ${code})`));
    ws.on('message', (data, isBinary) => {
      if (settled) return;
      let raw: unknown;
      try {
        raw = isBinary ? undefined : JSON.parse(data.toString());
      } catch {
        raw = undefined;
      }
      const checked = checkAppFrame(raw);
      if (phase === 'handshake') {
        if (!checked.ok) {
          finish(
            notDelivered(
              'BridgeRejected',
              `the avatar app sent an invalid handshake frame: ${checked.message}`,
            ),
          );
          return;
        }
        const f = checked.value;
        if (f.type === 'error') {
          finish(
            notDelivered(
              'BridgeRejected',
              `the avatar app refused the handshake: ${appText(f.code)} (${appText(f.message)})`,
            ),
          );
          return;
        }
        if (f.type !== 'welcome') {
          finish(notDelivered('BridgeRejected', `the avatar app sent ${f.type} before welcome`));
          return;
        }
        if (!f.ready) {
          finish(notDelivered('AvatarNotReady', 'the avatar app answered welcome with ready:false'));
          return;
        }
        if (now() > deliverBy) {
          finish(
            notDelivered(
              'CueExpired',
              `the cue's deliver_by (${file.deliver_by}) passed during the handshake`,
            ),
          );
          return;
        }
        if (ws.readyState !== WebSocket.OPEN) {
          finish(notDelivered('BridgeUnreachable', 'the connection closed before the cue could be sent'));
          return;
        }
        const frame = { type: 'cue', cue_id: file.pending_id, ...file.cue, deliver_by: file.deliver_by };
        // From here on the app may apply the cue: every failure is `unknown` unless the write fails.
        phase = 'sent';
        arm(Math.min(dt, hardStop - now()), () =>
          finish(unconfirmed(`no acknowledgement from the avatar app within ${dt} ms of sending the cue`)),
        );
        ws.send(JSON.stringify(frame), (err) => {
          write = err ? 'failed' : 'written';
          if (err) lost(pendingFailure ?? 'the connection failed while the cue frame was being written');
          else if (pendingFailure !== undefined) lost(pendingFailure);
        });
        return;
      }
      // phase 'sent'
      if (!checked.ok) {
        finish(unconfirmed(`the avatar app answered the cue with an invalid frame: ${checked.message}`));
        return;
      }
      const f = checked.value;
      if (f.type === 'cue_ack' && f.cue_id === file.pending_id) {
        finish({
          outcome: 'delivered',
          code: DELIVERED_CODE,
          detail: f.duplicate
            ? 'the avatar app had already applied this cue and acknowledged it again'
            : 'the avatar app applied the cue',
          ack: { type: 'cue_ack', cue_id: f.cue_id, applied_at: f.applied_at, duplicate: f.duplicate },
        });
      } else if (f.type === 'cue_nack' && f.cue_id === file.pending_id) {
        finish(
          notDelivered('BridgeRejected', `the avatar app refused the cue: ${f.code} (${appText(f.message)})`),
        );
      } else {
        finish(unconfirmed(`the avatar app answered the cue with an unexpected ${f.type} frame`));
      }
    });
  });
}
