/**
 * Row 12, notifications (issue 23): (a) `run_command_wait` sent → the `json` webhook received by a loopback
 * HTTP server in this process, against the same submit → the owner's `upsert`, p50, goal ≤ 1.5×; (b) the
 * submit path (the client's `run_command_wait` round trip) with 3 channels configured against none, p50,
 * goal ≤ 1.05×. Sender, receiver and owner live in this process, so all read one monotonic clock.
 *
 * The digest (contract 13.1) tells only the first 5 waiting commands of each 10 s window one by one, so (a)
 * samples 5 submits per window and waits for the next one; (b) sends as fast as it can, where the channels
 * mostly build digests — what a flood costs the submit path.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { benchConfig, makeDataDir, removeDir, sleep, startDaemon } from '../lib/procs.js';
import { quantile, type Row, ratioOf } from '../lib/stats.js';

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

/** (a): per submit, ms to the owner's upsert and to the webhook. */
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
  const dir = makeDataDir();
  const d = await startDaemon(
    dir,
    benchConfig({ notify: [{ id: 'hook', type: 'webhook', url: r.url, format: 'json' }] }),
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
  try {
    for (let w = 0; w < windows; w++) {
      const start = performance.now();
      for (let k = 0; k < 5; k++) {
        const tag = `n${w}k${k}`;
        sentByTag.set(tag, performance.now());
        await callTool(client, 'run_command_wait', { command: 'noop', args: { tag }, wait_seconds: 0 });
      }
      // The next window opens 10 s after this one did.
      await sleep(Math.max(0, 10_100 - (performance.now() - start)));
    }
    return { upsert, hook };
  } finally {
    await closeMcp([client]);
    await owner.close();
    await d.stop();
    removeDir(dir);
    r.server.close();
  }
}

/** (b): the client's submit round trip, with `channels` webhook channels to a loopback receiver. */
async function submitSamples(channels: number, count: number, url: string): Promise<number[]> {
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
  try {
    for (let k = 0; k < 20; k++)
      await callTool(client, 'run_command_wait', {
        command: 'noop',
        args: { tag: `w${k}` },
        wait_seconds: 0,
      });
    for (let k = 0; k < count; k++) {
      const t0 = performance.now();
      await callTool(client, 'run_command_wait', {
        command: 'noop',
        args: { tag: `s${k}` },
        wait_seconds: 0,
      });
      lat.push(performance.now() - t0);
    }
    return lat;
  } finally {
    await closeMcp([client]);
    await d.stop();
    removeDir(dir);
  }
}

export async function notifyRows(quick: boolean): Promise<Row[]> {
  const { upsert, hook } = await deliverySamples(quick ? 2 : 4);
  const hookP50 = quantile(hook, 0.5);
  const upsertP50 = quantile(upsert, 0.5);
  const r = await receiver(() => {});
  const count = quick ? 200 : 600;
  // Interleaved, so drift on a shared machine falls on both alike.
  const none: number[] = [];
  const three: number[] = [];
  for (let round = 0; round < 2; round++) {
    none.push(...(await submitSamples(0, count / 2, r.url)));
    three.push(...(await submitSamples(3, count / 2, r.url)));
  }
  r.server.close();
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
