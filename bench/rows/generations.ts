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
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp } from '../lib/clients.js';
import { benchConfig, cpuMs, type Daemon, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { quantile, type Row, ratioOf } from '../lib/stats.js';

const ID = '9 generations';
const MODERN_VERSION = '2026-07-28';

/** A v2 SDK client that speaks 2026-07-28 or fails (a pin never falls back to initialize). */
async function connectModern(d: Daemon): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'ogf-bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN_VERSION } } },
  );
  await client.connect(
    new ModernTransport(new URL(d.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${d.mcpToken}` } },
    }),
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

export async function generations(quick: boolean): Promise<Row[]> {
  const dir = makeDataDir();
  const d = await startDaemon(dir, benchConfig());
  const legacy: Client[] = [];
  let modern: ModernClient | undefined;
  try {
    const old = await connectMcp(d.mcpUrl, d.mcpToken);
    legacy.push(old);
    let neu = await connectModern(d);
    modern = neu;
    // A fresh 2026-07-28 client per block (issue 41): the v2 client SDK links each modern request's
    // signal to its transport's lifelong one with AbortSignal.any, and Node 20 keeps those links until
    // the request's signal is collected — thousands of calls on one client flooded the log with
    // MaxListenersExceededWarning (1,500+ listeners). A client per block of calls holds a few dozen.
    const freshModern = async () => {
      await neu.close().catch(() => {});
      neu = await connectModern(d);
      modern = neu;
      await neu.listTools();
    };
    const queued = await callTool(old, 'run_command_wait', {
      command: 'noop',
      args: { tag: 'generations' },
      wait_seconds: 0,
    });
    const id = String(queued.pending_id);
    const cancelled = await callTool(old, 'cancel_command', { pending_id: id });
    if (cancelled.status !== 'DENIED') throw new Error(`cancel gave ${JSON.stringify(cancelled)}`);
    await old.listTools();
    await neu.listTools();
    const args = { pending_id: id, wait_seconds: 0 };
    const viaOld = () => callTool(old, 'await_command_result', args);
    const viaNew = async () => {
      const r = await neu.callTool({ name: 'await_command_result', arguments: args }, { timeout: 120_000 });
      const s = r.structuredContent as { status?: string } | undefined;
      if (r.isError || s?.status !== 'DENIED') throw new Error(`2026-07-28 answered ${JSON.stringify(r)}`);
    };
    const blocks = quick ? 4 : 10;
    const per = quick ? 25 : 60;
    await timed(per, viaOld, []); // warm-up (JIT, connections)
    await timed(per, viaNew, []);
    const a: number[] = [];
    const b: number[] = [];
    // The daemon's own CPU per call, per generation: says whether a difference is the daemon's or the
    // client SDKs' (both clients run in this process).
    const cpu = { old: 0, neu: 0 };
    // And this process's CPU per call (the client SDKs, nothing else runs here meanwhile).
    const own = { old: 0, neu: 0 };
    const mine = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    for (let i = 0; i < blocks; i++) {
      await freshModern();
      let c0 = cpuMs(d.pid);
      let m0 = mine();
      await timed(per, viaNew, b);
      cpu.neu += cpuMs(d.pid) - c0;
      own.neu += mine() - m0;
      c0 = cpuMs(d.pid);
      m0 = mine();
      await timed(per, viaOld, a);
      cpu.old += cpuMs(d.pid) - c0;
      own.old += mine() - m0;
    }
    const cpuOld = cpu.old / a.length;
    const cpuNew = cpu.neu / b.length;
    const clientOld = own.old / a.length;
    const clientNew = own.neu / b.length;
    const row = (figure: string, q: number, gated: boolean): Row => {
      const value = quantile(b, q);
      const baseline = quantile(a, q);
      const ratio = ratioOf(value, baseline);
      return {
        id: ID,
        figure,
        value,
        unit: 'ms',
        baseline,
        baselineLabel: '2025 generation',
        ratio,
        goal: gated ? '≤ 1.1×' : '—',
        result: gated ? (ratio !== null && ratio <= 1.1 ? 'pass' : 'miss') : 'info',
        ...(gated
          ? {
              detail: {
                calls_each: a.length,
                modern_p90_ms: quantile(b, 0.9),
                legacy_p90_ms: quantile(a, 0.9),
              },
            }
          : {}),
      };
    };
    const info = (figure: string, value: number, baseline: number): Row => ({
      id: ID,
      figure,
      value,
      unit: 'ms',
      baseline,
      baselineLabel: '2025 generation',
      ratio: ratioOf(value, baseline),
      goal: '—',
      result: 'info',
    });
    return [
      row('2026-07-28 await_command_result (final), median', 0.5, true),
      row('2026-07-28 await_command_result (final), p99', 0.99, false),
      info('daemon CPU per call (user + system), 2026-07-28', cpuNew, cpuOld),
      info('client SDK CPU per call (this process), 2026-07-28', clientNew, clientOld),
    ];
  } finally {
    await modern?.close().catch(() => {});
    await closeMcp(legacy);
    await d.stop();
    removeDir(dir);
  }
}
