/**
 * Row 11, rules (issue 22, contract 11), each figure beside a baseline measured in the same run:
 *
 * - submit → decided by an `allow` rule (its first upsert: approved at version 2, committed with the submit)
 *   vs submit → PENDING committed (a command no rule matches), both p50: goal ≤ 1.2×;
 * - submit → decided by an owners' rule (contract 18, made with `rule_add`, evaluated after the config's 102)
 *   vs by the config's last rule (after the other 101), p50: goal ≤ 1.1× — both behind the same rules, so
 *   the line says what an owners' rule costs over a config rule, not what 101 rules cost (the next line);
 * - submit → PENDING committed with 102 rules that all evaluate and none matches (the hundred below and the
 *   two that allow), vs the same on a daemon with no rules, p50: goal ≤ 1.1×;
 * - submit → PENDING committed while an owner's `policy_test` replays the newest 5,000 commands (1,000 with
 *   --quick), vs the same with no replay running, p50: the replay must not hold up submits by more than a few
 *   ms (it reads a page per event-loop turn).
 *
 * Every end is seen as the owner sees it: the upsert on a real `/owner/ws`, sent only after the commit.
 */
import { compileRules, RuleBook, type RuleEntry } from '../../daemon/rules/index.js';
import { callTool, closeMcp, connectMcp, Owner, type View } from '../lib/clients.js';
import { benchConfig, type Daemon, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { quantile, type Row, ratioOf, rotating } from '../lib/stats.js';

const ID = '11 rules';

const FINAL = new Set(['succeeded', 'failed', 'denied', 'unknown']);

/**
 * Submit → first upsert of its tag, per call, one call at a time. An allowed command then runs (a spawn,
 * its outcome's commit); the next submit waits for its final upsert (untimed), so each figure is one
 * submit's on a daemon as idle as the PENDING baseline's — not the last launch's spawn and outcome commit
 * (issue 41: row 11 timed those into the next submit, which a rule does not cost).
 */
async function timeSubmits(
  d: Daemon,
  command: string,
  prefix: string,
  n: number,
  during?: () => unknown,
): Promise<number[]> {
  const owner = await Owner.open(d);
  const client = await connectMcp(d.mcpUrl, d.mcpToken);
  const firsts = new Map<string, (at: number) => void>();
  const firstState = new Map<string, string>();
  const ended = new Map<string, () => void>();
  const finals = new Set<string>();
  owner.onUpsert = (view: View, at) => {
    const tag = String(view.args.tag);
    if (firsts.has(tag)) firstState.set(tag, view.state);
    firsts.get(tag)?.(at);
    firsts.delete(tag);
    if (FINAL.has(view.state)) {
      finals.add(tag);
      ended.get(tag)?.();
    }
  };
  // Resolves once `tag` is final, or at once when it stays awaiting review (the `held` command).
  const settled = (tag: string): Promise<void> =>
    firstState.get(tag) === 'awaiting_review' || finals.has(tag)
      ? Promise.resolve()
      : new Promise((r) => ended.set(tag, () => r()));
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const tag = `${prefix}${i}`;
      const seen = new Promise<number>((r) => firsts.set(tag, r));
      during?.();
      const t0 = performance.now();
      await callTool(client, 'run_command_wait', { command, args: { tag }, wait_seconds: 0 });
      out.push((await seen) - t0);
      await settled(tag);
    }
    return out;
  } finally {
    await closeMcp([client]);
    await owner.close();
  }
}

function row(figure: string, value: number[], baseline: number[], label: string, goal: number | null): Row {
  const v = quantile(value, 0.5);
  const b = quantile(baseline, 0.5);
  const ratio = ratioOf(v, b);
  return {
    id: ID,
    figure,
    value: v,
    unit: 'ms',
    baseline: b,
    baselineLabel: label,
    ratio,
    goal: goal === null ? '—' : `≤ ${goal}×`,
    result: goal === null ? 'info' : ratio !== null && ratio <= goal ? 'pass' : 'miss',
    detail: { samples: value.length, p90_ms: quantile(value, 0.9), baseline_p90_ms: quantile(baseline, 0.9) },
  };
}

/** Microseconds one decide() of these rules takes (no rule matching), in this process. */
function compiledHundred(entries: RuleEntry[]): number {
  const compiled = compileRules(entries);
  if (!compiled.ok) throw new Error(compiled.why);
  const book = new RuleBook(
    compiled.rules,
    { log() {} },
    { now: () => Date.now(), setTimeout: () => ({ cancel() {} }) },
  );
  const facts = {
    client: 'local',
    command: 'held',
    upstream: '',
    tool: '',
    args: { tag: 'x1' },
    justification: '',
    now: new Date(),
  };
  for (let i = 0; i < 1000; i++) book.decide(facts);
  const t0 = performance.now();
  for (let i = 0; i < 10_000; i++) book.decide(facts);
  return ((performance.now() - t0) / 10_000) * 1000;
}

export async function rules(quick: boolean): Promise<Row[]> {
  const n = quick ? 50 : 300; // a multiple of 50: each of the five blocks first equally often
  const base = benchConfig();
  const noop = (base.commands as Record<string, Record<string, unknown>>).noop!;
  const hundred: RuleEntry[] = Array.from({ length: 100 }, (_, i) => ({
    id: `r${i}`,
    when: `command == 'other${i}' || (args.tag.startsWith('zz${i}') && path_under('/a/b', '/a'))`,
    decision: i % 3 === 0 ? ('deny' as const) : i % 3 === 1 ? ('ask' as const) : ('allow' as const),
  }));
  const withRules = benchConfig({
    commands: {
      noop,
      held: { ...noop, description: 'Does nothing (bench, no rule)' },
      owned: { ...noop, description: "Does nothing (bench, an owners' rule allows it)" },
      late: { ...noop, description: 'Does nothing (bench, the last config rule allows it)' },
    },
    rules: [
      { id: 'ok', when: "command == 'noop'", decision: 'allow' },
      ...hundred,
      { id: 'late', when: "command == 'late'", decision: 'allow' },
    ],
  });
  const none = benchConfig({ commands: { held: { ...noop, description: 'Does nothing (bench, no rule)' } } });
  const dirA = makeDataDir();
  const dirB = makeDataDir();
  const a = await startDaemon(dirA, withRules);
  const b = await startDaemon(dirB, none);
  try {
    // Contract 18: an owners' rule, made as the panel makes it, evaluated after the 102 config rules.
    const o = await Owner.open(a);
    const added = await o.request({
      type: 'rule_add',
      rule: { id: 'mine', when: "command == 'owned'", decision: 'allow' },
    });
    await o.close();
    if (added.type !== 'rule_add') throw new Error(`rule_add refused: ${JSON.stringify(added)}`);
    // Warm both (JIT, page cache), then alternate in blocks so load drifts hit both alike.
    await timeSubmits(a, 'held', 'w', 10);
    await timeSubmits(b, 'held', 'w', 10);
    const allowed: number[] = [];
    const byOwners: number[] = [];
    const byLate: number[] = [];
    const pending: number[] = [];
    const plain: number[] = [];
    // Small blocks, alternating: the two daemons share a busy machine, and its load drifts by the second;
    // rotated, so no figure always follows the same block (stats.ts).
    let block = 0;
    const of = (d: Daemon, command: string, prefix: string, into: number[]) => async () => {
      into.push(...(await timeSubmits(d, command, `${prefix}${block++}x`, 10)));
    };
    await rotating(
      [
        of(a, 'noop', 'a', allowed),
        of(a, 'owned', 'o', byOwners),
        of(a, 'late', 'l', byLate),
        of(a, 'held', 'p', pending),
        of(b, 'held', 'q', plain),
      ],
      n / 10,
    );
    // The rules' own cost, in this process (no disk, no sockets): what the 100 rules add to one submit.
    const book = compiledHundred(hundred);
    // The replay: fill b's history to the replay size, then submit while policy_test replays it.
    const size = quick ? 1000 : 5000;
    const client = await connectMcp(b.mcpUrl, b.mcpToken);
    for (let i = 0; i < size; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          callTool(client, 'run_command_wait', {
            command: 'held',
            args: { tag: `h${i + j}` },
            wait_seconds: 0,
          }),
        ),
      );
    }
    await closeMcp([client]);
    const owner = await Owner.open(b);
    let replays = 0;
    let started = 0;
    let inFlight = false;
    let replaying: Promise<unknown> = Promise.resolve();
    // One replay at a time, always one running: each submit of the busy phase meets a replay in progress.
    const replay = () => {
      if (inFlight) return;
      inFlight = true;
      started++;
      replaying = owner
        .request({
          type: 'policy_test',
          grant: { command: 'held', client: '*', when: "args.tag.startsWith('h1')" },
          limit: size,
        })
        .then(() => {
          replays++;
          inFlight = false;
        });
    };
    const idle = await timeSubmits(b, 'held', 'i', n / 2);
    const busy = await timeSubmits(b, 'held', 'b', n / 2, replay);
    await replaying;
    await owner.close();
    const rows = [
      row(
        'submit → decided by an allow rule (v2) committed, p50',
        allowed,
        pending,
        'submit → PENDING committed (same daemon), p50',
        1.2,
      ),
      row(
        "submit → decided by an owners' rule (after 102 config rules), p50",
        byOwners,
        byLate,
        'submit → decided by the last config rule (after 101), p50',
        1.1,
      ),
      {
        ...row(
          'submit → PENDING, 102 rules evaluated, p50',
          pending,
          plain,
          'submit → PENDING, no rules, p50',
          1.1,
        ),
      },
      row(
        `submit → PENDING while policy_test replays ${size}, p50`,
        busy,
        idle,
        'submit → PENDING, no replay, p50',
        null,
      ),
    ];
    rows[2]!.detail = { ...rows[2]!.detail, decide_100_rules_us: book };
    rows[3]!.detail = { ...rows[3]!.detail, replays_started: started, replays_finished: replays };
    return rows;
  } finally {
    await a.stop();
    await b.stop();
    removeDir(dirA);
    removeDir(dirB);
  }
}
