/**
 * Row 10, a grant-approved catalog command (issue 15, contract 8): `run_command_wait` (`wait_seconds: 0`)
 * for a command a live grant approves, from sending the call until its `running` is committed, vs the
 * same call for a command no grant matches, from sending until its PENDING (`awaiting_review`) command is
 * committed. Both ends are seen the way the owner sees them: the upsert on a real `/owner/ws` socket,
 * which the daemon sends only after the change's commit (architecture: "nobody hears of a change before
 * its commit"), so each figure is an upper bound on send → commit, through the same transport.
 *
 * The catalog has two identical commands, `noop` (a grant approves it: client `*`, any arguments, 30 days,
 * no use count, made by the owner's `grant` frame) and `held` (no grant), so both calls take the same
 * path through validation and grant matching; only the outcome of the match differs. On the grant path
 * the daemon commits once before `running` is visible, as on the other: submit, approve and `running` share
 * one transaction (contract 8; rule 3; issue 19 finding 6 — it was two commits before). The real SDK client
 * (2025 generation) calls over HTTP. Calls alternate one by one; a granted cycle also waits for `succeeded`
 * (its `/bin/true` spawn blocks the daemon's thread, which must not land in the next sample). Each round
 * also times one bare durable commit (bench/lib/commit.ts), the price of one commit on this disk then.
 */
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { BareCommits } from '../lib/commit.js';
import { benchConfig, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { median, quantile, type Row, ratioOf } from '../lib/stats.js';
import { Upserts } from '../lib/upserts.js';

const ID = '10 grant → running';

export async function grantApprove(quick: boolean): Promise<Row[]> {
  const base = benchConfig();
  const commands = base.commands as Record<string, Record<string, unknown>>;
  const config = {
    ...base,
    commands: { ...commands, held: { ...commands.noop, description: 'Does nothing (bench, no grant)' } },
  };
  const dir = makeDataDir();
  const d = await startDaemon(dir, config);
  let owner: Owner | undefined;
  const bare = new BareCommits();
  const client = await connectMcp(d.mcpUrl, d.mcpToken);
  try {
    const o = await Owner.open(d);
    owner = o;
    const made = await o.request({ type: 'grant', command: 'noop', client: '*', ttl_s: 2_592_000 });
    if (made.ok !== true) throw new Error(`grant refused: ${JSON.stringify(made)}`);
    const grantId = String((made.grant as { id: string }).id);
    const upserts = new Upserts(o);
    const granted: number[] = [];
    const grantedApproved: number[] = [];
    const approvedToRunning: number[] = [];
    const held: number[] = [];
    const grantedReply: number[] = [];
    const heldReply: number[] = [];
    const commits: number[] = [];
    const call = (command: string, tag: string) =>
      callTool(client, 'run_command_wait', { command, args: { tag }, wait_seconds: 0 });
    const n = quick ? 30 : 300;
    const warm = quick ? 5 : 20;
    for (let i = -warm; i < n; i++) {
      const k = i + warm;
      const commit = bare.time(1);
      if (i >= 0) commits.push(...commit);
      // Alternate which goes first, so neither always follows the other's spawn or idle gap.
      for (const kind of k % 2 === 0 ? ['g', 'h'] : ['h', 'g']) {
        const tag = `${kind}${k}`;
        if (kind === 'g') {
          const approved = upserts.next(tag, 'approved');
          const running = upserts.next(tag, 'running');
          const done = upserts.next(tag, 'succeeded');
          const t0 = performance.now();
          const r = await call('noop', tag);
          const t1 = performance.now();
          const a = await approved;
          const run = await running;
          await done;
          if (r.status !== 'PENDING' && r.status !== 'SUCCEEDED')
            throw new Error(`noop answered ${JSON.stringify(r)}`);
          if (a.view.decided_by !== `grant:${grantId}` || a.view.version !== 2)
            throw new Error(`noop was not approved by the grant in its submit: ${JSON.stringify(a.view)}`);
          if (i < 0) continue;
          granted.push(run.at - t0);
          grantedApproved.push(a.at - t0);
          approvedToRunning.push(run.at - a.at);
          grantedReply.push(t1 - t0);
        } else {
          const awaiting = upserts.next(tag, 'awaiting_review');
          const t0 = performance.now();
          const r = await call('held', tag);
          const t1 = performance.now();
          const w = await awaiting;
          if (r.status !== 'PENDING' || w.view.version !== 1)
            throw new Error(`held answered ${JSON.stringify(r)} (view ${JSON.stringify(w.view)})`);
          if (i < 0) continue;
          held.push(w.at - t0);
          heldReply.push(t1 - t0);
        }
      }
    }
    const line = (figure: string, a: number[], q: number, gated: boolean): Row => {
      const value = quantile(a, q);
      const baseline = quantile(held, q);
      const ratio = ratioOf(value, baseline);
      return {
        id: ID,
        figure,
        value,
        unit: 'ms',
        baseline,
        baselineLabel: `submit → PENDING committed, p${q * 100}`,
        ratio,
        goal: gated ? '≤ 1.5×' : '—',
        result: gated ? (ratio !== null && ratio <= 1.5 ? 'pass' : 'miss') : 'info',
        ...(gated
          ? {
              detail: {
                calls_each: granted.length,
                observed_by: 'owner /owner/ws upsert (sent after the commit)',
                granted_p90_ms: quantile(granted, 0.9),
                held_p90_ms: quantile(held, 0.9),
                granted_reply_median_ms: median(grantedReply),
                held_reply_median_ms: median(heldReply),
                approved_to_running_median_ms: median(approvedToRunning),
                commits_before_running: 1,
                commits_before_pending: 1,
              },
            }
          : {}),
      };
    };
    return [
      line('grant: submit → running committed, median', granted, 0.5, true),
      line('grant: submit → running committed, p99', granted, 0.99, false),
      line('grant: submit → approved (v2) committed, median', grantedApproved, 0.5, false),
      {
        id: ID,
        figure: 'one durable commit: bare WAL FULL, p50',
        value: median(commits),
        unit: 'ms',
        baseline: null,
        baselineLabel: '',
        ratio: null,
        goal: '—',
        result: 'info',
        detail: { p99_ms: quantile(commits, 0.99) },
      },
    ];
  } finally {
    if (owner) owner.onUpsert = () => {};
    await owner?.close();
    await closeMcp([client]);
    bare.close();
    await d.stop();
    removeDir(dir);
  }
}
