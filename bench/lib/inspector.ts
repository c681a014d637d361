/**
 * The daemon's V8 seen through its inspector, for row 6 (growth): the bench starts the daemon with
 * `--inspect=127.0.0.1:0` (loopback, a random port, bench only) and asks it for a full garbage collection
 * and `process.memoryUsage()`. A point sample of RSS lands anywhere in V8's collection cycle: with ~23 MiB
 * live, the old space was measured holding 30 to 90 MiB between two mark-compacts, so RSS alone cannot
 * tell growth from garbage not yet collected (docs/performance-history.md, "Snapshot and growth").
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { Daemon } from './procs.js';
import { sleep } from './procs.js';

export interface MemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** `--inspect=127.0.0.1:0`: the node argument `Inspector.attach` expects the daemon to have been started with. */
export const INSPECT_ARG = '--inspect=127.0.0.1:0';

export class Inspector {
  readonly #ws: WebSocket;
  readonly #pending = new Map<number, (msg: Record<string, unknown>) => void>();
  #next = 1;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { id?: number } & Record<string, unknown>;
      if (msg.id !== undefined) this.#pending.get(msg.id)?.(msg);
      this.#pending.delete(msg.id ?? -1);
    });
  }

  /** Connects to the inspector of `d`, whose URL node printed to stderr (the daemon's log file). */
  static async attach(d: Daemon, timeoutMs = 10_000): Promise<Inspector> {
    const deadline = Date.now() + timeoutMs;
    let url: string | undefined;
    while (url === undefined) {
      const log = readFileSync(join(d.dataDir, 'daemon.log'), 'utf8');
      url = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f-]+)/.exec(log)?.[1];
      if (url === undefined) {
        if (Date.now() > deadline) throw new Error(`no inspector URL in ${d.dataDir}/daemon.log`);
        await sleep(50);
      }
    }
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Inspector(ws);
  }

  #call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (msg) =>
        msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg),
      );
      this.#ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** A full (mark-compact) collection in the daemon. */
  async collectGarbage(): Promise<void> {
    await this.#call('HeapProfiler.collectGarbage');
  }

  /** The daemon's `process.memoryUsage()`, in bytes. */
  async memoryUsage(): Promise<MemoryUsage> {
    const r = (await this.#call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    })) as { result: { result: { value: string } } };
    return JSON.parse(r.result.result.value) as MemoryUsage;
  }

  close(): void {
    this.#ws.close();
  }
}
