/**
 * Row 16 (issue 27, contract 16): durable submissions per second on PostgreSQL vs the embedded SQLite, the
 * same daemon and calls on this machine. Two daemons run side by side: one on SQLite (`broker.db` in its
 * data dir, WAL, `synchronous = FULL`), one with OGF_BROKER_DATABASE_URL on a fresh database of the
 * bench's PostgreSQL 15 (bench/lib/postgres.ts, started durable: fsync, full_page_writes and
 * synchronous_commit on, its data dir on the same disk as the SQLite daemon's). Each level runs in
 * alternating windows (SQLite, PostgreSQL, SQLite, PostgreSQL, …), `run_command_wait` back to back from
 * 10 (and 1) MCP sessions as row 4 does; the rates are the calls of all windows over their time. Reported:
 * PostgreSQL's rate with SQLite's as the baseline (goal @10 ≥ 0.5×), and each call's p50/p99.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { closeMcp } from '../lib/clients.js';
import type { Postgres } from '../lib/postgres.js';
import { benchConfig, type Daemon, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { quantile, type Row, ratioOf } from '../lib/stats.js';
import { type Burst, burst, connectSubmitters, joined, warm } from '../lib/submit.js';

const ID = '16 PostgreSQL throughput';

export async function pgThroughput(pg: Postgres, quick: boolean): Promise<Row[]> {
  const url = await pg.createDatabase('ogf_bench_16');
  const dirs = [makeDataDir(), makeDataDir()];
  const daemons: Daemon[] = [];
  const open: Client[][] = [];
  try {
    const lite = await startDaemon(dirs[0]!, benchConfig());
    daemons.push(lite);
    const post = await startDaemon(dirs[1]!, benchConfig({ node_name: 'bench-pg' }), [], {
      OGF_BROKER_DATABASE_URL: url,
    });
    daemons.push(post);
    const rows: Row[] = [];
    const ms = quick ? 1000 : 2000;
    for (const submitters of [10, 1]) {
      const liteClients = await connectSubmitters(lite, submitters);
      const pgClients = await connectSubmitters(post, submitters);
      open.push(liteClients, pgClients);
      await warm(liteClients, `l${submitters}`);
      await warm(pgClients, `p${submitters}`);
      const rounds = submitters === 10 && !quick ? 3 : 2;
      const liteBursts: Burst[] = [];
      const pgBursts: Burst[] = [];
      for (let r = 0; r < rounds; r++) {
        // Alternate which goes first, so neither always runs right after the other's writes.
        const order = r % 2 === 0 ? (['l', 'p'] as const) : (['p', 'l'] as const);
        for (const which of order) {
          if (which === 'l') liteBursts.push(await burst(liteClients, ms, `l${submitters}r${r}`));
          else pgBursts.push(await burst(pgClients, ms, `p${submitters}r${r}`));
        }
      }
      await closeMcp(liteClients);
      await closeMcp(pgClients);
      open.length = 0;
      const l = joined(liteBursts);
      const p = joined(pgBursts);
      const ratio = ratioOf(p.rate, l.rate);
      const gated = submitters === 10;
      const at = `@${submitters} submitter${submitters > 1 ? 's' : ''}`;
      rows.push({
        id: ID,
        figure: `PostgreSQL: submissions committed/s ${at}`,
        value: p.rate,
        unit: '/s',
        baseline: l.rate,
        baselineLabel: 'SQLite daemon, same calls',
        ratio,
        goal: gated ? '≥ 0.5×' : '—',
        result: gated ? (ratio !== null && ratio >= 0.5 ? 'pass' : 'miss') : 'info',
        detail: {
          windows_each: rounds,
          window_ms: ms,
          calls_pg: p.calls,
          calls_sqlite: l.calls,
          pg_p50_ms: quantile(p.latencies, 0.5),
          pg_p99_ms: quantile(p.latencies, 0.99),
          sqlite_p50_ms: quantile(l.latencies, 0.5),
          sqlite_p99_ms: quantile(l.latencies, 0.99),
          postgres: 'PostgreSQL 15, fsync on, synchronous_commit on, local TCP',
        },
      });
      rows.push({
        id: ID,
        figure: `PostgreSQL: one submission's round trip, p50 ${at}`,
        value: quantile(p.latencies, 0.5),
        unit: 'ms',
        baseline: quantile(l.latencies, 0.5),
        baselineLabel: 'SQLite daemon p50',
        ratio: ratioOf(quantile(p.latencies, 0.5), quantile(l.latencies, 0.5)),
        goal: '—',
        result: 'info',
      });
    }
    return rows;
  } finally {
    for (const c of open) await closeMcp(c);
    for (const d of daemons) await d.stop();
    for (const dir of dirs) removeDir(dir);
  }
}
