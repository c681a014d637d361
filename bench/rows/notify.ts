/**
 * Row 12, notifications (issue 23): (a) `run_command_wait` sent → the `json` webhook received by a loopback
 * HTTP server in this process, against the same submit → the owner's `upsert`, p50, goal ≤ 1.5×; (b) the
 * submit path (the client's `run_command_wait` round trip) with 3 channels configured against none, p50,
 * goal ≤ 1.05×. Sender, receiver and owner live in this process, so all read one monotonic clock.
 *
 * The digest (contract 13.1) tells only the first 5 waiting commands of each 10 s window one by one, so (a)
 * samples 5 submits per window on each of three daemons and waits for the next one; (b) sends as fast as it
 * can, where the channels mostly build digests — what a flood costs the submit path — in blocks alternating
 * between a daemon without channels and one with three.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { benchConfig, makeDataDir, removeDir, sleep, startDaemon } from '../lib/procs.js';
import { quantile, type Row, ratioOf, rotating } from '../lib/stats.js';

/** Daemons sharing each 10-s window of (a). */
const DAEMONS = 3;

async function receiver(
  onBody: (body: string, at: number) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      onBody(Buffer.concat(chunks).toString('utf8'), performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

/** One daemon of the row: how to submit to it, and how to end it (with its owner and client). */
interface Told {
  submit(tag: string): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * A daemon with one `json` webhook to `url`; each first upsert of a tag in `sentByTag` is timed into
 * `upsert` and its command's id remembered for the webhook's body.
 */
async function toldDaemon(
  url: string,
  sentByTag: Map<string, number>,
  sentById: Map<string, number>,
  upsert: number[],
): Promise<Told> {
  const dir = makeDataDir();
  const d = await startDaemon(
    dir,
    benchConfig({ notify: [{ id: 'hook', type: 'webhook', url, format: 'json' }] }),
  );
  const owner = await Owner.open(d);
  owner.onUpsert = (view, at) => {
    if (view.version !== 1) return;
    const t0 = sentByTag.get(String(view.args.tag));
    if (t0 === undefined) return;
    sentById.set(view.id, t0);
    upsert.push(at - t0);
  };
  const client = await connectMcp(d.mcpUrl, d.mcpToken);
  return {
    submit: (tag) =>
      callTool(client, 'run_command_wait', { command: 'noop', args: { tag }, wait_seconds: 0 }),
    async close() {
      await closeMcp([client]);
      await owner.close();
      await d.stop();
      removeDir(dir);
    },
  };
}

/**
 * (a): per submit, ms to the owner's upsert and to the webhook. A channel tells five waiting commands of a
 * 10-s window one by one (contract 13.1), so each window holds five submits to each of DAEMONS daemons in
 * turn (one at a time): three times the samples of one daemon in the same wait (issue 41: 20 samples made
 * the median move by a third from run to run).
 */
async function deliverySamples(windows: number): Promise<{ upsert: number[]; hook: number[] }> {
  const sentById = new Map<string, number>();
  const sentByTag = new Map<string, number>();
  const upsert: number[] = [];
  const hook: number[] = [];
  const r = await receiver((body, at) => {
    const m = JSON.parse(body) as { event?: string; pending_id?: string };
    const t0 = m.event === 'waiting' ? sentById.get(String(m.pending_id)) : undefined;
    if (t0 !== undefined) hook.push(at - t0);
  });
  const daemons: Told[] = [];
  try {
    for (let i = 0; i < DAEMONS; i++) daemons.push(await toldDaemon(r.url, sentByTag, sentById, upsert));
    for (let w = 0; w < windows; w++) {
      const start = performance.now();
      for (const [i, d] of daemons.entries()) {
        for (let k = 0; k < 5; k++) {
          const tag = `n${w}d${i}k${k}`;
          sentByTag.set(tag, performance.now());
          await d.submit(tag);
        }
      }
      // The next window opens 10 s after this one did.
      await sleep(Math.max(0, 10_100 - (performance.now() - start)));
    }
    return { upsert, hook };
  } finally {
    for (const d of daemons) await d.close();
    r.server.close();
  }
}

/** (b): a daemon with `channels` webhook channels to a loopback receiver, and its client's round trips. */
async function submitter(
  channels: number,
  url: string,
): Promise<Told & { lat: number[]; block(n: number): Promise<void> }> {
  const notify = Array.from({ length: channels }, (_, i) => ({
    id: `c${i}`,
    type: 'webhook',
    url,
    format: ['json', 'ntfy', 'slack'][i % 3],
  }));
  const dir = makeDataDir();
  const d = await startDaemon(dir, benchConfig({ notify }));
  const client = await connectMcp(d.mcpUrl, d.mcpToken);
  const lat: number[] = [];
  let k = 0;
  const submit = (tag: string) =>
    callTool(client, 'run_command_wait', { command: 'noop', args: { tag }, wait_seconds: 0 });
  for (let w = 0; w < 20; w++) await submit(`w${w}`);
  return {
    lat,
    submit,
    async block(n) {
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await submit(`s${k++}`);
        lat.push(performance.now() - t0);
      }
    },
    async close() {
      await closeMcp([client]);
      await d.stop();
      removeDir(dir);
    },
  };
}

export async function notifyRows(quick: boolean): Promise<Row[]> {
  const { upsert, hook } = await deliverySamples(quick ? 2 : 4);
  const hookP50 = quantile(hook, 0.5);
  const upsertP50 = quantile(upsert, 0.5);
  const r = await receiver(() => {});
  const count = quick ? 200 : 1200;
  // Both daemons up at once, in blocks of 25 that alternate which goes first (stats.ts rotating), so the
  // machine's drift falls on both alike (issue 41: two halves each, 0.84-1.15x from run to run).
  const sides: Array<Awaited<ReturnType<typeof submitter>>> = [];
  try {
    for (const channels of [0, 3]) sides.push(await submitter(channels, r.url));
    await rotating(
      sides.map((side) => () => side.block(25)),
      count / 50,
    );
  } finally {
    for (const side of sides) await side.close();
    r.server.close();
  }
  const [none, three] = [sides[0]!.lat, sides[1]!.lat];
  const ratioA = ratioOf(hookP50, upsertP50);
  const submit3 = quantile(three, 0.5);
  const submit0 = quantile(none, 0.5);
  const ratioB = ratioOf(submit3, submit0);
  return [
    {
      id: '12 notify',
      figure: 'submit → json webhook received, p50',
      value: hookP50,
      unit: 'ms',
      baseline: upsertP50,
      baselineLabel: 'submit → owner upsert p50',
      ratio: ratioA,
      goal: '≤ 1.5×',
      result: ratioA !== null && ratioA <= 1.5 ? 'pass' : 'miss',
      detail: { samples: hook.length, upsert_samples: upsert.length, hook_p99: quantile(hook, 0.99) },
    },
    {
      id: '12 notify',
      figure: 'submit round trip with 3 channels, p50',
      value: submit3,
      unit: 'ms',
      baseline: submit0,
      baselineLabel: 'no channel p50',
      ratio: ratioB,
      goal: '≤ 1.05×',
      result: ratioB !== null && ratioB <= 1.05 ? 'pass' : 'miss',
      detail: { samples: three.length, baseline_samples: none.length },
    },
  ];
}
