/**
 * Row 15, goal (a) as issue 24 names it: durable submissions per second @1 and @10 submitters with the chain
 * against a build without it. The two builds are the commit just before the chain was merged (`d99152b`)
 * and that merge (`6519a06`: the chain, its checkpoints and nothing else), each taken from this repository's
 * git history into bench/.builds/<commit> and built there once (`npm run build`, this checkout's
 * node_modules; kept for later runs). Both builds' daemons run at once, and at each level this checkout's
 * paired rates (lib/paired-rates.ts: real MCP clients, `run_command_wait` returning once committed) time
 * them in one-second blocks that alternate, the first changing every round, up to ROUNDS rounds (at least
 * MIN_ROUNDS; fewer when the whole run's budget leaves no time for more): the medians are compared. (Each
 * build's own row 4 was run before; theirs queued every phase on one client and failed at its cap of pending
 * commands on a quiet machine.) A checkout without that history (a shallow clone) gets a row saying so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { type PairRates, pairedRates } from '../lib/paired-rates.js';
import { benchConfig, type Daemon, makeDataDir, ROOT, removeDir, startDaemon } from '../lib/procs.js';
import { notMeasured, type Row, ratioOf } from '../lib/stats.js';

/**
 * Blocks of each build per level. Five whole runs of row 4 per build, one build after the other, moved ±20 %
 * with the machine's phase (1.05–1.46× at ten submitters in three whole runs of 2026-12-07, for builds that
 * never change); blocks of a second, both daemons up, alternate within the phase.
 */
const ROUNDS = 9;
const MIN_ROUNDS = 3;
const WITHOUT = 'd99152b';
const WITH = '6519a06';
/** The submitters each level has. */
const LEVELS = [1, 10] as const;

/** `commit` built in bench/.builds (its daemon's CLI is what this row runs), or why it cannot be. */
function built(commit: string): { dir: string } | { why: string } {
  const dir = join(ROOT, 'bench', '.builds', commit);
  if (existsSync(join(dir, 'dist', 'daemon', 'cli.js'))) return { dir };
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

/** A daemon of the build in `dir`, on a data dir of its own (removed by its `stop`). */
async function daemonOf(dir: string): Promise<Daemon> {
  const data = makeDataDir();
  const d = await startDaemon(data, benchConfig(), [], {}, join(dir, 'dist', 'daemon', 'cli.js'));
  return {
    ...d,
    async stop() {
      await d.stop();
      removeDir(data);
    },
  };
}

/** `until`: the performance.now() past which no round starts (after MIN_ROUNDS). */
export async function chainBuilds(quick: boolean, until = Number.POSITIVE_INFINITY): Promise<Row[]> {
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
  const daemons: Daemon[] = [];
  const rates: PairRates[] = [];
  try {
    // One at a time: a second that fails to start leaves the first in the list that `finally` stops.
    for (const build of [withChain, without]) daemons.push(await daemonOf(build.dir));
    for (const [i, submitters] of LEVELS.entries()) {
      rates.push(
        await pairedRates(daemons[0]!, daemons[1]!, submitters, {
          quick,
          first: i === 0,
          rounds: quick ? 2 : ROUNDS,
          atLeast: quick ? 2 : MIN_ROUNDS,
          until,
        }),
      );
    }
  } finally {
    for (const d of daemons) await d.stop();
  }
  return LEVELS.map((submitters, k) => {
    const { a: value, b: baseline, blocks } = rates[k]!;
    // Cost per submission: the inverse of the rates.
    const cost = ratioOf(baseline, value);
    return {
      id: '15 audit chain',
      figure: `durable submissions/s @${submitters}, build with the chain (${WITH})`,
      value,
      unit: '/s',
      baseline,
      baselineLabel: `the build before it, ${WITHOUT}`,
      ratio: cost,
      goal: '≤ 1.05× cost',
      result: cost !== null && cost <= 1.05 ? 'pass' : 'miss',
      detail: { with: blocks.a, without: blocks.b, loadavg: loadavg() },
    };
  });
}
