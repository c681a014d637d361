/**
 * What the upstream rows (7, 8) need besides the daemon: the real upstream servers from node_modules and
 * our test upstream, an SDK client talking to one of them straight over stdio (the baseline: the same
 * v2 `Client` the daemon's upstream registry uses, connected the same way — legacy era, no
 * capabilities, calls sent with `request`), and a FIFO on which the test upstream announces each
 * `tools/call` the moment its handler runs (it appends one JSON line per call to its log file; the log
 * file here is a FIFO, so the line arrives in this process at once and is stamped on arrival).
 */
import { spawnSync } from 'node:child_process';
import { constants, mkdtempSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ROOT, removeDir, sleep } from './procs.js';

const require = createRequire(import.meta.url);
export const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
export const TEST_UPSTREAM = join(ROOT, 'test', 'fixtures', 'test-upstream.mjs');

/** The environment the daemon gives a stdio upstream (contract 7: PATH/HOME/LANG only). */
function reducedEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    LANG: process.env.LANG ?? 'C.UTF-8',
  };
}

/** An SDK client connected straight to a stdio server started from `argv` (the bench's own child). */
export interface DirectUpstream {
  client: Client;
  /** Sends one `tools/call` as the daemon's upstream executor does; resolves with the raw result. */
  call(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function connectDirect(argv: readonly string[]): Promise<DirectUpstream> {
  const [command, ...args] = argv;
  const transport = new StdioClientTransport({
    command: command!,
    args,
    env: reducedEnv(),
    stderr: 'ignore',
  });
  // As daemon/upstreams/registry.ts: no capabilities, a known legacy era (no discovery probe).
  const client = new Client({ name: 'ogf-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport, { prior: { kind: 'legacy' }, timeout: 30_000 });
  return {
    client,
    call: async (tool, a) =>
      (await client.request(
        { method: 'tools/call', params: { name: tool, arguments: a } },
        { timeout: 30_000 },
      )) as unknown as Record<string, unknown>,
    close: async () => {
      await client.close().catch(() => {});
      await transport.close().catch(() => {});
    },
  };
}

/** Polls the daemon's tools/list until every name in `names` is listed (upstreams connect in the background). */
export async function waitForTools(client: LegacyClient, names: readonly string[], timeoutMs = 45_000) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const listed = new Set((await client.listTools()).tools.map((t) => t.name));
    if (names.every((n) => listed.has(n))) return;
    if (performance.now() > end) throw new Error(`the daemon never listed ${names.join(', ')}`);
    await sleep(100);
  }
}

/**
 * A FIFO the test upstream uses as its log file (`test-upstream.mjs ok <fifo>`): every `tools/call` it
 * receives is one JSON line `{"pid","call","arguments"}`, written synchronously at the start of its
 * handler — the receipt moment. Lines are stamped with `performance.now()` as they arrive, keyed by the
 * call's `arguments.text`, and kept, so a wait never misses a line that came before it was asked for.
 */
export class ReceiptFifo {
  readonly path: string;
  readonly #dir: string;
  readonly #socket: Socket;
  readonly #seen = new Map<string, number>();
  readonly #waiting = new Map<string, (at: number) => void>();
  #tail = '';

  private constructor(dir: string, path: string, socket: Socket) {
    this.#dir = dir;
    this.path = path;
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      const at = performance.now();
      const lines = (this.#tail + chunk.toString('utf8')).split('\n');
      this.#tail = lines.pop() ?? '';
      for (const line of lines) this.#line(line, at);
    });
  }

  /** Makes the FIFO and opens it read-write (so no writer's close is ever an end of file for us). */
  static open(): ReceiptFifo {
    const dir = mkdtempSync(join(tmpdir(), 'ogf-bench-fifo-'));
    const path = join(dir, 'calls.fifo');
    // No shell (architecture rule 10): the mkfifo program with its argv.
    const made = spawnSync('mkfifo', ['-m', '600', path], { shell: false, stdio: 'ignore' });
    if (made.status !== 0) throw new Error(`mkfifo ${path} failed (${made.error?.message ?? made.status})`);
    // O_RDWR on a FIFO is defined on Linux: opening never blocks, and the writers' opens never block either.
    const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    return new ReceiptFifo(dir, path, new Socket({ fd, readable: true, writable: false }));
  }

  #line(line: string, at: number): void {
    if (line === '') return;
    const entry = JSON.parse(line) as { call?: string; arguments?: { text?: unknown } };
    if (entry.call === undefined || typeof entry.arguments?.text !== 'string') return;
    const key = entry.arguments.text;
    const waiter = this.#waiting.get(key);
    if (waiter) {
      this.#waiting.delete(key);
      waiter(at);
    } else this.#seen.set(key, at);
  }

  /** When the call whose `arguments.text` is `key` reached the upstream's handler. */
  receipt(key: string, timeoutMs = 30_000): Promise<number> {
    const at = this.#seen.get(key);
    if (at !== undefined) {
      this.#seen.delete(key);
      return Promise.resolve(at);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(key);
        reject(new Error(`the test upstream never announced the call ${key}`));
      }, timeoutMs);
      this.#waiting.set(key, (t) => {
        clearTimeout(timer);
        resolve(t);
      });
    });
  }

  close(): void {
    this.#socket.destroy();
    removeDir(this.#dir);
  }
}
