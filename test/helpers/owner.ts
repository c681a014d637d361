/**
 * Helpers for the owner suites: a recording owner over the real `/owner/ws` (every frame kept, so tests can
 * assert order and scan for secrets), a raw upgrade probe for the HTTP refusals, an MCP client that
 * queues commands the way an AI does, and a catalog whose command leaves a trace we can count.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import WebSocket from 'ws';
import { type RunningDaemon, runCli } from './daemon.js';

// biome-ignore lint/suspicious/noExplicitAny: frames are JSON read back by tests.
export type Frame = Record<string, any>;

/** A catalog: `mark` appends one line to FILE (counts launches); `slow` ignores SIGTERM (ends unknown). */
export function ownerCatalog(markFile: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    commands: {
      mark: {
        description: 'Append a line to a file',
        argv: [
          process.execPath,
          '-e',
          'require("fs").appendFileSync(process.argv[1], process.argv[2] + "\\n")',
          markFile,
          '{word}',
        ],
        params: { word: { type: 'string', max_length: 20, pattern: '^[a-z0-9]+$' } },
        timeout_s: 30,
      },
      stubborn: {
        description: 'Ignores SIGTERM and outlives its deadline',
        argv: [process.execPath, '-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'],
        timeout_s: 1,
      },
    },
    ...extra,
  };
}

/** The lines `mark` appended to FILE so far: one per launch (none when it never ran). */
export function readMarks(markFile: string): string[] {
  try {
    return readFileSync(markFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** The AI side: the SDK client over Streamable HTTP with the MCP bearer token. */
export async function mcpClient(d: RunningDaemon): Promise<Client> {
  const client = new Client({ name: 'owner-test-ai', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(d.info.mcp_url), {
      requestInit: { headers: { authorization: `Bearer ${d.mcpToken}` } },
    }),
  );
  return client;
}

/** Queues a catalog command (wait_seconds 0) and returns its pending_id. */
export async function queue(
  client: Client,
  command: string,
  args: Record<string, unknown>,
  justification?: string,
): Promise<string> {
  const r = (await client.callTool({
    name: 'run_command_wait',
    arguments: { command, args, wait_seconds: 0, ...(justification ? { justification } : {}) },
  })) as CallToolResult;
  const id = (r.structuredContent as { pending_id?: string } | undefined)?.pending_id;
  if (id === undefined) throw new Error(`run_command_wait queued nothing: ${JSON.stringify(r)}`);
  return id;
}

/** Calls a tool and returns its structured result. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<Frame> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return (r.structuredContent ?? { isError: r.isError, content: r.content }) as Frame;
}

export function wsUrl(d: RunningDaemon): string {
  return `${d.url.replace(/^http/, 'ws')}/owner/ws`;
}

/** An owner connection that records every frame it receives. */
export class OwnerSocket {
  readonly frames: Frame[] = [];
  readonly raw: string[] = [];
  closeCode: number | undefined;
  /** The reason the close frame gave ('' when none). */
  closeReason: string | undefined;
  /** Binary frames received: contract 5 says every message is a JSON text frame, so tests expect 0. */
  binaryFrames = 0;
  readonly ws: WebSocket;
  #waiters: Array<() => void> = [];
  #next = 1;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (isBinary) this.binaryFrames++;
      const text = String(data);
      this.raw.push(text);
      this.frames.push(JSON.parse(text) as Frame);
      for (const w of this.#waiters.splice(0)) w();
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString('utf8');
      for (const w of this.#waiters.splice(0)) w();
    });
  }

  /**
   * Connects with the owner token (default) or given headers (and subprotocols: a panel session offers
   * `ogf-owner.<key>`), and waits for hello + snapshot.
   */
  static async open(
    d: RunningDaemon,
    headers?: Record<string, string>,
    protocols: string[] = [],
  ): Promise<OwnerSocket> {
    const ws = new WebSocket(wsUrl(d), protocols, {
      headers: headers ?? { Authorization: `Bearer ${d.ownerToken}` },
    });
    const owner = new OwnerSocket(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    await owner.waitFor((f) => f.type === 'snapshot', 'snapshot');
    return owner;
  }

  /** Resolves with the first recorded frame matching `pred` (already received or arriving later). */
  async waitFor(pred: (f: Frame) => boolean, what: string, timeoutMs = 20_000): Promise<Frame> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.frames.find(pred);
      if (hit !== undefined) return hit;
      if (this.closeCode !== undefined)
        throw new Error(`socket closed (${this.closeCode}) while waiting for ${what}`);
      const left = end - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out waiting for ${what}; got ${JSON.stringify(this.frames.map((f) => f.type))}`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /**
   * The state of `id` as this owner knows it, once it matches `pred`: its View in the snapshot or in any
   * upsert, received already or arriving later. Use this, not `upsert`, when the socket may have connected
   * after the change happened (a reconnect, a restart): the snapshot then already shows it and no upsert
   * will come (architecture.md, Tests: wait for the state, never for an event that may have happened).
   */
  view(id: string, pred: (v: Frame) => boolean, what: string): Promise<Frame> {
    return this.waitFor((f) => {
      const v: Frame | undefined =
        f.type === 'upsert'
          ? f.command
          : f.type === 'snapshot'
            ? (f.commands as Frame[]).find((c) => c.id === id)
            : undefined;
      return v !== undefined && v.id === id && pred(v);
    }, what).then((f) =>
      f.type === 'upsert' ? (f.command as Frame) : (f.commands as Frame[]).find((c) => c.id === id)!,
    );
  }

  /** The newest View of `id` this socket has received (snapshot or upsert), or undefined. */
  latest(id: string): Frame | undefined {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i]!;
      const v: Frame | undefined =
        f.type === 'upsert'
          ? f.command
          : f.type === 'snapshot'
            ? (f.commands as Frame[]).find((c) => c.id === id)
            : undefined;
      if (v?.id === id) return v;
    }
    return undefined;
  }

  /** The first upsert for `id` matching `pred`, received or arriving (an event: only for sockets open before the change). */
  upsert(id: string, pred: (v: Frame) => boolean, what: string): Promise<Frame> {
    return this.waitFor((f) => f.type === 'upsert' && f.command.id === id && pred(f.command), what).then(
      (f) => f.command as Frame,
    );
  }

  /** Sends a frame with a fresh req_id and waits for the frame answering it. */
  async request(frame: Frame): Promise<Frame> {
    const req_id = `r${this.#next++}`;
    this.ws.send(JSON.stringify({ ...frame, req_id }));
    return this.waitFor(
      (f) =>
        (f.type === 'reply' ||
          f.type === 'history' ||
          f.type === 'grants' ||
          f.type === 'args' ||
          f.type === 'policy_test' ||
          f.type === 'audit' ||
          f.type === 'push_devices' ||
          f.type === 'rules' ||
          f.type === 'rule_add' ||
          f.type === 'rule_update' ||
          f.type === 'rule_remove' ||
          f.type === 'revert') &&
        f.req_id === req_id,
      `reply ${req_id}`,
    );
  }

  /** Sends raw text and waits for the next reply frame. */
  async sendRaw(text: string): Promise<Frame> {
    const before = this.frames.length;
    this.ws.send(text);
    return this.waitFor((f) => this.frames.indexOf(f) >= before && f.type === 'reply', 'reply to raw frame');
  }

  /** The View of `id` in the snapshot. */
  snapshotView(id: string): Frame | undefined {
    return (this.frames.find((f) => f.type === 'snapshot')?.commands as Frame[] | undefined)?.find(
      (v) => v.id === id,
    );
  }

  close(): Promise<void> {
    if (this.closeCode !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

/** Attempts an upgrade of `/owner/ws` with the given headers; resolves to the HTTP status (101 on success). */
export function upgradeStatus(d: RunningDaemon, headers: Record<string, string>): Promise<number> {
  const url = new URL(d.url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      path: '/owner/ws',
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': Buffer.from('0123456789abcdef').toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** An owner's login: its name, token and the URL `ogf-broker token owner` printed (its last line). */
export interface OwnerLogin {
  name: string;
  token: string;
  url: string;
}

/**
 * `ogf-broker token owner --name NAME [--rotate]` against the daemon's data dir, as the owner runs it
 * (contract 9); throws unless it exits 0. The token is read back from the printed URL's fragment.
 */
export async function addOwner(d: RunningDaemon, name: string, rotate = false): Promise<OwnerLogin> {
  const r = await runCli([
    'token',
    'owner',
    '--data-dir',
    d.dataDir,
    '--name',
    name,
    ...(rotate ? ['--rotate'] : []),
  ]);
  if (r.code !== 0) throw new Error(`token owner --name ${name} exited ${r.code}: ${r.stderr}`);
  const url = r.stdout.trimEnd().split('\n').at(-1)!;
  const token = /#token=(\S+)$/.exec(url)?.[1];
  if (token === undefined) throw new Error(`no login URL on the last line: ${r.stdout}`);
  return { name, token, url };
}

/** An owner socket over `Authorization: Bearer <token>` (a named owner's terminal or bot). */
export function bearerSocket(d: RunningDaemon, token: string): Promise<OwnerSocket> {
  return OwnerSocket.open(d, { Authorization: `Bearer ${token}` });
}
