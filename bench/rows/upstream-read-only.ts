/**
 * Row 7, a policy-approved upstream call vs the same call sent straight to the upstream (issue 15). The
 * daemon gates a real `@modelcontextprotocol/server-filesystem` (contract 7) with `trust_read_only_hint`,
 * so `fs__read_text_file` is approved by `policy:read_only` and answered SUCCEEDED within its wait. The
 * baseline is the same `read_text_file` sent by an SDK client over stdio to a second copy of the same
 * server, started by the bench with the same argv and environment.
 *
 * The goal is a floor, not a ratio: what the broker cannot avoid is the upstream's own answer (direct
 * p50), one more MCP hop (the bare SDK echo round trip p50, over the same Streamable HTTP transport) and
 * two durable commits (a bare better-sqlite3 WAL `synchronous = FULL` commit p50, in the same kind of temp
 * dir); the broker may add at most 1 ms at p50 over that. Every part is measured here, one of each per
 * round, so the machine's drift hits all four alike.
 */
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { callTool, closeMcp, connectMcp } from '../lib/clients.js';
import { BareCommits } from '../lib/commit.js';
import { type BareServer, benchConfig, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { median, quantile, type Row, ratioOf } from '../lib/stats.js';
import { connectDirect, type DirectUpstream, FILESYSTEM, waitForTools } from '../lib/upstream.js';

const ID = '7 upstream read-only';
const TEXT = `${'A note the bench reads through the gate and straight from the server. '.repeat(3)}\n`;
/** The allowance over the floor (issue 15). */
const ALLOWANCE_MS = 1;

/** What the AI's call returned, checked: the upstream's own text and the SUCCEEDED meta of contract 7. */
async function viaBroker(client: Client, path: string): Promise<string> {
  const r = (await client.callTool({ name: 'fs__read_text_file', arguments: { path } }, undefined, {
    timeout: 60_000,
  })) as CallToolResult;
  const meta = r._meta?.['ogf-broker/command'] as { status?: string; pending_id?: string } | undefined;
  const first = r.content[0];
  if (meta?.status !== 'SUCCEEDED' || first?.type !== 'text' || first.text !== TEXT)
    throw new Error(`fs__read_text_file through the broker answered ${JSON.stringify(r).slice(0, 300)}`);
  return meta.pending_id ?? '';
}

async function direct(up: DirectUpstream, path: string): Promise<void> {
  const r = await up.call('read_text_file', { path });
  const first = (r.content as Array<{ type: string; text?: string }> | undefined)?.[0];
  if (first?.text !== TEXT) throw new Error(`read_text_file answered ${JSON.stringify(r).slice(0, 300)}`);
}

async function timed(n: number, one: () => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await one();
    into.push(performance.now() - t0);
  }
}

/**
 * The audit entries the daemon wrote for one command: one per change (submit, the policy's approval,
 * `running`, `succeeded`). Not its commits: the first three share one transaction (the floor's two commits).
 */
function auditEntriesOf(dataDir: string, id: string): number {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM audit WHERE command_id = ?').get(id) as { n: number }).n;
  } finally {
    db.close();
  }
}

export async function upstreamReadOnly(bare: BareServer, quick: boolean): Promise<Row[]> {
  // The files the server may read: never a root that holds the data dir (docs/upstreams.md, threat note).
  const files = realpathSync(mkdtempSync(join(tmpdir(), 'ogf-bench-files-')));
  const path = join(files, 'note.txt');
  writeFileSync(path, TEXT);
  const argv = [process.execPath, FILESYSTEM, files];
  const dir = makeDataDir();
  const d = await startDaemon(
    dir,
    benchConfig({
      upstreams: {
        fs: { argv, tools: ['read_text_file'], trust_read_only_hint: true, wait_seconds: 30 },
      },
    }),
  );
  const clients: Client[] = [];
  let up: DirectUpstream | undefined;
  const commits = new BareCommits();
  try {
    const ours = await connectMcp(d.mcpUrl, d.mcpToken);
    clients.push(ours);
    const echo = await connectMcp(bare.mcpUrl);
    clients.push(echo);
    await waitForTools(ours, ['fs__read_text_file']);
    up = await connectDirect(argv);
    const link = up;
    const rounds = quick ? 45 : 300;
    const broker: number[] = [];
    const straight: number[] = [];
    const hop: number[] = [];
    const commit: number[] = [];
    let lastId = '';
    // One of each per round: the drift hits all four alike, and each bare commit comes a few ms after
    // the last, as the daemon's do (back-to-back fsyncs can be cheaper on a virtual disk).
    for (let i = -30; i < rounds; i++) {
      const keep = i >= 0; // the first 30 rounds warm up: JIT, connections, the servers' first reads
      await timed(
        1,
        async () => {
          lastId = await viaBroker(ours, path);
        },
        keep ? broker : [],
      );
      await timed(1, () => direct(link, path), keep ? straight : []);
      await timed(1, () => callTool(echo, 'echo', { path }), keep ? hop : []);
      const c = commits.time(1);
      if (keep) commit.push(...c);
    }
    const brokerP50 = median(broker);
    const directP50 = median(straight);
    const hopP50 = median(hop);
    const commitP50 = median(commit);
    const floor = directP50 + hopP50 + 2 * commitP50;
    const excess = brokerP50 - floor;
    const detail = {
      calls_each: broker.length,
      audit_entries_per_call: auditEntriesOf(dir, lastId),
      broker_p90_ms: quantile(broker, 0.9),
      direct_p90_ms: quantile(straight, 0.9),
      hop_p99_ms: quantile(hop, 0.99),
      commit_p99_ms: quantile(commit, 0.99),
    };
    const info = (r: Omit<Row, 'id' | 'unit' | 'goal' | 'result'>): Row => ({
      id: ID,
      unit: 'ms',
      goal: '—',
      result: 'info',
      ...r,
    });
    return [
      info({
        figure: 'read_text_file via broker (policy), p50',
        value: brokerP50,
        baseline: directP50,
        baselineLabel: 'direct stdio call',
        ratio: ratioOf(brokerP50, directP50),
        detail,
      }),
      info({
        figure: 'read_text_file via broker (policy), p99',
        value: quantile(broker, 0.99),
        baseline: quantile(straight, 0.99),
        baselineLabel: 'direct stdio call',
        ratio: ratioOf(quantile(broker, 0.99), quantile(straight, 0.99)),
      }),
      info({
        figure: 'one MCP hop: bare SDK echo round trip, p50',
        value: hopP50,
        baseline: null,
        baselineLabel: '',
        ratio: null,
      }),
      info({
        figure: 'one durable commit: bare WAL FULL, p50',
        value: commitP50,
        baseline: null,
        baselineLabel: '',
        ratio: null,
      }),
      info({
        figure: 'floor: direct p50 + 1 MCP hop + 2 commits',
        value: floor,
        baseline: directP50,
        baselineLabel: 'direct p50',
        ratio: ratioOf(floor, directP50),
      }),
      {
        id: ID,
        figure: 'excess: broker p50 − floor',
        value: excess,
        unit: 'ms',
        baseline: floor,
        baselineLabel: 'floor',
        ratio: null,
        goal: `≤ ${ALLOWANCE_MS} ms`,
        result: excess <= ALLOWANCE_MS ? 'pass' : 'miss',
      },
    ];
  } finally {
    commits.close();
    await up?.close();
    await closeMcp(clients);
    await d.stop();
    removeDir(dir);
    removeDir(files);
  }
}
