/**
 * A handshake probe for `ogf-broker doctor` (contracts.md 1.1): says hello with a session UUID the app
 * cannot know. An `ogf-bridge/1` app must answer `error` / `SessionUnknown` — which proves it speaks the
 * protocol and checks sessions — and no cue is ever sent.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { MAX_FRAME_BYTES, PROTOCOL } from '../../common/ogf-bridge.js';

export type ProbeResult = { ok: true; detail: string } | { ok: false; detail: string };

/** Probes the app at `url`, giving up after `timeoutMs`. Never rejects. */
export function probeBridge(url: string, timeoutMs: number, client: string): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let done = false;
    let ws: WebSocket;
    const finish = (r: ProbeResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      ws?.terminate();
      resolve(r);
    };
    const timer = setTimeout(
      () => finish({ ok: false, detail: `no handshake answer from ${url} within ${timeoutMs} ms` }),
      timeoutMs,
    );
    try {
      ws = new WebSocket(url, {
        handshakeTimeout: timeoutMs,
        maxPayload: MAX_FRAME_BYTES,
        perMessageDeflate: false,
      });
    } catch (e) {
      finish({ ok: false, detail: `cannot connect to ${url}: ${(e as Error).message}` });
      return;
    }
    ws.on('unexpected-response', (_req, res) =>
      finish({
        ok: false,
        detail: `${url} answered HTTP ${res.statusCode}, not a WebSocket upgrade (wrong path or port?)`,
      }),
    );
    ws.on('error', (e: NodeJS.ErrnoException) => {
      const why =
        e.code === 'ECONNREFUSED' ? 'nothing is listening there (start it with: npm run avatar)' : e.message;
      finish({ ok: false, detail: `cannot connect to ${url}: ${why}` });
    });
    ws.on('close', () =>
      finish({ ok: false, detail: `${url} closed the connection without answering hello` }),
    );
    ws.on('open', () => {
      ws.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL, session_id: randomUUID(), client }));
    });
    ws.on('message', (data) => {
      let f: { type?: unknown; code?: unknown } = {};
      try {
        f = JSON.parse(String(data)) as typeof f;
      } catch {
        // an unparsable answer is reported below
      }
      if (f.type === 'error' && f.code === 'SessionUnknown') {
        finish({
          ok: true,
          detail: `the avatar app at ${url} speaks ${PROTOCOL}: it refused a made-up session with SessionUnknown, as it should`,
        });
      } else if (f.type === 'error' && f.code === 'ProtocolUnsupported') {
        finish({
          ok: false,
          detail: `the app at ${url} answered ProtocolUnsupported: it does not speak ${PROTOCOL}`,
        });
      } else if (f.type === 'welcome') {
        finish({
          ok: false,
          detail: `the app at ${url} welcomed a made-up session: it does not check session IDs`,
        });
      } else {
        finish({
          ok: false,
          detail: `the app at ${url} answered hello with something that is not ${PROTOCOL}`,
        });
      }
    });
  });
}
