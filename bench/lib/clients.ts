/**
 * The bench's clients: the real SDK `Client` over Streamable HTTP, and a lean owner on `/owner/ws` that
 * stamps every frame with `performance.now()` before parsing it, so latencies are not inflated by our
 * own JSON work, and can approve what it sees.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import WebSocket from 'ws';
import type { Daemon } from './procs.js';

/**
 * The transport's fetch, without its lifelong abort signal on POSTs (issue 41). The 2025 SDK hands every
 * POST its transport's one AbortSignal; Node 20's fetch adds an `abort` listener to it per request and drops
 * it only once that request is garbage-collected, so thousands of calls on one client (row 4) held 3,000+
 * listeners — the MaxListenersExceededWarning flood. The bench awaits every call before it closes a client,
 * so a POST never needs that signal; the GET stream keeps it, and `close()` still ends that.
 */
const postWithoutSignal: typeof fetch = (input, init) => {
  if (init?.method !== 'POST' || init.signal === undefined) return fetch(input, init);
  const { signal: _lifelong, ...rest } = init;
  return fetch(input, rest);
};

/** An SDK client connected to `url` (bearer token when given). */
export async function connectMcp(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'ogf-bench', version: '1.0.0' });
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: postWithoutSignal }),
  );
  return client;
}

/** Closes clients, ending their sessions (DELETE) so the daemon's session cap is not reached. */
export async function closeMcp(clients: readonly Client[]): Promise<void> {
  await Promise.all(
    clients.map(async (c) => {
      const t = c.transport as StreamableHTTPClientTransport | undefined;
      await t?.terminateSession().catch(() => {});
      await c.close().catch(() => {});
    }),
  );
}

/** How many calls were retried after `fetch failed` (reported in the JSON). */
export const retries = { count: 0 };

/**
 * Calls a tool and returns its structured content; throws on a tool error. A `fetch failed` (a pooled
 * keep-alive connection the server closed just as it was reused: the request never left) is retried
 * once and counted; at worst a retried submission queues one extra bench command. This daemon keeps idle
 * connections 130 s and no longer closes one under its client (test/http-keepalive.test.ts); the builds
 * before it that row 15 drives (5 s) still do.
 */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  timeoutMs = 120_000,
): Promise<Record<string, unknown>> {
  const call = () =>
    client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs }) as Promise<CallToolResult>;
  let r: CallToolResult;
  try {
    r = await call();
  } catch (e) {
    if (!(e instanceof TypeError) || e.message !== 'fetch failed') throw e;
    retries.count++;
    r = await call();
  }
  if (r.isError) throw new Error(`${name} refused: ${JSON.stringify(r.content)}`);
  return (r.structuredContent ?? {}) as Record<string, unknown>;
}

export interface View {
  id: string;
  version: number;
  state: string;
  args: Record<string, unknown>;
  command?: string;
  /** An owner's name, `grant:<id>`, `policy:read_only` or `daemon`, once decided (contract 5 v2). */
  decided_by?: string;
}

/** A frame as received: its arrival time (before parsing) and the parsed message. */
export interface Stamped {
  at: number;
  // biome-ignore lint/suspicious/noExplicitAny: owner frames are JSON read back by the bench.
  msg: Record<string, any>;
}

/** An owner over the real `/owner/ws` with the owner bearer token. */
export class Owner {
  readonly ws: WebSocket;
  /** Called for every upsert, with its arrival time. */
  onUpsert: (view: View, at: number) => void = () => {};
  #snapshot: ((s: Stamped) => void) | undefined;
  #replies = new Map<string, (msg: Record<string, unknown>) => void>();
  #next = 0;
  /** Arrival time of the hello frame and of the snapshot frame, and the snapshot's size in bytes. */
  helloAt = 0;
  snapshotAt = 0;
  snapshotBytes = 0;
  snapshotCount = 0;
  /** The commands of the last snapshot (their views as the daemon sent them). */
  snapshotViews: View[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      const at = performance.now();
      const text = String(data);
      const msg = JSON.parse(text) as Stamped['msg'];
      if (msg.type === 'upsert') this.onUpsert(msg.command as View, at);
      // Every reply carries its request's `req_id` (`reply`, or the request's own type: contract 18).
      else if (typeof msg.req_id === 'string' && this.#replies.has(msg.req_id))
        this.#replies.get(msg.req_id)?.(msg);
      else if (msg.type === 'hello') this.helloAt = at;
      else if (msg.type === 'snapshot') {
        this.snapshotAt = at;
        this.snapshotBytes = Buffer.byteLength(text);
        this.snapshotViews = msg.commands as View[];
        this.snapshotCount = this.snapshotViews.length;
        this.#snapshot?.({ at, msg });
      }
    });
    ws.on('error', () => {});
  }

  /** Connects and resolves once the snapshot has arrived. */
  static async open(d: Daemon): Promise<Owner> {
    const ws = new WebSocket(`${d.url.replace(/^http/, 'ws')}/owner/ws`, {
      headers: { authorization: `Bearer ${d.ownerToken}` },
      perMessageDeflate: false,
    });
    const owner = new Owner(ws);
    await new Promise<void>((resolve, reject) => {
      owner.#snapshot = () => resolve();
      ws.once('error', reject);
      ws.once('close', (code) => reject(new Error(`owner socket closed ${code}`)));
    });
    return owner;
  }

  /** Sends approve for `view` (at its version); resolves with the reply. */
  approve(view: View): Promise<Record<string, unknown>> {
    return this.request({ type: 'approve', id: view.id, version: view.version });
  }

  /**
   * Denies every command awaiting review (issue 41: a row's loads stay inside the pending caps; it decides
   * as it goes), `inFlight` at a time; resolves with how many were denied.
   */
  async denyAwaiting(inFlight = 100): Promise<number> {
    const queue = this.snapshotViews.filter((v) => v.state === 'awaiting_review');
    const worker = async () => {
      for (let v = queue.pop(); v !== undefined; v = queue.pop())
        await this.request({ type: 'deny', id: v.id, version: v.version });
    };
    const count = queue.length;
    await Promise.all(Array.from({ length: inFlight }, worker));
    return count;
  }

  /** Sends any owner frame (contract 5) with a fresh `req_id`; resolves with its reply. */
  request(frame: Record<string, unknown>): Promise<Record<string, unknown>> {
    const req_id = `a${++this.#next}`;
    return new Promise((resolve) => {
      this.#replies.set(req_id, (msg) => {
        this.#replies.delete(req_id);
        resolve(msg);
      });
      this.ws.send(JSON.stringify({ ...frame, req_id }));
    });
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}
