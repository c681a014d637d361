/**
 * Row 18 (issue 27, contract 16): a fleet's durable throughput. Four daemons (`n1`…`n4`, their own data
 * dirs) on one PostgreSQL database, 25 MCP sessions on each (100 in all, every one in the bench process),
 * each sending `run_command_wait` (`wait_seconds: 0`) back to back for a window, all nodes at once. The
 * baseline, on the same database in the same run: one node (`n1`) with its 25 sessions alone while the
 * other three idle. Windows alternate (one node, four nodes, …). Reported: the total submissions committed
 * per second, and each call's p50 and p99, four nodes against one. On this 2-vCPU machine the four
 * daemons, PostgreSQL and the 100 clients share the same two cores: read the ratio as what one shared
 * database costs when its writers multiply here, not as how a fleet of machines would scale.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { closeMcp, Owner } from '../lib/clients.js';
import { startFleet } from '../lib/fleet.js';
import { sampling, type Waits } from '../lib/pg-waits.js';
import type { Postgres } from '../lib/postgres.js';
import { cpuMs, type Daemon } from '../lib/procs.js';
import { infoRow, notMeasured, quantile, type Row } from '../lib/stats.js';
import { type Burst, burst, connectSubmitters, joined, warm } from '../lib/submit.js';

const ID = '18 fleet scale';

/** CPU ms the PostgreSQL processes `pids` have used (one that exited meanwhile counts 0). */
function pgCpu(pids: readonly number[]): number {
  return pids.reduce((n, pid) => {
    try {
      return n + cpuMs(pid);
    } catch {
      return n;
    }
  }, 0);
}
/**
 * Denies what the last window left awaiting review (issue 41): the windows' submissions stay awaiting
 * otherwise, and a quick machine's bursts would pass `max_pending_per_client` (10,000) — the cap the
 * whole fleet shares — and end the row with TooManyPending. Untimed; the database is then as it was.
 */
async function clearPending(d: Daemon): Promise<void> {
  const owner = await Owner.open(d);
  try {
    await owner.denyAwaiting();
  } finally {
    await owner.close();
  }
}

const NODES = 4;
const PER_NODE = 25;

export async function fleetScale(pg: Postgres, quick: boolean): Promise<Row[]> {
  const url = await pg.createDatabase('ogf_bench_18');
  const figure = `${NODES} nodes × ${PER_NODE} submitters: submissions committed/s`;
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  try {
    fleet = await startFleet(
      url,
      Array.from({ length: NODES }, (_, i) => `n${i + 1}`),
    );
  } catch (e) {
    return [notMeasured(ID, figure, '—', (e as Error).message)];
  }
  const sessions: Client[][] = [];
  try {
    // Each node's sessions are a client of their own: its pending commands count against its own cap.
    for (const [i, d] of fleet.nodes.entries())
      sessions.push(await connectSubmitters(d, PER_NODE, `n${i + 1}`));
    await Promise.all(sessions.map((c, i) => warm(c, `n${i}`)));
    const ms = quick ? 1500 : 4000;
    // The database's committed transactions over the fleet's windows: how many a submission takes.
    const commits = async () =>
      Number(
        await pg.sql(
          'ogf_bench_18',
          "SELECT xact_commit FROM pg_stat_database WHERE datname = 'ogf_bench_18'",
        ),
      );
    let fleetCommits = 0;
    const oneWaits: Waits[] = [];
    const fleetWaits: Waits[] = [];
    const rounds = quick ? 1 : 2;
    const one: Burst[] = [];
    const all: Burst[] = [];
    const perNode: number[][] = sessions.map(() => []);
    const daemonCores: number[] = [];
    const benchCores: number[] = [];
    const pgCores: number[] = [];
    for (let r = 0; r < rounds; r++) {
      await clearPending(fleet.nodes[0]!);
      const [b, w] = await sampling(url, 'ogf_bench_18', () => burst(sessions[0]!, ms, `o${r}`));
      one.push(b);
      oneWaits.push(w);
      await clearPending(fleet.nodes[0]!);
      // The denials' commits reach pg_stat_database within ~0.5 s: let them, before the fleet's count.
      await new Promise((res) => setTimeout(res, 1000));
      const x0 = await commits();
      const cpu0 = fleet.nodes.map((d) => cpuMs(d.pid));
      const self0 = process.cpuUsage();
      const pgPids = pg.pids();
      const pg0 = pgCpu(pgPids);
      const [each, w2] = await sampling(url, 'ogf_bench_18', () =>
        Promise.all(sessions.map((c, i) => burst(c, ms, `f${r}n${i}`))),
      );
      fleetWaits.push(w2);
      const self = process.cpuUsage(self0);
      const wall = Math.max(...each.map((b) => b.ms));
      // Cores' worth of CPU each side used in the window: where a 2-core machine's time went.
      daemonCores.push(fleet.nodes.reduce((n, d, i) => n + cpuMs(d.pid) - cpu0[i]!, 0) / wall);
      benchCores.push((self.user + self.system) / 1000 / wall);
      pgCores.push((pgCpu(pgPids) - pg0) / wall);
      // pg_stat counters reach the view within ~0.5 s of the commit (the stats collector's flush).
      await new Promise((r) => setTimeout(r, 1000));
      fleetCommits += (await commits()) - x0;
      for (const [i, b] of each.entries()) perNode[i]!.push((b.calls / b.ms) * 1000);
      // One window of four concurrent bursts: the calls of all, over the longest.
      all.push({
        calls: each.reduce((s, b) => s + b.calls, 0),
        ms: Math.max(...each.map((b) => b.ms)),
        latencies: each.flatMap((b) => b.latencies),
      });
    }
    const o = joined(one);
    const f = joined(all);
    const line = (fig: string, value: number, baseline: number, unit: string, label: string): Row =>
      infoRow(ID, fig, value, unit, baseline, label);
    const total = line(figure, f.rate, o.rate, '/s', `1 node × ${PER_NODE}, same database`);
    total.detail = {
      windows_each: rounds,
      window_ms: ms,
      calls_fleet: f.calls,
      calls_one: o.calls,
      per_node_rate: perNode.map((xs) => xs.reduce((s, x) => s + x, 0) / xs.length),
      fleet_daemons_cpu_cores: daemonCores,
      bench_clients_cpu_cores: benchCores,
      postgres_cpu_cores: pgCores,
      pg_transactions_per_submission_fleet: fleetCommits / f.calls,
      // Sampled every 50 ms by a connection of the bench's own (also while the 1-node baseline ran).
      pg_sessions_active_mean_fleet: fleetWaits.map((w) => w.meanActive),
      pg_sessions_lock_waiting_mean_fleet: fleetWaits.map((w) => w.meanLockWaits),
      pg_lock_wait_events_fleet: fleetWaits.map((w) => w.events),
      pg_lock_waits_by_table_fleet: fleetWaits.map((w) => w.tables),
      pg_sessions_active_mean_one: oneWaits.map((w) => w.meanActive),
      pg_sessions_lock_waiting_mean_one: oneWaits.map((w) => w.meanLockWaits),
    };
    const at = (q: number, name: string) =>
      line(
        `${NODES} × ${PER_NODE}: one submission's round trip, ${name}`,
        quantile(f.latencies, q),
        quantile(o.latencies, q),
        'ms',
        `1 × ${PER_NODE}, ${name}`,
      );
    return [total, at(0.5, 'p50'), at(0.99, 'p99')];
  } catch (e) {
    return [notMeasured(ID, figure, '—', (e as Error).message)];
  } finally {
    for (const c of sessions) await closeMcp(c);
    await fleet.stop();
  }
}
