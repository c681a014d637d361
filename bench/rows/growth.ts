/**
 * Row 6, growth: the daemon's RSS and open descriptors (/proc/<pid>/fd) after N full cycles — queued
 * over MCP, approved by an owner socket, launched (/bin/true), finished, result read by the waiting
 * call — against the same figures after the first 1,000. At each checkpoint the load pauses, in-flight
 * cycles finish and the daemon idles 5.5 s before three samples are taken (median).
 * Then the daemon is asked for a full garbage collection through its inspector (lib/inspector.ts) and RSS
 * and the JS heap are sampled again: what is still there is what the daemon keeps, while the first RSS
 * sample also holds whatever garbage V8 had not collected yet at that moment (tens of MiB either way).
 *
 * The data dir sits on /dev/shm when there is one: fsync is free there, so tens of thousands of full
 * cycles fit the bench's time budget. Durability cost is row 4's subject; this row is about leaks. N is
 * 50,000 or what fits in the time left, and the table says which.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { INSPECT_ARG, Inspector } from '../lib/inspector.js';
import { benchConfig, makeDataDir, openFds, removeDir, rssMiB, sleep, startDaemon } from '../lib/procs.js';
import { median, notMeasured, type Row, ratioOf } from '../lib/stats.js';

interface Sample {
  cycles: number;
  rss: number;
  fds: number;
  /** RSS and the JS heap in use right after a full collection (MiB). */
  rss_after_gc: number;
  heap_used_after_gc: number;
  at_s: number;
}

const MiB = 1024 * 1024;

/** The row's four lines when the budget ended after the first checkpoint: not measured, and why. */
function onlyOneSample(base: Sample, budgetMs: number): Row[] {
  const why = `the time budget (${(budgetMs / 1000).toFixed(0)} s) ended after the first checkpoint (${base.cycles} cycles, at ${base.at_s.toFixed(0)} s): nothing to compare it with`;
  return [
    ['daemon RSS', '≤ 1.10×'],
    ['daemon RSS (after a full GC)', '≤ 1.10×'],
    ['JS heap used (after a full GC)', '—'],
    ['open fds', '≤ 1.10×'],
  ].map(([what, goal]) =>
    notMeasured('6 growth', `${what} after the first ${base.cycles} cycles`, goal!, why),
  );
}

export async function growth(budgetMs: number, quick: boolean): Promise<Row[]> {
  const target = quick ? 3000 : 50_000;
  const first = 1000;
  const dir = makeDataDir(true);
  const d = await startDaemon(dir, benchConfig(), [INSPECT_ARG]);
  const inspector = await Inspector.attach(d);
  const owner = await Owner.open(d);
  const clients: Client[] = [];
  const t0 = performance.now();
  const deadline = t0 + budgetMs;
  try {
    owner.onUpsert = (v) => {
      if (v.state === 'awaiting_review') void owner.approve(v);
    };
    for (let i = 0; i < 8; i++) clients.push(await connectMcp(d.mcpUrl, d.mcpToken));
    let issued = 0;
    let done = 0;
    let failed = 0;
    const runUntil = (n: number) =>
      Promise.all(
        clients.map(async (c) => {
          while (issued < n && performance.now() < deadline) {
            const k = issued++;
            const r = await callTool(c, 'run_command_wait', {
              command: 'noop',
              args: { tag: `g${k}` },
              wait_seconds: 60,
            });
            if (r.status === 'SUCCEEDED') done++;
            else failed++;
          }
        }),
      );
    const sample = async (): Promise<Sample> => {
      // In-flight work settles. The clients' pooled connections stay (the daemon keeps an idle one 130 s):
      // the same 8 sessions hold them at every sample, so they are counted alike.
      await sleep(5500);
      const rs: number[] = [];
      const fs: number[] = [];
      for (let i = 0; i < 3; i++) {
        rs.push(rssMiB(d.pid));
        fs.push(openFds(d.pid));
        await sleep(200);
      }
      await inspector.collectGarbage();
      await sleep(500);
      const gcRss: number[] = [];
      for (let i = 0; i < 3; i++) {
        gcRss.push(rssMiB(d.pid));
        await sleep(200);
      }
      const heap = await inspector.memoryUsage();
      return {
        cycles: done + failed,
        rss: median(rs),
        fds: median(fs),
        rss_after_gc: median(gcRss),
        heap_used_after_gc: heap.heapUsed / MiB,
        at_s: (performance.now() - t0) / 1000,
      };
    };
    const samples: Sample[] = [];
    await runUntil(first);
    samples.push(await sample());
    for (const n of quick ? [2000, 3000] : [10_000, 25_000, 50_000]) {
      if (performance.now() > deadline - 8000) break;
      await runUntil(n);
      samples.push(await sample());
    }
    const base = samples[0]!;
    const last = samples[samples.length - 1]!;
    // One sample is no comparison: the rows say so instead of comparing the first sample with itself.
    if (samples.length < 2) return onlyOneSample(base, budgetMs);
    const cycleRate =
      (last.cycles - base.cycles) / Math.max(0.001, last.at_s - base.at_s - 7.2 * (samples.length - 1));
    const detail = {
      samples,
      failed,
      target,
      cycles_per_s: cycleRate,
      data_dir: dir.startsWith('/dev/shm') ? '/dev/shm' : 'tmp',
    };
    const rssRatio = ratioOf(last.rss, base.rss);
    const fdRatio = ratioOf(last.fds, base.fds);
    const gcRatio = ratioOf(last.rss_after_gc, base.rss_after_gc);
    const label = `after ${base.cycles}`;
    const figure = (what: string) =>
      `${what} after ${last.cycles} cycles${last.cycles < target ? ` (of ${target}: time budget)` : ''}`;
    return [
      {
        id: '6 growth',
        figure: figure('daemon RSS'),
        value: last.rss,
        unit: 'MiB',
        baseline: base.rss,
        baselineLabel: label,
        ratio: rssRatio,
        goal: '≤ 1.10×',
        result: rssRatio !== null && rssRatio <= 1.1 ? 'pass' : 'miss',
        detail,
      },
      {
        id: '6 growth',
        figure: figure('daemon RSS (after a full GC)'),
        value: last.rss_after_gc,
        unit: 'MiB',
        baseline: base.rss_after_gc,
        baselineLabel: label,
        ratio: gcRatio,
        goal: '≤ 1.10×',
        result: gcRatio !== null && gcRatio <= 1.1 ? 'pass' : 'miss',
      },
      {
        id: '6 growth',
        figure: figure('JS heap used (after a full GC)'),
        value: last.heap_used_after_gc,
        unit: 'MiB',
        baseline: base.heap_used_after_gc,
        baselineLabel: label,
        ratio: ratioOf(last.heap_used_after_gc, base.heap_used_after_gc),
        goal: '—',
        result: 'info',
      },
      {
        id: '6 growth',
        figure: figure('open fds'),
        value: last.fds,
        unit: '',
        baseline: base.fds,
        baselineLabel: label,
        ratio: fdRatio,
        goal: '≤ 1.10×',
        result: fdRatio !== null && fdRatio <= 1.1 ? 'pass' : 'miss',
      },
    ];
  } finally {
    owner.onUpsert = () => {};
    inspector.close();
    await closeMcp(clients);
    await owner.close();
    await d.stop();
    removeDir(dir);
  }
}
