/**
 * `npm run bench` (issues 7, 12, 15, 21, 22, 23, 27): measurements of the real daemon, each beside a baseline
 * measured in the same run, printed as one table and written to bench/results/latest.json. Never part of
 * `npm test`.
 *
 *   node dist/bench/run.js [--quick] [--only 1,2,...] [--budget-s 480]
 *
 * Everything runs on loopback against real processes: `ogf-broker start --port 0` in temp data dirs, the
 * SDK client over Streamable HTTP, owner WebSockets, the real bridge client and the avatar app's server;
 * rows 16–18 add a PostgreSQL 15 of their own (Debian's, initdb in a temp dir; skipped when not installed).
 * The budget bounds the whole run (growth, row 6, runs last and takes what is left; the table is still
 * in row order), so a fresh clone finishes in 10 minutes including `npm run build`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { retries } from './lib/clients.js';
import { havePostgres, PG_BIN, type Postgres, startPostgres } from './lib/postgres.js';
import { benchConfig, makeDataDir, ROOT, removeDir, startBareServer, startDaemon } from './lib/procs.js';
import { formatTable, type Row } from './lib/stats.js';
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
    'budget-s': { type: 'string', default: '480' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results', 'latest.json') },
  },
});
const quick = values.quick ?? false;
const only = new Set(
  (values.only ?? '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19').split(',').map((s) => s.trim()),
);
const started = performance.now();
const deadline = started + Number(values['budget-s']) * 1000;

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
  // Read .git directly: the bench spawns no shell or git (architecture rule 9). In a worktree HEAD is in
  // its own git dir and the refs in the common one (named by its `commondir` file).
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

/**
 * Rows 16–18 (issue 27) share one PostgreSQL 15, started here like the tests' (bench/lib/postgres.ts) but
 * durable (fsync on), and stopped and removed at the end. Without PostgreSQL's binaries they are skipped,
 * saying so on stdout.
 */
async function postgresRows(): Promise<Row[]> {
  if (!havePostgres()) {
    process.stdout.write(
      `rows 16–18 skipped: PostgreSQL 15 or newer is not installed (${PG_BIN}/initdb is missing; apt-get install postgresql)\n`,
    );
    return [];
  }
  const rows: Row[] = [];
  progress('16–18: starting PostgreSQL');
  const pg: Postgres = await startPostgres({ durable: true, maxConnections: 120, sharedBuffers: '128MB' });
  try {
    if (only.has('16')) {
      progress('16 durable throughput on PostgreSQL vs SQLite');
      rows.push(...(await pgThroughput(pg, quick)));
    }
    if (only.has('17')) {
      progress('17 cross-node approve → running vs same node');
      rows.push(...(await crossNode(pg, quick)));
    }
    if (only.has('18')) {
      progress('18 fleet: 4 nodes × 25 submitters vs 1 node × 25');
      rows.push(...(await fleetScale(pg, quick)));
    }
  } finally {
    await pg.destroy();
  }
  return rows;
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const loadStart = loadavg();
  const bare = await startBareServer();
  try {
    if (only.has('1') || only.has('2')) {
      const dir = makeDataDir();
      const d = await startDaemon(dir, benchConfig());
      try {
        if (only.has('1')) {
          progress('1 mcp overhead');
          rows.push(await mcpOverhead(d, bare, quick));
        }
        if (only.has('2')) {
          progress('2 push latency');
          rows.push(...(await pushLatency(d, bare, quick)));
        }
      } finally {
        await d.stop();
        removeDir(dir);
      }
    }
    if (only.has('3')) {
      progress('3 cue: approve → spawn / ack');
      rows.push(...(await cueLatency(quick)));
    }
    if (only.has('4')) {
      progress('4 durable throughput');
      rows.push(...(await throughput(bare, quick)));
    }
    if (only.has('5')) {
      progress('5 scale');
      rows.push(...(await scale(bare, quick)));
    }
    if (only.has('7')) {
      progress('7 policy-approved upstream call vs direct');
      rows.push(...(await upstreamReadOnly(bare, quick)));
    }
    if (only.has('8')) {
      progress('8 approve → upstream receives the call');
      rows.push(...(await upstreamApprove(quick)));
    }
    if (only.has('8b')) {
      progress('8b approve → upstream, a previewed write bound vs bind_previews false');
      rows.push(...(await upstreamBound(quick)));
    }
    if (only.has('9')) {
      progress('9 2026-07-28 vs 2025 generation');
      rows.push(...(await generations(quick)));
    }
    if (only.has('10')) {
      progress('10 grant-approved command → running vs → PENDING');
      rows.push(...(await grantApprove(quick)));
    }
    if (only.has('11')) {
      progress('11 rules: allow rule vs PENDING, 100 rules vs none, a policy_test replay');
      rows.push(...(await rules(quick)));
    }
    if (only.has('12')) {
      progress('12 notify: webhook vs owner upsert, 3 channels vs none');
      rows.push(...(await notifyRows(quick)));
    }
    if (only.has('13')) {
      progress('13 preview: submit → ready vs direct read + diff');
      rows.push(...(await previewLatency(quick)));
    }
    if (only.has('14')) {
      progress('14 OAuth access token vs Bearer token');
      rows.push(...(await oauthOverhead(quick)));
    }
    if (only.has('15')) {
      progress('15 audit chain');
      rows.push(...(await auditChain(quick)));
      progress('15 audit chain: durable submissions, a build with the chain vs without');
      rows.push(...chainBuilds(quick));
    }
    if (only.has('19')) {
      progress('19 confinement: confined vs unconfined upstream and catalog command');
      rows.push(...(await confinement(quick)));
    }
    if (only.has('16') || only.has('17') || only.has('18')) rows.push(...(await postgresRows()));
    // Last: growth takes the time the other rows leave.
    if (only.has('6')) {
      const budget = Math.max(30_000, deadline - performance.now() - 20_000);
      progress(`6 growth (budget ${(budget / 1000).toFixed(0)} s)`);
      rows.push(...(await growth(budget, quick)));
    }
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
