/**
 * Helpers for the MCP integration suites: the SDK's real Client over Streamable HTTP, a minimal owner over the
 * contract's owner WebSocket (section 5), a read-only look into broker.db, and the text/structure of a result.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import WebSocket from 'ws';
import { CLI, type RunningDaemon } from './daemon.js';

/** A catalog command that prints its argument: a real process, no shell. */
export function echoConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    commands: {
      echo: {
        description: 'Print a word',
        argv: [process.execPath, '-e', 'process.stdout.write("said " + process.argv[1])', '{word}'],
        params: { word: { type: 'string', max_length: 20, pattern: '^[a-z]+$' } },
        timeout_s: 30,
      },
    },
    ...extra,
  };
}

/** An SDK client connected over Streamable HTTP with a bearer token (or to a capability URL when token is undefined). */
export async function httpClient(url: string, token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const r = result as CallToolResult;
  const first = r.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** Calls a tool and returns the raw result (the SDK never throws for isError results). */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  opts: {
    timeout?: number;
    onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
  } = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: opts.timeout ?? 60_000,
    ...(opts.onprogress ? { onprogress: opts.onprogress, resetTimeoutOnProgress: true } : {}),
  })) as CallToolResult;
}

/** The structured result of a tool call. */
export function structured(result: CallToolResult): Record<string, unknown> {
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

/** Number of commands in the daemon's database (read-only; WAL lets us read while it writes). */
export function commandCount(d: RunningDaemon): number {
  const db = new Database(join(d.dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM commands').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Every audit row, oldest first. */
export function auditRows(d: RunningDaemon): Array<Record<string, unknown>> {
  const db = new Database(join(d.dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT * FROM audit ORDER BY seq').all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

export interface OwnerView {
  id: string;
  tool: string;
  command: string;
  version: number;
  client: string;
  state: string;
}

/** A terminal-style owner on `/owner/ws` (contract 5), authenticated by the owner bearer token. */
export class TestOwner {
  readonly #ws: WebSocket;
  readonly views = new Map<string, OwnerView>();
  snapshot: OwnerView[] | undefined;
  readonly #replies = new Map<string, (r: Record<string, unknown>) => void>();
  #seq = 0;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as Record<string, unknown>;
      if (msg.type === 'snapshot') {
        this.snapshot = msg.commands as OwnerView[];
        for (const v of this.snapshot) this.views.set(v.id, v);
      } else if (msg.type === 'upsert') {
        const v = msg.command as OwnerView;
        this.views.set(v.id, v);
      } else if (msg.type === 'reply') {
        this.#replies.get(String(msg.req_id))?.(msg);
      }
    });
  }

  static async connect(d: RunningDaemon): Promise<TestOwner> {
    const ws = new WebSocket(`${d.url.replace(/^http/, 'ws')}/owner/ws`, {
      headers: { authorization: `Bearer ${d.ownerToken}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const owner = new TestOwner(ws);
    const end = Date.now() + 10_000;
    while (owner.snapshot === undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    return owner;
  }

  async #send(frame: Record<string, unknown>): Promise<Record<string, unknown>> {
    const req_id = `r${++this.#seq}`;
    const reply = new Promise<Record<string, unknown>>((resolve) => this.#replies.set(req_id, resolve));
    this.#ws.send(JSON.stringify({ ...frame, req_id }));
    return reply;
  }

  /** Approves a command once the owner has seen it. */
  async approve(id: string): Promise<Record<string, unknown>> {
    const end = Date.now() + 10_000;
    while (!this.views.has(id) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    const v = this.views.get(id);
    if (v === undefined) throw new Error(`owner never saw ${id}`);
    return this.#send({ type: 'approve', id, version: v.version });
  }

  close(): void {
    this.#ws.close();
  }
}

/** `ogf-broker token mcp --client NAME --data-dir D`: the token is the last line of stdout. */
export async function makeClientToken(d: RunningDaemon, name: string): Promise<string> {
  const child = spawn(process.execPath, [CLI, 'token', 'mcp', '--client', name, '--data-dir', d.dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr.on('data', (b: Buffer) => {
    err += b.toString();
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`token mcp exited ${code}: ${err}`);
  return out.trim().split('\n').at(-1)!;
}
