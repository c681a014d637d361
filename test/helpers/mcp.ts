/**
 * Helpers for the MCP integration suites: the SDKs' real Clients over Streamable HTTP in both protocol
 * generations (contract 10: the v1 SDK for the 2025 generation with its sessions, the v2 SDK pinned to
 * 2026-07-28), the owner over the contract's owner WebSocket (section 5), a read-only look into broker.db,
 * and the text/structure of a result.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { CLI, ROOT, type RunningDaemon, waitFor } from './daemon.js';
import { OwnerSocket } from './owner.js';

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

/** The two MCP protocol generations every MCP suite runs over (contract 10). */
export type Generation = 'legacy' | 'modern';
export const GENERATIONS: readonly Generation[] = ['legacy', 'modern'];
export const MODERN_VERSION = '2026-07-28';

/** A connected client of either generation: the v1 SDK's (2025) or the v2 SDK's pinned to 2026-07-28. */
export type McpClient = LegacyClient | ModernClient;

/** Options that make a v2 SDK Client speak 2026-07-28 or fail: a pin never falls back to initialize. */
export const MODERN_OPTIONS = { versionNegotiation: { mode: { pin: MODERN_VERSION } } } as const;

export interface HttpClientOptions {
  /** What the transport sends with instead of the global fetch (a test rewriting the bytes on the wire). */
  fetch?: typeof fetch;
}

/**
 * An SDK client connected over Streamable HTTP with a bearer token (or to a capability URL when token is
 * undefined). A modern client must have negotiated 2026-07-28 for real, not silently fallen back.
 */
export async function httpClient(
  url: string,
  token: string | undefined,
  generation?: 'legacy',
  options?: HttpClientOptions,
): Promise<LegacyClient>;
export async function httpClient(
  url: string,
  token: string | undefined,
  generation: Generation,
  options?: HttpClientOptions,
): Promise<McpClient>;
export async function httpClient(
  url: string,
  token: string | undefined,
  generation: Generation = 'legacy',
  options: HttpClientOptions = {},
): Promise<McpClient> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const transport = { requestInit: { headers }, ...(options.fetch ? { fetch: options.fetch } : {}) };
  if (generation === 'modern') {
    const client = new ModernClient({ name: 'mcp-test', version: '1.0.0' }, MODERN_OPTIONS);
    await client.connect(new ModernHttpTransport(new URL(url), transport));
    assertModern(client);
    return client;
  }
  const client = new LegacyClient({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), transport));
  return client;
}

/** Throws unless the v2 client negotiated the 2026-07-28 revision (the era and the exact version). */
export function assertModern(client: ModernClient): void {
  const version = client.getNegotiatedProtocolVersion();
  if (client.getProtocolEra() !== 'modern' || version !== MODERN_VERSION) {
    throw new Error(
      `expected protocol ${MODERN_VERSION}, negotiated ${version} (${client.getProtocolEra()})`,
    );
  }
}

/** The protocol version a client of either SDK negotiated. */
export function negotiatedVersion(client: McpClient): string | undefined {
  return client instanceof ModernClient
    ? client.getNegotiatedProtocolVersion()
    : (client.transport as { protocolVersion?: string } | undefined)?.protocolVersion;
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const r = result as CallToolResult;
  const first = r.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** A real `ogf-broker mcp-stdio` child and the SDK client speaking to it over its stdin/stdout. */
export interface StdioChild {
  client: McpClient;
  stderr(): string;
}

/** A real mcp-stdio child driven by the v1 SDK (2025 generation) or the v2 SDK pinned to 2026-07-28. */
export async function stdioClient(
  dataDir: string,
  env: Record<string, string> = {},
  generation: Generation = 'legacy',
): Promise<StdioChild> {
  const params = {
    command: process.execPath,
    args: [CLI, 'mcp-stdio', '--data-dir', dataDir],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stderr: 'pipe' as const,
  };
  let err = '';
  const onErr = (b: Buffer) => {
    err += b.toString();
  };
  if (generation === 'modern') {
    const transport = new ModernStdioTransport(params);
    transport.stderr?.on('data', onErr);
    const client = new ModernClient({ name: 'stdio-test', version: '1.0.0' }, MODERN_OPTIONS);
    await client.connect(transport);
    assertModern(client);
    return { client, stderr: () => err };
  }
  const transport = new StdioClientTransport(params);
  transport.stderr?.on('data', onErr);
  const client = new LegacyClient({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err };
}

/** Calls a tool and returns the raw result (the SDK never throws for isError results). */
export async function call(
  client: McpClient,
  name: string,
  args: Record<string, unknown>,
  opts: {
    timeout?: number;
    onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
  } = {},
): Promise<CallToolResult> {
  const options = {
    timeout: opts.timeout ?? 60_000,
    ...(opts.onprogress ? { onprogress: opts.onprogress, resetTimeoutOnProgress: true } : {}),
  };
  if (client instanceof ModernClient) {
    return (await client.callTool({ name, arguments: args }, options)) as CallToolResult;
  }
  return (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult;
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

/**
 * The MCP suites' owner: the recording OwnerSocket of ./owner.ts seen as "the latest View of each command"
 * plus an approve that waits until the owner has seen the command.
 */
export class TestOwner {
  readonly #socket: OwnerSocket;

  private constructor(socket: OwnerSocket) {
    this.#socket = socket;
  }

  static async connect(d: RunningDaemon): Promise<TestOwner> {
    return new TestOwner(await OwnerSocket.open(d));
  }

  /** The latest View of every command this owner has seen (snapshot, then upserts in order). */
  get views(): Map<string, OwnerView> {
    const views = new Map<string, OwnerView>();
    for (const f of this.#socket.frames) {
      if (f.type === 'snapshot') for (const v of f.commands as OwnerView[]) views.set(v.id, v);
      else if (f.type === 'upsert') views.set(f.command.id, f.command as OwnerView);
    }
    return views;
  }

  /** Approves a command once the owner has seen it; resolves to the reply frame. */
  async approve(id: string): Promise<Record<string, unknown>> {
    const v = await waitFor(() => this.views.get(id), `the owner to see ${id}`, 10_000);
    return this.#socket.request({ type: 'approve', id, version: v.version });
  }

  close(): void {
    void this.#socket.close();
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
