/**
 * Row 15, goal (a) as issue 24 names it: durable submissions per second @1 and @10 submitters with the chain
 * against a build without it. The two builds are the commit just before the chain was merged (`d99152b`)
 * and that merge (`6519a06`: the chain, its checkpoints and nothing else), each taken from this repository's
 * git history into bench/.builds/<commit> and built there once (`npm run build`, this checkout's
 * node_modules; kept for later runs). This checkout's row 4 — real daemons, real MCP clients, one durable
 * commit per call returning — runs against each build's daemon (OGF_BENCH_DAEMON_CLI), at 1 and 10
 * submitters only (OGF_BENCH_ROW4_LEVELS), alternately, up to five times (once in --quick; at least twice,
 * fewer than five when the whole run's budget leaves no time for more), and the medians are compared. (Each build's own row 4 was run before; theirs
 * queued every phase on one client and failed at its cap of pending commands on a quiet machine.) A
 * checkout without that history (a shallow clone) gets an info row saying so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../lib/procs.js';
import { median, notMeasured, type Row, ratioOf } from '../lib/stats.js';

/**
 * Runs of each build, alternated. A run's rate at one submitter moves ±20 % with the machine's phase; five
 * (~8 s each, at the two levels only) fit where three whole row-4 runs did (~31 s each). On a slower machine
 * (~12 s each) five took a third of the whole run's budget, so the rounds stop at `until`, after two.
 */
const ROUNDS = 5;
const MIN_ROUNDS = 2;
const WITHOUT = 'd99152b';
const WITH = '6519a06';
const FIGURES = [
  ['@1', 'submissions committed/s @1 submitter'],
  ['@10', 'submissions committed/s @10 submitters'],
] as const;

/** `commit` built in bench/.builds, or why it cannot be. */
function built(commit: string): { dir: string } | { why: string } {
  const dir = join(ROOT, 'bench', '.builds', commit);
  if (existsSync(join(dir, 'dist', 'bench', 'run.js'))) return { dir };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync('sh', ['-c', `git -C "${ROOT}" archive ${commit} | tar -x -C "${dir}"`], {
    encoding: 'utf8',
  });
  if (archive.status !== 0) return { why: `git archive ${commit}: ${archive.stderr.trim() || 'failed'}` };
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const build = spawnSync('npm', ['run', 'build'], { cwd: dir, encoding: 'utf8' });
  if (build.status !== 0) return { why: `npm run build of ${commit} failed: ${build.stderr.slice(-300)}` };
  return { dir };
}

/**
 * One run of row 4 — this checkout's, the same measuring code for both builds — against the daemon of the
 * build in `dir`: its submissions/s by figure.
 */
function row4(dir: string, quick: boolean): Record<string, number> {
  const out = join(tmpdir(), `ogf-chain-build-${process.pid}-${Date.now()}.json`);
  const args = [
    join(ROOT, 'dist', 'bench', 'run.js'),
    '--only',
    '4',
    '--out',
    out,
    ...(quick ? ['--quick'] : []),
  ];
  // Only the two levels this row compares (throughput.ts levelsOnly): ~10 s a run instead of ~31 s.
  const env = {
    ...process.env,
    OGF_BENCH_DAEMON_CLI: join(dir, 'dist', 'daemon', 'cli.js'),
    OGF_BENCH_ROW4_LEVELS: '1,10',
  };
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`row 4 of ${dir} exited ${r.status}: ${r.stderr.slice(-500)}`);
  const rows = (JSON.parse(readFileSync(out, 'utf8')) as { rows: Array<{ figure: string; value: number }> })
    .rows;
  rmSync(out, { force: true });
  return Object.fromEntries(rows.map((row) => [row.figure, row.value]));
}

/** `until`: the performance.now() past which no round starts that the last one says would end later. */
export function chainBuilds(quick: boolean, until = Number.POSITIVE_INFINITY): Row[] {
  const without = built(WITHOUT);
  const withChain = built(WITH);
  if ('why' in without || 'why' in withChain) {
    const why = 'why' in without ? without.why : (withChain as { why: string }).why;
    return [
      notMeasured(
        '15 audit chain',
        'durable submissions/s, a build with the chain vs without',
        '≤ 1.05× cost',
        why,
      ),
    ];
  }
  const runs: Record<'with' | 'without', Array<Record<string, number>>> = { with: [], without: [] };
  for (let round = 0; round < (quick ? 1 : ROUNDS); round++) {
    const t0 = performance.now();
    runs.without.push(row4(without.dir, quick));
    runs.with.push(row4(withChain.dir, quick));
    if (round + 1 >= MIN_ROUNDS && performance.now() + (performance.now() - t0) > until) break;
  }
  return FIGURES.map(([at, figure]) => {
    const value = median(runs.with.map((r) => r[figure]!));
    const baseline = median(runs.without.map((r) => r[figure]!));
    // Cost per submission: the inverse of the rates.
    const cost = ratioOf(baseline, value);
    return {
      id: '15 audit chain',
      figure: `durable submissions/s ${at}, build with the chain (${WITH})`,
      value,
      unit: '/s',
      baseline,
      baselineLabel: `the build before it, ${WITHOUT}`,
      ratio: cost,
      goal: '≤ 1.05× cost',
      result: cost !== null && cost <= 1.05 ? 'pass' : 'miss',
      detail: {
        with: runs.with.map((r) => r[figure]),
        without: runs.without.map((r) => r[figure]),
        loadavg: loadavg(),
      },
    };
  });
}
