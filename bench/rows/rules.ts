/**
 * Row 11, rules (issue 22, contract 11). Two figures, each beside its baseline in the same run:
 *
 * - **A rule decides at submit.** `run_command_wait` (`wait_seconds: 0`) of `noop`, which a config rule
 *   allows (`decided_by: "rule:bench-allow"`, approved at version 2 in the submit's transaction), from
 *   sending the call until the owner's socket shows it approved; vs the same call of `held` (no rule
 *   true), until its PENDING command shows. Both ends are upserts, sent only after their commit. Goal:
 *   p50 ≤ 1.2×.
 * - **A hundred rules cost little.** The PENDING path (`held`) on a daemon whose config has 100 rules,
 *   none true for it (each compares the command and calls `path_under` on an argument), vs a daemon with
 *   none. Calls alternate between the two daemons one by one, so drift hits both alike. Goal: p50 ≤ 1.1×.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { benchConfig, type Daemon, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { median, quantile, type Row, ratioOf } from '../lib/stats.js';
import { Upserts } from '../lib/upserts.js';

const ID = '11 rules';

function catalog(rules: unknown[]): Record<string, unknown> {
  const base = benchConfig();
  const commands = base.commands as Record<string, Record<string, unknown>>;
  return {
    ...base,
    commands: { ...commands, held: { ...commands.noop, description: 'Does nothing (bench, no rule)' } },
    rules,
  };
}

/** 100 rules, none true for `held`: each names another command and asks `path_under` of an argument. */
function hundredRules(): unknown[] {
  return Array.from({ length: 100 }, (_, i) => ({
    id: `bench-${i}`,
    when: `command == 'other${i}' || path_under(args.tag, '/bench/${i}')`,
    decision: i % 2 === 0 ? 'deny' : 'ask',
  }));
}

interface Side {
  d: Daemon;
  dir: string;
  owner: Owner;
  upserts: Upserts;
  client: Client;
}

async function open(config: Record<string, unknown>): Promise<Side> {
  const dir = makeDataDir();
  const d = await startDaemon(dir, config);
  const owner = await Owner.open(d);
  return { d, dir, owner, upserts: new Upserts(owner), client: await connectMcp(d.mcpUrl, d.mcpToken) };
}

async function close(s: Side | undefined): Promise<void> {
  if (s === undefined) return;
  s.owner.onUpsert = () => {};
  await s.owner.close();
  await closeMcp([s.client]);
  await s.d.stop();
  removeDir(s.dir);
}

/**
 * Sends `command` with `tag` and resolves with send → the owner seeing `state`, in ms. An approved command
 * is also followed to `succeeded`: its `/bin/true` spawn must not land in the next sample.
 */
async function timeTo(s: Side, command: string, tag: string, state: string, by?: string): Promise<number> {
  const seen = s.upserts.next(tag, state);
  const done = state === 'approved' ? s.upserts.next(tag, 'succeeded') : undefined;
  const t0 = performance.now();
  await callTool(s.client, 'run_command_wait', { command, args: { tag }, wait_seconds: 0 });
  const got = await seen;
  await done;
  if (by !== undefined && got.view.decided_by !== by)
    throw new Error(`${command} was decided by ${String(got.view.decided_by)}, not ${by}`);
  return got.at - t0;
}

function gated(
  figure: string,
  value: number,
  baseline: number,
  label: string,
  goal: number,
  detail: Record<string, unknown>,
): Row {
  const ratio = ratioOf(value, baseline);
  return {
    id: ID,
    figure,
    value,
    unit: 'ms',
    baseline,
    baselineLabel: label,
    ratio,
    goal: `≤ ${goal}×`,
    result: ratio !== null && ratio <= goal ? 'pass' : 'miss',
    detail,
  };
}

export async function rules(quick: boolean): Promise<Row[]> {
  let one: Side | undefined;
  let many: Side | undefined;
  let none: Side | undefined;
  try {
    const allow = { id: 'bench-allow', when: "command == 'noop'", decision: 'allow' };
    one = await open(catalog([allow]));
    many = await open(catalog(hundredRules()));
    none = await open(catalog([]));
    const n = quick ? 30 : 300;
    const warm = quick ? 5 : 20;
    const byRule: number[] = [];
    const pending: number[] = [];
    const withRules: number[] = [];
    const withoutRules: number[] = [];
    /** Runs both, in the order `k` picks: neither always follows the other's spawn or idle gap. */
    const pair = async (k: number, f: () => Promise<number>, g: () => Promise<number>) => {
      if (k % 2 === 0) return [await f(), await g()] as const;
      const y = await g();
      return [await f(), y] as const;
    };
    for (let i = -warm; i < n; i++) {
      const k = i + warm;
      const [a, b] = await pair(
        k,
        () => timeTo(one!, 'noop', `r${k}`, 'approved', 'rule:bench-allow'),
        () => timeTo(one!, 'held', `h${k}`, 'awaiting_review'),
      );
      const [c, e] = await pair(
        k,
        () => timeTo(many!, 'held', `m${k}`, 'awaiting_review'),
        () => timeTo(none!, 'held', `n${k}`, 'awaiting_review'),
      );
      if (i < 0) continue;
      byRule.push(a);
      pending.push(b);
      withRules.push(c);
      withoutRules.push(e);
    }
    return [
      gated(
        'allow rule: submit → approved committed, p50',
        median(byRule),
        median(pending),
        'submit → PENDING committed, p50',
        1.2,
        {
          calls_each: byRule.length,
          rule_p99_ms: quantile(byRule, 0.99),
          pending_p99_ms: quantile(pending, 0.99),
        },
      ),
      gated(
        '100 rules, none true: submit → PENDING, p50',
        median(withRules),
        median(withoutRules),
        'no rules, p50',
        1.1,
        {
          calls_each: withRules.length,
          with_p99_ms: quantile(withRules, 0.99),
          without_p99_ms: quantile(withoutRules, 0.99),
        },
      ),
    ];
  } finally {
    await close(one);
    await close(many);
    await close(none);
  }
}
