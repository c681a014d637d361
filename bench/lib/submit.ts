/**
 * Back-to-back durable submissions for rows 16 and 18: each client sends `run_command_wait` for the bench
 * catalog's `noop` (`wait_seconds: 0`: the call returns only after its transaction committed), the next as
 * soon as the last one answered, for a fixed time. Each call's round trip is kept (send → answer, the
 * bench's monotonic clock), so a row can give its p50 and p99 beside the rate.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, connectMcp } from './clients.js';
import { type Daemon, mcpTokens, SESSIONS_PER_TOKEN } from './procs.js';

export interface Burst {
  /** Calls answered within the window. */
  calls: number;
  /** The window's length, ms (from the first send to the last answer). */
  ms: number;
  /** Each call's send → answer, ms. */
  latencies: number[];
}

/**
 * `count` MCP sessions on `d`, at most SESSIONS_PER_TOKEN per client token; `fresh` names clients of their
 * own (`<fresh>-1`, …), so their pending commands count against no one else's cap.
 */
export async function connectSubmitters(d: Daemon, count: number, fresh?: string): Promise<Client[]> {
  const tokens = await mcpTokens(d, Math.ceil(count / SESSIONS_PER_TOKEN), fresh);
  const clients: Client[] = [];
  for (let i = 0; i < count; i++) clients.push(await connectMcp(d.mcpUrl, tokens[i % tokens.length]));
  return clients;
}

const submit = (c: Client, tag: string) =>
  callTool(c, 'run_command_wait', { command: 'noop', args: { tag }, wait_seconds: 0 });

/** One call per client, untimed: sessions, connections and the daemon's first-call paths warm. */
export async function warm(clients: readonly Client[], prefix: string): Promise<void> {
  await Promise.all(clients.map((c, s) => submit(c, `${prefix}w${s}`)));
}

/**
 * Every client submits back to back until `ms` have passed; `prefix` (a-z0-9, ≤ 12 characters) keeps the
 * tags of one burst apart from another's.
 */
export async function burst(clients: readonly Client[], ms: number, prefix: string): Promise<Burst> {
  const latencies: number[] = [];
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    clients.map(async (c, s) => {
      for (let k = 0; performance.now() < end; k++) {
        const a = performance.now();
        await submit(c, `${prefix}s${s}n${k}`);
        latencies.push(performance.now() - a);
      }
    }),
  );
  return { calls: latencies.length, ms: performance.now() - t0, latencies };
}

/** Several bursts as one: calls and time summed, latencies joined. */
export function joined(bursts: readonly Burst[]): Burst & { rate: number } {
  const calls = bursts.reduce((n, b) => n + b.calls, 0);
  const ms = bursts.reduce((n, b) => n + b.ms, 0);
  return { calls, ms, latencies: bursts.flatMap((b) => b.latencies), rate: (calls / ms) * 1000 };
}
