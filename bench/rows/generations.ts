/**
 * Row 9, the 2026-07-28 generation vs the 2025 one for the same `await_command_result` (issue 12,
 * contract 10): one command already final (queued, then cancelled: DENIED/CancelledByCaller), awaited by
 * a 2025 SDK client (`@modelcontextprotocol/sdk`, initialize + Mcp-Session-Id, as row 1) and by a
 * 2026-07-28 client (`@modelcontextprotocol/client` pinned to that revision: server/discover, the
 * per-request envelope, no session), both on the same URL and token, both from this process. Both listed
 * the tools first, so both SDKs validate the answer against the tool's outputSchema. Blocks of calls
 * alternate between the two so the machine's drift hits both. Also reported: the daemon's CPU time per
 * call in each generation's blocks (/proc), which tells the daemon's share of a difference from the
 * client SDKs' (both clients run in this process), and this process's CPU per call: the client SDKs'
 * own work (issue 41).
 *
 * The goal is stated against the floor (issue 41): the SDK v2 alone (bench/bare-generations.ts) serving
 * the same tool and the same answer in both generations, timed by the same two clients in blocks
 * alternating with the daemon's. The daemon's 2026-07-28 / 2025 ratio may exceed that floor's by 10 %.
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp } from '../lib/clients.js';
import {
  benchConfig,
  cpuMs,
  makeDataDir,
  removeDir,
  startBareGenerations,
  startDaemon,
} from '../lib/procs.js';
import { infoRow, quantile, type Row, ratioOf } from '../lib/stats.js';

const ID = '9 generations';
const MODERN_VERSION = '2026-07-28';

/** A v2 SDK client that speaks 2026-07-28 or fails (a pin never falls back to initialize). */
async function connectModern(url: string, token: string): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'ogf-bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN_VERSION } } },
  );
  await client.connect(
    new ModernTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  if (client.getProtocolEra() !== 'modern' || client.getNegotiatedProtocolVersion() !== MODERN_VERSION)
    throw new Error(
      `the v2 client negotiated ${client.getNegotiatedProtocolVersion()}, not ${MODERN_VERSION}`,
    );
  return client;
}

async function timed(n: number, one: () => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await one();
    into.push(performance.now() - t0);
  }
}

/** One server's two clients (a 2025 one, a fresh 2026-07-28 one per block) and the times of their calls. */
class Pair {
  readonly legacyMs: number[] = [];
  readonly modernMs: number[] = [];
  #modern: ModernClient | undefined;

  constructor(
    readonly url: string,
    readonly token: string,
    readonly old: Client,
    readonly args: Record<string, unknown>,
  ) {}

  viaOld = async () => {
    const s = await callTool(this.old, 'await_command_result', this.args);
    if (s.status !== 'DENIED') throw new Error(`2025 answered ${JSON.stringify(s)}`);
  };

  viaNew = async () => {
    const r = await this.#modern!.callTool(
      { name: 'await_command_result', arguments: this.args },
      { timeout: 120_000 },
    );
    const s = r.structuredContent as { status?: string } | undefined;
    if (r.isError || s?.status !== 'DENIED') throw new Error(`2026-07-28 answered ${JSON.stringify(r)}`);
  };

  /**
   * A fresh 2026-07-28 client per block (issue 41): the v2 client SDK links each modern request's signal to
   * its transport's lifelong one with AbortSignal.any, and Node 20 keeps those links until the request's
   * signal is collected — thousands of calls on one client flooded the log with MaxListenersExceededWarning
   * (1,500+ listeners). A client per block of calls holds a few dozen. Both list the tools first, so both
   * SDKs validate the answer against the tool's outputSchema.
   */
  async freshModern(): Promise<void> {
    await this.#modern?.close().catch(() => {});
    this.#modern = await connectModern(this.url, this.token);
    await this.#modern.listTools();
  }

  async close(): Promise<void> {
    await this.#modern?.close().catch(() => {});
  }
}

export async function generations(quick: boolean): Promise<Row[]> {
  const dir = makeDataDir();
  const d = await startDaemon(dir, benchConfig());
  const legacy: Client[] = [];
  const pairs: Pair[] = [];
  let bare: { mcpUrl: string; stop(): Promise<void> } | undefined;
  try {
    const old = await connectMcp(d.mcpUrl, d.mcpToken);
    legacy.push(old);
    const queued = await callTool(old, 'run_command_wait', {
      command: 'noop',
      args: { tag: 'generations' },
      wait_seconds: 0,
    });
    const id = String(queued.pending_id);
    const cancelled = await callTool(old, 'cancel_command', { pending_id: id });
    if (cancelled.status !== 'DENIED') throw new Error(`cancel gave ${JSON.stringify(cancelled)}`);
    const args = { pending_id: id, wait_seconds: 0 };
    // The floor: the SDK alone, listing the daemon's own tool and answering with the daemon's own answer.
    const tool = (await old.listTools()).tools.find((t) => t.name === 'await_command_result');
    const answer = await old.callTool({ name: 'await_command_result', arguments: args });
    bare = await startBareGenerations(tool, {
      content: answer.content,
      structuredContent: answer.structuredContent,
    });
    const bareOld = await connectMcp(bare.mcpUrl, d.mcpToken);
    legacy.push(bareOld);
    await bareOld.listTools();
    const daemon = new Pair(d.mcpUrl, d.mcpToken, old, args);
    const floor = new Pair(bare.mcpUrl, d.mcpToken, bareOld, args);
    pairs.push(daemon, floor);
    const blocks = quick ? 4 : 10;
    const per = quick ? 25 : 60;
    for (const p of pairs) {
      await p.freshModern();
      await timed(per, p.viaOld, []); // warm-up (JIT, connections)
      await timed(per, p.viaNew, []);
    }
    // The daemon's own CPU per call, per generation: says whether a difference is the daemon's or the
    // client SDKs' (both clients run in this process).
    const cpu = { old: 0, neu: 0 };
    // And this process's CPU per call (the client SDKs, nothing else runs here meanwhile).
    const own = { old: 0, neu: 0 };
    const mine = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    // Blocks alternate between the generations and between the daemon and the floor, so the machine's
    // drift hits all four.
    for (let i = 0; i < blocks; i++) {
      await daemon.freshModern();
      let c0 = cpuMs(d.pid);
      let m0 = mine();
      await timed(per, daemon.viaNew, daemon.modernMs);
      cpu.neu += cpuMs(d.pid) - c0;
      own.neu += mine() - m0;
      c0 = cpuMs(d.pid);
      m0 = mine();
      await timed(per, daemon.viaOld, daemon.legacyMs);
      cpu.old += cpuMs(d.pid) - c0;
      own.old += mine() - m0;
      await floor.freshModern();
      await timed(per, floor.viaNew, floor.modernMs);
      await timed(per, floor.viaOld, floor.legacyMs);
    }
    return rowsOf(daemon, floor, {
      daemonNew: cpu.neu / daemon.modernMs.length,
      daemonOld: cpu.old / daemon.legacyMs.length,
      clientNew: own.neu / daemon.modernMs.length,
      clientOld: own.old / daemon.legacyMs.length,
    });
  } finally {
    for (const p of pairs) await p.close();
    await closeMcp(legacy);
    await bare?.stop();
    await d.stop();
    removeDir(dir);
  }
}

function rowsOf(
  daemon: Pair,
  floor: Pair,
  cpu: { daemonNew: number; daemonOld: number; clientNew: number; clientOld: number },
): Row[] {
  const info = (figure: string, value: number, baseline: number, label: string): Row =>
    infoRow(ID, figure, value, 'ms', baseline, label);
  const median = (xs: number[]) => quantile(xs, 0.5);
  const daemonRatio = ratioOf(median(daemon.modernMs), median(daemon.legacyMs));
  const floorRatio = ratioOf(median(floor.modernMs), median(floor.legacyMs));
  const excess = daemonRatio !== null && floorRatio !== null ? ratioOf(daemonRatio, floorRatio) : null;
  return [
    info(
      '2026-07-28 await_command_result (final), median',
      median(daemon.modernMs),
      median(daemon.legacyMs),
      '2025 generation',
    ),
    info(
      '2026-07-28 await_command_result (final), p99',
      quantile(daemon.modernMs, 0.99),
      quantile(daemon.legacyMs, 0.99),
      '2025 generation',
    ),
    info(
      'floor: the SDK v2 alone, same tool and answer, 2026-07-28, median',
      median(floor.modernMs),
      median(floor.legacyMs),
      '2025 generation, same server',
    ),
    {
      id: ID,
      figure: '2026-07-28 / 2025 medians, the daemon vs the floor',
      value: daemonRatio ?? Number.NaN,
      unit: '×',
      baseline: floorRatio ?? Number.NaN,
      baselineLabel: 'the same ratio, the SDK v2 alone',
      ratio: excess,
      goal: '≤ 1.1×',
      result: excess !== null && excess <= 1.1 ? 'pass' : 'miss',
      detail: {
        calls_each: daemon.legacyMs.length,
        modern_p90_ms: quantile(daemon.modernMs, 0.9),
        legacy_p90_ms: quantile(daemon.legacyMs, 0.9),
        floor_modern_p90_ms: quantile(floor.modernMs, 0.9),
        floor_legacy_p90_ms: quantile(floor.legacyMs, 0.9),
      },
    },
    info('daemon CPU per call (user + system), 2026-07-28', cpu.daemonNew, cpu.daemonOld, '2025 generation'),
    info(
      'client SDK CPU per call (this process), 2026-07-28',
      cpu.clientNew,
      cpu.clientOld,
      '2025 generation',
    ),
  ];
}
