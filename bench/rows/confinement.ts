/**
 * Row 19, confinement (contract 21, issue 40): what bubblewrap costs an approved call once the process runs.
 *
 * - approve → the upstream receives `tools/call`, through a confined copy of the test upstream vs an
 *   unconfined one, both behind the same daemon and already connected (the sandbox is made once, at the
 *   server's start: after it, a call crosses the same pipe). Cycles alternate. The test upstream appends a
 *   line per call to a FIFO read by this process (bench/lib/upstream.ts); its folder is the confined copy's
 *   one writable path (a private /tmp would hide it otherwise).
 * - approve → the final upsert of a catalog command (`node -e 0`) confined vs unconfined: the sandbox is
 *   made at each launch here, so this one says what a confined command pays per run.
 */
import { dirname } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp, Owner, type View } from '../lib/clients.js';
import { benchConfig, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { median, type Row, ratioOf } from '../lib/stats.js';
import { ReceiptFifo, TEST_UPSTREAM, waitForTools } from '../lib/upstream.js';

const ID = '19 confinement';
const FINAL = new Set(['succeeded', 'denied', 'failed', 'unknown']);

/** Queues through `tool`, waits for the owner's card, approves it; resolves with approve → `done`'s time. */
async function approveCycle(
  client: Client,
  o: Owner,
  tool: string,
  args: Record<string, unknown>,
  matches: (v: View) => boolean,
  done: (view: View, t0: number) => Promise<number>,
): Promise<number> {
  const awaiting = new Promise<View>((resolve) => {
    o.onUpsert = (v) => {
      if (v.state === 'awaiting_review' && matches(v)) resolve(v);
    };
  });
  const queued = await callTool(client, tool, args);
  if (queued.status !== 'PENDING') throw new Error(`${tool} answered ${JSON.stringify(queued)}`);
  const view = await awaiting;
  const t0 = performance.now();
  const ended = done(view, t0);
  const reply = await o.approve(view);
  if (reply.ok !== true) throw new Error(`approve refused: ${JSON.stringify(reply)}`);
  return ended;
}

export async function confinement(quick: boolean): Promise<Row[]> {
  const fifo = ReceiptFifo.open();
  const argv = [process.execPath, TEST_UPSTREAM, 'ok', fifo.path];
  const noop = { description: 'nothing', argv: [process.execPath, '-e', '0'], timeout_s: 30 };
  const dir = makeDataDir();
  const d = await startDaemon(
    dir,
    benchConfig({
      upstreams: {
        open: { argv, tools: ['echo'], wait_seconds: 0 },
        boxed: { argv, tools: ['echo'], wait_seconds: 0, sandbox: { writable: [dirname(fifo.path)] } },
      },
      commands: { 'run-open': noop, 'run-boxed': { ...noop, sandbox: {} } },
    }),
  );
  const clients: Client[] = [];
  let owner: Owner | undefined;
  try {
    const client = await connectMcp(d.mcpUrl, d.mcpToken);
    clients.push(client);
    await waitForTools(client, ['open__echo', 'boxed__echo']);
    const o = await Owner.open(d);
    owner = o;
    const receive = (upstream: string, key: string) =>
      approveCycle(
        client,
        o,
        `${upstream}__echo`,
        { text: key },
        (v) => v.args.text === key,
        (_v, t0) => fifo.receipt(key).then((t1) => t1 - t0),
      );
    const run = (command: string) =>
      approveCycle(
        client,
        o,
        'run_command_wait',
        { command, args: {}, wait_seconds: 0 },
        (v) => v.command === command,
        (view, t0) =>
          new Promise<number>((resolve, reject) => {
            const previous = o.onUpsert;
            o.onUpsert = (v, at) => {
              previous(v, at);
              if (v.id !== view.id || !FINAL.has(v.state)) return;
              if (v.state === 'succeeded') resolve(at - t0);
              else reject(new Error(`${command} ended ${v.state}`));
            };
          }),
      );
    const boxed: number[] = [];
    const open: number[] = [];
    const runBoxed: number[] = [];
    const runOpen: number[] = [];
    const n = quick ? 10 : 100;
    for (let i = -3; i < n; i++) {
      const b = await receive('boxed', `b${i}`);
      const u = await receive('open', `u${i}`);
      const rb = await run('run-boxed');
      const ru = await run('run-open');
      if (i < 0) continue;
      boxed.push(b);
      open.push(u);
      runBoxed.push(rb);
      runOpen.push(ru);
    }
    const value = median(boxed);
    const baseline = median(open);
    const ratio = ratioOf(value, baseline);
    const run1 = median(runBoxed);
    const run0 = median(runOpen);
    return [
      {
        id: ID,
        figure: 'approve → confined upstream receives tools/call, median',
        value,
        unit: 'ms',
        baseline,
        baselineLabel: 'same, unconfined upstream',
        ratio,
        goal: '≤ 1.2×',
        result: ratio !== null && ratio <= 1.2 ? 'pass' : 'miss',
        detail: { cycles: boxed.length },
      },
      {
        id: ID,
        figure: 'approve → confined catalog command (node -e 0) ends, median',
        value: run1,
        unit: 'ms',
        baseline: run0,
        baselineLabel: 'same, unconfined',
        ratio: ratioOf(run1, run0),
        goal: '—',
        result: 'info',
        detail: { cycles: runBoxed.length },
      },
    ];
  } finally {
    if (owner) owner.onUpsert = () => {};
    await owner?.close();
    await closeMcp(clients);
    await d.stop();
    removeDir(dir);
    fifo.close();
  }
}
