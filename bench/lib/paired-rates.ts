/**
 * Servers' calls per second at one concurrency, measured so the machine's drift falls on all alike: each
 * side warmed up untimed on sessions of its own, then one-second blocks of each in turn, the side that goes
 * first changing every round (stats.ts rotating), and the medians. Row 4 sets the daemon against the bare echo
 * (the MCP transport's ceiling) and the SDK v2 alone (the transport the daemon is built on); row 15 sets a
 * build with the audit chain against the build before it, both daemons up at once (issue 41: one build's
 * whole run after the other's moved ±20 % with the machine's phase).
 *
 * A daemon's call is `run_command_wait` of `noop` (a durable submission: the call returns once its
 * transaction committed); a bare server's is its own tool (`echo` unless it names another) with the same
 * arguments.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp } from './clients.js';
import { type BareServer, cpuMs, type Daemon, mcpTokens, SESSIONS_PER_TOKEN } from './procs.js';
import { median, rotating } from './stats.js';

/**
 * A bare server answers `tool` (default `echo`); row 4's SDK v2 floor answers the daemon's own tool. With its
 * `pid`, a side's CPU per call is measured too.
 */
export type Server = Daemon | (Pick<BareServer, 'mcpUrl'> & { tool?: string; pid?: number });

/** The tool a side is called with, or undefined for a daemon (`run_command_wait`). */
function bareTool(s: Server): string | undefined {
  return 'mcpToken' in s ? undefined : (s.tool ?? 'echo');
}

/**
 * Every call of a level queues a command that stays pending (the bench's review timeout is an hour), so a
 * level's sessions are spread over enough clients that none reaches its cap of pending commands
 * (`benchConfig`: 10,000) however fast the machine runs — issue 41: the loads stay inside the caps. A whole
 * run reached 10,000 on one client in row 15's nine rounds at ten submitters (~1,100 calls/s), and the row
 * was not measured. A level is planned for at most MAX_CALLS_PER_S (row 4 has read ~1,700/s at a hundred
 * submitters) and at most PENDING_PER_CLIENT on one client; one session cannot be split, and at one
 * submitter a call's round trip bounds it far below that.
 */
const MAX_CALLS_PER_S = 2000;
const PENDING_PER_CLIENT = 5000;

/** How many clients a level of `submitters` sessions calling for `ms` in all is spread over (above). */
function clientsFor(submitters: number, ms: number): number {
  const byCap = Math.ceil((MAX_CALLS_PER_S * ms) / 1000 / PENDING_PER_CLIENT);
  return Math.min(submitters, Math.max(Math.ceil(submitters / SESSIONS_PER_TOKEN), byCap));
}

/** `submitters` sessions on `s` (the daemon, or the bare echo) over `clients` clients, each called once. */
async function sessionsOn(s: Server, submitters: number, clients: number): Promise<Client[]> {
  const bare = bareTool(s);
  const opened: Client[] = [];
  // Each level on clients of its own: @1, @10 and @100 on one client queued ~10,000 commands in 12 s on a
  // quiet machine, its cap (max_pending_per_client), and the row failed with TooManyPending.
  const tokens = 'mcpToken' in s ? await mcpTokens(s, clients, `w${submitters}`) : [undefined];
  try {
    for (let i = 0; i < submitters; i++) opened.push(await connectMcp(s.mcpUrl, tokens[i % tokens.length]));
    await Promise.all(opened.map((c, k) => callOnce(c, bare, `w${submitters}s${k}`)));
  } catch (e) {
    await closeMcp(opened);
    throw e;
  }
  return opened;
}

/** One call: the daemon's `run_command_wait` of `noop`, or a bare server's tool with the same arguments. */
function callOnce(c: Client, bare: string | undefined, tag: string): Promise<unknown> {
  return callTool(c, bare ?? 'run_command_wait', { command: 'noop', args: { tag }, wait_seconds: 0 });
}

/**
 * Calls per second of `clients` back to back for `ms`. `block` makes every tag of the row distinct: the
 * same arguments again from one client would be a twin of a command still awaiting review, not a new one.
 */
async function callsFor(
  clients: Client[],
  bare: string | undefined,
  ms: number,
  block: string,
): Promise<{ rate: number; calls: number }> {
  let n = 0;
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    clients.map(async (c, s) => {
      for (let k = 0; performance.now() < end; k++) {
        await callOnce(c, bare, `t${block}s${s}n${k}`);
        n++;
      }
    }),
  );
  return { rate: (n / (performance.now() - t0)) * 1000, calls: n };
}

/**
 * How long each side runs untimed before its first block at the first level (a fresh daemon) and at the
 * later ones (new sessions on a warm daemon), and its blocks: [full run, --quick]. Warm, because a daemon
 * started for a row has not run its path yet: 1 call of warm-up gave 181–265 submissions/s at one submitter,
 * 1,000 gave 301–352/s (docs/performance-history.md, issue 41's seventh stop).
 */
const WARM_MS = { first: [1000, 300], later: [300, 150] };
const BLOCK_MS = [1000, 400];

export interface PairOptions {
  quick: boolean;
  /** Whether this is the first level timed on these servers (a longer warm-up). */
  first: boolean;
  /** Rounds of one block each. */
  rounds: number;
  /** After `atLeast` rounds, no round starts past this `performance.now()`. */
  until?: number;
  atLeast?: number;
}

export interface PairRates {
  /** Each side's median of its blocks' calls/s. */
  a: number;
  b: number;
  blocks: { a: number[]; b: number[] };
}

/** `a`'s and `b`'s calls/s with `submitters` sessions each (module comment). */
export async function pairedRates(
  a: Server,
  b: Server,
  submitters: number,
  o: PairOptions,
): Promise<PairRates> {
  const r = await alternatedRates([a, b], submitters, o);
  return { a: r.medians[0]!, b: r.medians[1]!, blocks: { a: r.blocks[0]!, b: r.blocks[1]! } };
}

/** Every server's calls/s with `submitters` sessions each, blocks alternated (module comment). */
export async function alternatedRates(
  servers: readonly Server[],
  submitters: number,
  o: PairOptions,
): Promise<{ medians: number[]; blocks: number[][]; cpuPerCall: Array<number | undefined> }> {
  const q = o.quick ? 1 : 0;
  const warm = (o.first ? WARM_MS.first : WARM_MS.later)[q]!;
  const sides = servers.map((server) => ({
    bare: bareTool(server),
    pid: server.pid,
    rates: [] as number[],
    cpu: [] as number[],
  }));
  const opened: Client[][] = [];
  const clients = clientsFor(submitters, warm + o.rounds * BLOCK_MS[q]!);
  try {
    for (const server of servers) opened.push(await sessionsOn(server, submitters, clients));
    for (const [i, side] of sides.entries()) await callsFor(opened[i]!, side.bare, warm, `${submitters}w`);
    await rotating(
      sides.map((side, i) => async (round: number) => {
        const cpu0 = side.pid === undefined ? 0 : cpuMs(side.pid);
        const r = await callsFor(opened[i]!, side.bare, BLOCK_MS[q]!, `${submitters}b${round}`);
        side.rates.push(r.rate);
        if (side.pid !== undefined) side.cpu.push((cpuMs(side.pid) - cpu0) / r.calls);
      }),
      o.rounds,
      (round) => round < (o.atLeast ?? o.rounds) || performance.now() < (o.until ?? Number.POSITIVE_INFINITY),
    );
    return {
      medians: sides.map((s) => median(s.rates)),
      blocks: sides.map((s) => s.rates),
      cpuPerCall: sides.map((s) => (s.cpu.length === 0 ? undefined : median(s.cpu))),
    };
  } finally {
    await closeMcp(opened.flat());
  }
}
