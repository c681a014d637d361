/**
 * A small owner WebSocket client (contracts.md 5) for the terminal commands: connects with
 * `Authorization: Bearer <owner token>`, waits for `hello` + `snapshot`, then sends requests and matches
 * their `reply` / `history` by `req_id`. The same frames the browser panel sends, so the terminal gets
 * the same codes and messages.
 */
import WebSocket from 'ws';
import { OWNER_WS_PATH } from './hub.js';
import { PROTOCOL, type ServerMessage, type View } from './messages.js';

/** Why a connection could not be made, worded for a person at a terminal. */
export class OwnerConnectError extends Error {
  override readonly name = 'OwnerConnectError';
}

type Pending = { resolve: (m: ServerMessage) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };
type Request =
  | { type: 'approve'; id: string; version: number }
  | { type: 'deny'; id: string; version: number; note?: string }
  | { type: 'reconcile'; id: string; outcome: 'delivered' | 'not_delivered'; note?: string }
  | { type: 'history'; before?: string; limit?: number };

export class OwnerClient {
  readonly #ws: WebSocket;
  readonly #pending = new Map<string, Pending>();
  readonly snapshot: View[];
  #next = 1;

  private constructor(ws: WebSocket, snapshot: View[]) {
    this.#ws = ws;
    this.snapshot = snapshot;
    ws.on('message', (data) => this.#onMessage(String(data)));
    ws.on('close', () => {
      for (const p of this.#pending.values()) {
        clearTimeout(p.timer);
        p.reject(new OwnerConnectError('the daemon closed the owner connection before answering'));
      }
      this.#pending.clear();
    });
  }

  /** Connects to the daemon at `baseUrl` (`http://HOST:PORT`) and resolves once the snapshot arrived. */
  static open(baseUrl: string, token: string, timeoutMs = 10_000): Promise<OwnerClient> {
    const url = `${baseUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}${OWNER_WS_PATH}`;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, {
        headers: { Authorization: `Bearer ${token}` },
        handshakeTimeout: timeoutMs,
      });
      let hello = false;
      const fail = (message: string) => {
        clearTimeout(timer);
        ws.removeAllListeners();
        ws.on('error', () => {});
        ws.terminate();
        reject(new OwnerConnectError(message));
      };
      const timer = setTimeout(
        () => fail(`no answer from the daemon at ${baseUrl} within ${timeoutMs} ms`),
        timeoutMs,
      );
      ws.on('unexpected-response', (_req, res) => {
        if (res.statusCode === 401)
          fail('the daemon refused the owner token (check owner.token or OGF_BROKER_OWNER_TOKEN)');
        else fail(`the daemon at ${baseUrl} refused the owner connection (HTTP ${res.statusCode})`);
      });
      ws.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ECONNREFUSED')
          fail(`no daemon answers at ${baseUrl} (is it running? start it with: ogf-broker start)`);
        else fail(`cannot reach the daemon at ${baseUrl}: ${e.message}`);
      });
      ws.on('message', (data) => {
        let m: ServerMessage;
        try {
          m = JSON.parse(String(data)) as ServerMessage;
        } catch {
          fail('the daemon sent a frame that is not JSON');
          return;
        }
        if (m.type === 'hello') {
          if (m.protocol !== PROTOCOL) fail(`the daemon speaks ${String(m.protocol)}, not ${PROTOCOL}`);
          hello = true;
        } else if (m.type === 'snapshot' && hello) {
          clearTimeout(timer);
          ws.removeAllListeners();
          ws.on('error', () => {});
          resolve(new OwnerClient(ws, m.commands));
        }
      });
    });
  }

  /** Sends one request and resolves with its `reply` or `history` frame. */
  request(req: Request, timeoutMs = 15_000): Promise<ServerMessage> {
    const req_id = `t${this.#next++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(req_id);
        reject(new OwnerConnectError(`the daemon did not answer ${req.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(req_id, { resolve, reject, timer });
      this.#ws.send(JSON.stringify({ ...req, req_id }));
    });
  }

  #onMessage(text: string): void {
    let m: ServerMessage;
    try {
      m = JSON.parse(text) as ServerMessage;
    } catch {
      return;
    }
    if ((m.type === 'reply' || m.type === 'history') && m.req_id !== null) {
      const p = this.#pending.get(m.req_id);
      if (p === undefined) return;
      this.#pending.delete(m.req_id);
      clearTimeout(p.timer);
      p.resolve(m);
    }
  }

  /** Closes the connection (1000) and waits for it to end. */
  close(): Promise<void> {
    if (this.#ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.#ws.terminate();
        resolve();
      }, 2000);
      this.#ws.once('close', () => {
        clearTimeout(t);
        resolve();
      });
      this.#ws.close(1000);
    });
  }
}
