/**
 * Row 6, growth: the daemon's RSS and open descriptors (/proc/<pid>/fd) after N full cycles — queued
 * over MCP, approved by an owner socket, launched (/bin/true), finished, result read by the waiting
 * call — against the same figures after the first 1,000. At each checkpoint the load pauses, in-flight
 * cycles finish and the daemon idles 5.5 s (past the HTTP keep-alive timeout) before three samples are taken (median).
 *
 * The data dir sits on /dev/shm when there is one: fsync is free there, so tens of thousands of full
 * cycles fit the bench's time budget. Durability cost is row 4's subject; this row is about leaks. N is
 * 50,000 or what fits in the time left, and the table says which.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { benchConfig, makeDataDir, openFds, removeDir, rssMiB, sleep, startDaemon } from '../lib/procs.js';
import { median, type Row, ratioOf } from '../lib/stats.js';

interface Sample {
  cycles: number;
  rss: number;
  fds: number;
  at_s: number;
}

export async function growth(budgetMs: number, quick: boolean): Promise<Row[]> {
  const target = quick ? 3000 : 50_000;
  const first = 1000;
  const dir = makeDataDir(true);
  const d = await startDaemon(dir, benchConfig());
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
      // Past the HTTP keep-alive timeout (5 s), so idle pooled connections do not count as handles.
      await sleep(5500);
      const rs: number[] = [];
      const fs: number[] = [];
      for (let i = 0; i < 3; i++) {
        rs.push(rssMiB(d.pid));
        fs.push(openFds(d.pid));
        await sleep(200);
      }
      return {
        cycles: done + failed,
        rss: median(rs),
        fds: median(fs),
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
    const cycleRate =
      (last.cycles - base.cycles) / Math.max(0.001, last.at_s - base.at_s - 6.1 * (samples.length - 1));
    const detail = {
      samples,
      failed,
      target,
      cycles_per_s: cycleRate,
      data_dir: dir.startsWith('/dev/shm') ? '/dev/shm' : 'tmp',
    };
    const rssRatio = ratioOf(last.rss, base.rss);
    const fdRatio = ratioOf(last.fds, base.fds);
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
    await closeMcp(clients);
    await owner.close();
    await d.stop();
    removeDir(dir);
  }
}
