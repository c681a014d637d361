/**
 * A small owner WebSocket client (contracts.md 5) for the terminal commands: connects with
 * `Authorization: Bearer <owner token>`, waits for `hello` + `snapshot`, then sends requests and matches
 * their `reply` / `history` by `req_id`. The same frames the browser panel sends, so the terminal gets
 * the same codes and messages.
 */
import { constants } from 'node:buffer';
import WebSocket from 'ws';
import {
  type Grant,
  OWNER_WS_PATH,
  PROTOCOL,
  type ServerMessage,
  type View,
} from '../../common/owner-messages.js';
import type { ApproveGrant } from '../core/index.js';

/** Why a connection could not be made, worded for a person at a terminal. */
export class OwnerConnectError extends Error {
  override readonly name = 'OwnerConnectError';
}

/**
 * The largest frame the terminal accepts: the longest string V8 can hold (UTF-8 never decodes to more
 * UTF-16 units than bytes), so any frame that arrives can be read. ws's default, 100 MiB, was below a
 * snapshot of full PENDING caps (contract 1.3, 5: max_pending worst-case Views come to ~260 MiB, see
 * test/attack-flood.test.ts): `ogf-broker list` died with "Max payload size exceeded" exactly when the
 * owner most needed it.
 */
export const OWNER_CLIENT_MAX_PAYLOAD = constants.MAX_STRING_LENGTH;
/**
 * How long the snapshot may take once `hello` came. The daemon is alive and answering by then; a full
 * queue's snapshot is hundreds of MiB to receive and parse, which took ~5 s of `list`'s 10 s on an idle
 * machine, so the connect timeout alone would fail exactly when the queue is full and the machine busy.
 */
export const SNAPSHOT_TIMEOUT_MS = 120_000;

type Pending = { resolve: (m: ServerMessage) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };
type Request =
  | { type: 'approve'; id: string; version: number }
  | { type: 'deny'; id: string; version: number; note?: string }
  | { type: 'reconcile'; id: string; outcome: 'delivered' | 'not_delivered'; note?: string }
  | { type: 'history'; before?: string; limit?: number }
  | { type: 'approve'; id: string; version: number; grant: ApproveGrant }
  | {
      type: 'grant';
      command: string;
      client: string;
      args?: Record<string, unknown>;
      ttl_s: number;
      uses?: number;
      note?: string;
    }
  | { type: 'revoke'; grant_id: string }
  | { type: 'doctor' }
  | { type: 'notify_test'; channel?: string }
  | { type: 'reload' }
  | { type: 'grants'; all?: boolean }
  | { type: 'rules' }
  | {
      type: 'rule_add';
      rule: { id?: string; when: string; decision: 'allow' | 'deny' | 'ask'; note?: string };
    }
  | { type: 'rule_update'; id: string; enabled?: boolean }
  | { type: 'rule_remove'; id: string }
  | { type: 'revert'; id: string };

export class OwnerClient {
  readonly #ws: WebSocket;
  readonly #pending = new Map<string, Pending>();
  readonly snapshot: View[];
  /** The live grants of the snapshot (contract 5 v2). */
  readonly grants: Grant[];
  #next = 1;

  private constructor(ws: WebSocket, snapshot: View[], grants: Grant[]) {
    this.#ws = ws;
    this.snapshot = snapshot;
    this.grants = grants;
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
        maxPayload: OWNER_CLIENT_MAX_PAYLOAD,
      });
      let hello = false;
      const fail = (message: string) => {
        clearTimeout(timer);
        ws.removeAllListeners();
        ws.on('error', () => {});
        ws.terminate();
        reject(new OwnerConnectError(message));
      };
      let timer = setTimeout(
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
          if (m.protocol !== PROTOCOL) {
            fail(`the daemon speaks ${String(m.protocol)}, not ${PROTOCOL}`);
            return;
          }
          hello = true;
          clearTimeout(timer);
          const snapshotMs = Math.max(timeoutMs, SNAPSHOT_TIMEOUT_MS);
          timer = setTimeout(
            () =>
              fail(`the daemon at ${baseUrl} did not finish sending its snapshot within ${snapshotMs} ms`),
            snapshotMs,
          );
        } else if (m.type === 'snapshot' && hello) {
          clearTimeout(timer);
          ws.removeAllListeners();
          ws.on('error', () => {});
          resolve(new OwnerClient(ws, m.commands, m.grants ?? []));
        }
      });
    });
  }

  /** Sends one request and resolves with its answer (`reply`, or the frame of its own type). */
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
    if (
      (m.type === 'reply' ||
        m.type === 'history' ||
        m.type === 'grants' ||
        m.type === 'doctor' ||
        m.type === 'notify_test' ||
        m.type === 'reload' ||
        m.type === 'rules' ||
        m.type === 'rule_add' ||
        m.type === 'rule_update' ||
        m.type === 'rule_remove' ||
        m.type === 'revert') &&
      m.req_id !== null
    ) {
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
