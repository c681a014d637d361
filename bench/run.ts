/**
 * `npm run bench` (issues 7, 12, 15, 21, 22, 23, 27): measurements of the real daemon, each beside a baseline
 * measured in the same run, printed as one table and written to bench/results/latest.json. Never part of
 * `npm test`.
 *
 *   node dist/bench/run.js [--quick] [--only 1,2,...] [--budget-s 540]
 *
 * Everything runs on loopback against real processes: `ogf-broker start --port 0` in temp data dirs, the
 * SDK client over Streamable HTTP, owner WebSockets, the real bridge client and the avatar app's server;
 * rows 16–18 add a PostgreSQL 15 of their own (Debian's, initdb in a temp dir; skipped when not installed).
 * The budget bounds the whole run (growth, row 6, runs last and takes what is left; the table is still
 * in row order), so a fresh clone finishes in 10 minutes including `npm run build`.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { atExit } from './lib/cleanup.js';
import { retries } from './lib/clients.js';
import { havePostgres, PG_BIN, type Postgres, startPostgres } from './lib/postgres.js';
import {
  type BareServer,
  benchConfig,
  makeDataDir,
  ROOT,
  removeDir,
  startBareServer,
  startDaemon,
} from './lib/procs.js';
import { formatTable, notMeasured, type Row } from './lib/stats.js';
import { actionUrl } from './rows/actions.js';
import { auditChain } from './rows/audit.js';
import { chainBuilds } from './rows/chain-builds.js';
import { confinement } from './rows/confinement.js';
import { crossNode } from './rows/cross-node.js';
import { cueLatency } from './rows/cue.js';
import { fleetScale } from './rows/fleet-scale.js';
import { generations } from './rows/generations.js';
import { grantApprove } from './rows/grant-approve.js';
import { growth } from './rows/growth.js';
import { mcpOverhead } from './rows/mcp-overhead.js';
import { notifyRows } from './rows/notify.js';
import { oauthOverhead } from './rows/oauth.js';
import { pgThroughput } from './rows/pg-throughput.js';
import { previewLatency } from './rows/preview.js';
import { pushLatency } from './rows/push-latency.js';
import { rules } from './rows/rules.js';
import { scale } from './rows/scale.js';
import { throughput } from './rows/throughput.js';
import { upstreamApprove } from './rows/upstream-approve.js';
import { upstreamBound } from './rows/upstream-bound.js';
import { upstreamReadOnly } from './rows/upstream-read-only.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'budget-s': { type: 'string', default: '540' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results', 'latest.json') },
  },
});
const quick = values.quick ?? false;
const only = new Set(
  (values.only ?? '1,2,3,4,5,6,7,8,8b,9,10,11,12,13,14,15,16,17,18,19,20').split(',').map((s) => s.trim()),
);
const started = performance.now();
const deadline = started + Number(values['budget-s']) * 1000;
/**
 * What row 15's rounds of old builds leave to the rows after it: rows 19, 20 and 16–18 (~125 s in a whole run
 * on a slow machine, 2026-12-07) and growth (its 40-s floor and ~10 s past it). At 150 s the rounds took the
 * time a 540-s budget meant for growth, and the run ended 2 s past it.
 */
const AFTER_ROW_15_MS = 190_000;

/** The git dir of ROOT: `.git` itself, or the one a worktree's `.git` file points to ("gitdir: …"). */
function gitDir(): string {
  const dotGit = join(ROOT, '.git');
  try {
    const link = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
    return link === undefined ? dotGit : resolve(ROOT, link.trim());
  } catch {
    return dotGit; // a directory (EISDIR): an ordinary clone
  }
}

function gitCommit(): string {
  // Read .git directly: the commit is named in every run's JSON, even where no git is installed (a clone's
  // copy; only row 15's old builds need git). In a worktree HEAD is in its own git dir and the refs in the
  // common one (named by its `commondir` file).
  try {
    const dir = gitDir();
    let common = dir;
    try {
      common = resolve(dir, readFileSync(join(dir, 'commondir'), 'utf8').trim());
    } catch {
      // Not a worktree.
    }
    const head = readFileSync(join(dir, 'HEAD'), 'utf8').trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (ref === undefined) return head.slice(0, 7);
    for (const base of [dir, common]) {
      try {
        return readFileSync(join(base, ref), 'utf8').trim().slice(0, 7);
      } catch {
        // Not a loose ref here.
      }
    }
    const packed = readFileSync(join(common, 'packed-refs'), 'utf8');
    return new RegExp(`^([0-9a-f]{40}) ${ref}$`, 'm').exec(packed)?.[1]?.slice(0, 7) ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function progress(what: string): void {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0)}s] ${what}\n`);
}

/** Rows measured so far; a row that fails adds its "not measured" line here instead of ending the run. */
const rows: Row[] = [];

/**
 * Runs one row (issue 41): whatever it throws, the run goes on — the row prints "not measured" with the
 * reason, and the rows after it are measured as if it had not run.
 */
async function measure(id: string, label: string, row: () => Promise<Row | Row[]>): Promise<void> {
  if (!only.has(id)) return;
  progress(`${id} ${label}`);
  try {
    const got = await row();
    rows.push(...(Array.isArray(got) ? got : [got]));
  } catch (e) {
    progress(`${id} failed: ${(e as Error).stack ?? String(e)}`);
    rows.push(notMeasured(id, label, '—', (e as Error).message));
  }
}

/**
 * Rows 16–18 (issue 27) share one PostgreSQL 15, started here like the tests' (bench/lib/postgres.ts) but
 * durable (fsync on), and stopped and removed at the end — at the bench's exit too, however it exits
 * (the postmaster told to stop at once, SIGQUIT, then its dir removed).
 */
async function postgresRows(): Promise<void> {
  const ids = ['16', '17', '18'].filter((i) => only.has(i));
  if (ids.length === 0) return;
  if (!havePostgres()) {
    process.stdout.write(
      `rows 16–18 skipped: PostgreSQL 15 or newer is not installed (${PG_BIN}/initdb is missing; apt-get install postgresql)\n`,
    );
    return;
  }
  progress('16–18: starting PostgreSQL');
  let pg: Postgres;
  try {
    pg = await startPostgres({ durable: true, maxConnections: 120, sharedBuffers: '128MB' });
  } catch (e) {
    for (const id of ids) rows.push(notMeasured(id, 'PostgreSQL did not start', '—', (e as Error).message));
    return;
  }
  const forget = atExit(() => {
    const master = pg.pids()[0];
    if (master !== undefined) process.kill(master, 'SIGQUIT');
    rmSync(pg.dir, { recursive: true, force: true });
  });
  try {
    await measure('16', 'durable throughput on PostgreSQL vs SQLite', () => pgThroughput(pg, quick));
    await measure('17', 'cross-node approve → running vs same node', () => crossNode(pg, quick));
    await measure('18', 'fleet: 4 nodes × 25 submitters vs 1 node × 25', () => fleetScale(pg, quick));
  } finally {
    forget();
    await pg.destroy();
  }
}

/** Rows 1 and 2 share one daemon. */
async function rowsOnOneDaemon(bare: BareServer): Promise<void> {
  if (!only.has('1') && !only.has('2')) return;
  const dir = makeDataDir();
  let d: Awaited<ReturnType<typeof startDaemon>>;
  try {
    d = await startDaemon(dir, benchConfig());
  } catch (e) {
    for (const id of ['1', '2'].filter((i) => only.has(i)))
      rows.push(notMeasured(id, 'the daemon rows 1–2 share did not start', '—', (e as Error).message));
    removeDir(dir);
    return;
  }
  try {
    await measure('1', 'mcp overhead', () => mcpOverhead(d, bare, quick));
    await measure('2', 'push latency', () => pushLatency(d, bare, quick));
  } finally {
    await d.stop();
    removeDir(dir);
  }
}

async function main(): Promise<void> {
  const loadStart = loadavg();
  const bare = await startBareServer();
  try {
    await rowsOnOneDaemon(bare);
    await measure('3', 'cue: approve → spawn / ack', () => cueLatency(quick));
    await measure('4', 'durable throughput', () => throughput(quick));
    await measure('5', 'scale', () => scale(bare, quick));
    await measure('7', 'policy-approved upstream call vs direct', () => upstreamReadOnly(bare, quick));
    await measure('8', 'approve → upstream receives the call', () => upstreamApprove(quick));
    await measure('8b', 'approve → upstream, a previewed write bound vs bind_previews false', () =>
      upstreamBound(quick),
    );
    await measure('9', '2026-07-28 vs 2025 generation', () => generations(quick));
    await measure('10', 'grant-approved command → running vs → PENDING', () => grantApprove(quick));
    await measure(
      '11',
      "rules: allow rule vs PENDING, owners' rule vs config rule, 102 rules vs none, a replay",
      () => rules(quick),
    );
    await measure('12', 'notify: webhook vs owner upsert, 3 channels vs none', () => notifyRows(quick));
    await measure('13', 'preview: submit → ready vs direct read + diff', () => previewLatency(quick));
    await measure('14', 'OAuth access token vs Bearer token', () => oauthOverhead(quick));
    await measure('15', 'audit chain, and durable submissions with the chain vs without', async () => [
      ...(await auditChain(quick)),
      // The old builds' rounds leave the rows after them what they took in a whole run (~150 s on a
      // machine where the bare echo does ~600 calls/s at one submitter).
      ...(await chainBuilds(quick, deadline - AFTER_ROW_15_MS)),
    ]);
    await measure('19', 'confinement: confined vs unconfined upstream and catalog command', () =>
      confinement(quick),
    );
    await measure('20', 'a decision through an action URL vs over the owner socket', () => actionUrl(quick));
    await postgresRows();
    // Last: growth takes the time the other rows leave, less what it spends past its own budget (the idle
    // and the samples of its last checkpoint: ~8 s here; 15 s kept, where 10 s left a run 2 s inside 540).
    // At least 40 s: its first 1,000 cycles and their sample took 20 s on a slow machine (2026-12-07), where
    // a 20-s floor compared the first sample with itself; the budget (540 s, 480 before) leaves it ~50 s
    // there after rows 1–20 (~450 s).
    const budget = Math.max(40_000, deadline - performance.now() - 15_000);
    await measure('6', `growth (budget ${(budget / 1000).toFixed(0)} s)`, () => growth(budget, quick));
  } finally {
    await bare.stop();
  }
  // Row order, whatever order they ran in (sort is stable: a row's lines keep their order).
  rows.sort((a, b) => Number.parseInt(a.id, 10) - Number.parseInt(b.id, 10));
  const table = formatTable(rows);
  process.stdout.write(`${table}\n`);
  for (const r of rows)
    if (r.figure.endsWith(': not measured'))
      process.stdout.write(`row ${r.id}: not measured: ${String(r.detail?.why)}\n`);
  const result = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    node: process.version,
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    loadavg_start: loadStart,
    loadavg_end: loadavg(),
    quick,
    seconds: (performance.now() - started) / 1000,
    fetch_retries: retries.count,
    table,
    rows,
  };
  mkdirSync(join(values.out!, '..'), { recursive: true });
  writeFileSync(values.out!, `${JSON.stringify(result, null, 2)}\n`);
  progress(`done; wrote ${values.out}`);
}

// A stray error of a row's (a client's `error` event nobody listens to, a promise nobody awaits) is
// reported and the run goes on; the row it belongs to says so itself when its figures are missing.
process.on('uncaughtException', (e) => progress(`uncaught, the run goes on: ${e.stack ?? String(e)}`));
process.on('unhandledRejection', (e) =>
  progress(`unhandled rejection, the run goes on: ${(e as Error)?.stack ?? String(e)}`),
);

main().then(
  () => process.exit(0),
  (e: unknown) => {
    const cause = (e as Error).cause as Error | undefined;
    process.stderr.write(
      `bench failed: ${(e as Error).stack ?? String(e)}${cause ? `\ncause: ${cause.stack ?? String(cause)}` : ''}\n`,
    );
    process.exit(1);
  },
);
