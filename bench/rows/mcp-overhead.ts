/**
 * Row 1, MCP overhead: sequential round trips of `await_command_result` on a command that is already
 * final (cancelled: DENIED/CancelledByCaller) against the daemon, vs an `echo` tool on a bare SDK server
 * over the same Streamable HTTP transport, both in their own process, called from this process by the
 * same SDK client code. Blocks of calls alternate between the two so the machine's drift hits both.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp } from '../lib/clients.js';
import type { BareServer, Daemon } from '../lib/procs.js';
import { median, quantile, type Row, ratioOf } from '../lib/stats.js';

async function timeCalls(client: Client, name: string, args: Record<string, unknown>, n: number) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await callTool(client, name, args);
    out.push(performance.now() - t0);
  }
  return out;
}

export async function mcpOverhead(d: Daemon, bare: BareServer, quick: boolean): Promise<Row> {
  const ours = await connectMcp(d.mcpUrl, d.mcpToken);
  const base = await connectMcp(bare.mcpUrl);
  try {
    const queued = await callTool(ours, 'run_command_wait', {
      command: 'noop',
      args: { tag: 'overhead' },
      wait_seconds: 0,
    });
    const id = String(queued.pending_id);
    const cancelled = await callTool(ours, 'cancel_command', { pending_id: id });
    if (cancelled.status !== 'DENIED') throw new Error(`cancel gave ${JSON.stringify(cancelled)}`);
    const oursArgs = { pending_id: id, wait_seconds: 0 };
    const echoArgs = { pending_id: id, wait_seconds: 0 };
    const blocks = quick ? 4 : 10;
    const per = quick ? 25 : 60;
    await timeCalls(ours, 'await_command_result', oursArgs, per); // warm-up (JIT, connections)
    await timeCalls(base, 'echo', echoArgs, per);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < blocks; i++) {
      a.push(...(await timeCalls(ours, 'await_command_result', oursArgs, per)));
      b.push(...(await timeCalls(base, 'echo', echoArgs, per)));
    }
    const value = median(a);
    const baseline = median(b);
    const ratio = ratioOf(value, baseline);
    return {
      id: '1 mcp overhead',
      figure: 'await_command_result (final) round trip, median',
      value,
      unit: 'ms',
      baseline,
      baselineLabel: 'bare SDK echo',
      ratio,
      goal: '≤ 1.3×',
      result: ratio !== null && ratio <= 1.3 ? 'pass' : 'miss',
      detail: {
        calls_each: a.length,
        ours_p90_ms: quantile(a, 0.9),
        bare_p90_ms: quantile(b, 0.9),
      },
    };
  } finally {
    await closeMcp([ours, base]);
  }
}
