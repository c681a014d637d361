/**
 * Row 17 (issue 27, contract 16): an approval made on another node vs on the command's own node. Two
 * daemons, `node-a` and `node-b`, on one PostgreSQL database (different data dirs, same
 * OGF_BROKER_DATABASE_URL). An AI client submits `noop` to B; once both owners have seen it awaiting
 * review, one approves it: the owner on A (cross-node: B must hear the decision through the database,
 * LISTEN/NOTIFY, and launch) or the owner on B (same node: the baseline). The time is from sending the
 * `approve` frame to the `running` upsert arriving at the owner socket on B, the same observation point for
 * both: B sends it only after it committed `running`, which rule 3 requires right before it spawns. Both
 * owners run in the bench process, so both ends read one monotonic clock. Cross and same cycles alternate
 * one by one; a cycle also waits for `succeeded` on B, so a spawn never lands in the next sample.
 * Contract 16 promises a cross-node launch within 1 s; a launch not seen within 10 s fails the row.
 */
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { startFleet } from '../lib/fleet.js';
import type { Postgres } from '../lib/postgres.js';
import { median, notMeasured, quantile, type Row, ratioOf } from '../lib/stats.js';
import { Upserts } from '../lib/upserts.js';

const ID = '17 cross-node approve';

/** Copies the nodes' daemon.log files to a dir that outlives the row (a failure's evidence). */
function keepLogs(dataDirs: readonly string[]): string {
  const keep = mkdtempSync(join(tmpdir(), 'ogf-bench-17-logs-'));
  dataDirs.forEach((dir, i) => {
    copyFileSync(join(dir, 'daemon.log'), join(keep, `node-${'ab'[i]}.log`));
  });
  return keep;
}
const GOAL = '≤ 2×';

export async function crossNode(pg: Postgres, quick: boolean): Promise<Row[]> {
  const url = await pg.createDatabase('ogf_bench_17');
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  try {
    fleet = await startFleet(url, ['node-a', 'node-b']);
  } catch (e) {
    return [notMeasured(ID, 'cross-node approve → running on B, p50', GOAL, (e as Error).message)];
  }
  const [a, b] = fleet.nodes as [(typeof fleet.nodes)[0], (typeof fleet.nodes)[0]];
  const owners: Owner[] = [];
  const ai = await connectMcp(b.mcpUrl, b.mcpToken);
  try {
    const ownerA = await Owner.open(a);
    owners.push(ownerA);
    const ownerB = await Owner.open(b);
    owners.push(ownerB);
    const seenA = new Upserts(ownerA);
    const seenB = new Upserts(ownerB);
    const cross: number[] = [];
    const same: number[] = [];
    const crossDone: number[] = [];
    const sameDone: number[] = [];
    const crossReply: number[] = [];
    const sameReply: number[] = [];
    const crossBackToA: number[] = [];
    const n = quick ? 6 : 25;
    const warmUp = quick ? 2 : 4;
    for (let i = -warmUp; i < n; i++) {
      const k = i + warmUp;
      for (const kind of k % 2 === 0 ? ['x', 's'] : ['s', 'x']) {
        const tag = `${kind}${k}`;
        const onA = seenA.next(tag, 'awaiting_review', 10_000);
        const onB = seenB.next(tag, 'awaiting_review', 10_000);
        const r = await callTool(ai, 'run_command_wait', { command: 'noop', args: { tag }, wait_seconds: 0 });
        if (r.status !== 'PENDING') throw new Error(`noop answered ${JSON.stringify(r)}`);
        const [va, vb] = await Promise.all([onA, onB]);
        const running = seenB.next(tag, 'running', 10_000);
        const done = seenB.next(tag, 'succeeded', 10_000);
        // A reads B's row back when it hears of its change: by then it may already be `succeeded`, so A's
        // owner sees running or succeeded first, whichever B had committed when A read it.
        const backToA =
          kind === 'x'
            ? Promise.any([seenA.next(tag, 'running', 10_000), seenA.next(tag, 'succeeded', 10_000)])
            : undefined;
        // Awaited below, one after another: a timeout of a later one must not go unhandled meanwhile.
        for (const p of [running, done, backToA]) p?.catch(() => {});
        const approver = kind === 'x' ? ownerA : ownerB;
        const t0 = performance.now();
        const reply = await approver.approve(kind === 'x' ? va.view : vb.view);
        const t1 = performance.now();
        if (reply.ok !== true) throw new Error(`approve of ${tag} refused: ${JSON.stringify(reply)}`);
        const run = await running.catch(async () => {
          // Late or never: wait 30 s more to tell which, and say where the logs are kept.
          const late = await seenB.next(tag, 'running', 30_000).catch(() => undefined);
          const logs = keepLogs(fleet.nodes.map((d) => d.dataDir));
          throw new Error(
            `${kind === 'x' ? 'cross-node' : 'same-node'} approval of ${tag} (cycle ${k}): the owner on B saw no running within 10 s; ${
              late ? `it came ${((late.at - t0) / 1000).toFixed(1)} s after the approve` : 'nor within 40 s'
            } (daemon logs kept in ${logs})`,
          );
        });
        const node = (run.view as { node?: string }).node;
        if (node !== 'node-b') throw new Error(`${tag} ran on node ${node}, not node-b`);
        const fin = await done;
        const back = await backToA?.catch((e: Error) => {
          throw new Error(`owner on A, ${tag}: ${e.message}`);
        });
        if (i < 0) continue;
        if (kind === 'x') {
          cross.push(run.at - t0);
          crossDone.push(fin.at - t0);
          crossReply.push(t1 - t0);
          crossBackToA.push(back!.at - t0);
        } else {
          same.push(run.at - t0);
          sameDone.push(fin.at - t0);
          sameReply.push(t1 - t0);
        }
      }
    }
    const p50 = median(cross);
    const base = median(same);
    const ratio = ratioOf(p50, base);
    const info = (figure: string, value: number, baseline: number, label: string): Row => ({
      id: ID,
      figure,
      value,
      unit: 'ms',
      baseline,
      baselineLabel: label,
      ratio: ratioOf(value, baseline),
      goal: '—',
      result: 'info',
    });
    return [
      {
        id: ID,
        figure: 'approve on A → running on B (owner on B), p50',
        value: p50,
        unit: 'ms',
        baseline: base,
        baselineLabel: 'approve on B, same node, p50',
        ratio,
        goal: GOAL,
        result: ratio !== null && ratio <= 2 ? 'pass' : 'miss',
        detail: {
          cycles_each: cross.length,
          observed_by: 'the owner socket on B: the `running` upsert, sent after B committed running',
          cross_max_ms: Math.max(...cross),
          same_max_ms: Math.max(...same),
          cross_reply_p50_ms: median(crossReply),
          same_reply_p50_ms: median(sameReply),
        },
      },
      info('approve on A → running on B, p99', quantile(cross, 0.99), quantile(same, 0.99), 'same node, p99'),
      info('approve on A → succeeded on B, p50', median(crossDone), median(sameDone), 'same node, p50'),
      info(
        "approve on A → A's owner sees B's launch, p50",
        median(crossBackToA),
        base,
        'same node → running, p50',
      ),
    ];
  } catch (e) {
    return [notMeasured(ID, 'cross-node approve → running on B, p50', GOAL, (e as Error).message)];
  } finally {
    for (const o of owners) {
      o.onUpsert = () => {};
      await o.close();
    }
    await closeMcp([ai]);
    await fleet.stop();
  }
}
