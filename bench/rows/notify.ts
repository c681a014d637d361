/**
 * Row 12, notifications (issue 23, contract 13.1). Two figures, each beside its baseline in the same run:
 *
 * - **The owner hears of it.** A catalog call (`wait_seconds: 0`) starts awaiting review; a `json` webhook
 *   channel posts `waiting` to an HTTP server on loopback (it plays the owner's webhook receiver: ntfy,
 *   Slack and the rest are the same POST). Figure: send → the webhook's request fully received; baseline:
 *   send → the owner's socket upsert of the same command. Calls are 2.1 s apart, so no 10 s window holds
 *   more than 5 and every one goes out on its own, not in a digest. Goal: p50 ≤ 1.5×.
 * - **Channels cost the submit nothing.** The PENDING path on a daemon with 3 webhook channels vs a daemon
 *   with none, calls alternating one by one between the two. Goal: p50 ≤ 1.05×.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { benchConfig, type Daemon, makeDataDir, removeDir, sleep, startDaemon } from '../lib/procs.js';
import { median, quantile, type Row, ratioOf } from '../lib/stats.js';
import { Upserts } from '../lib/upserts.js';

const ID = '12 notify';
/** Contract 13.1: more than 5 in 10 s go as a digest; one call per 2.1 s keeps each on its own. */
const SPACING_MS = 2100;

/** A webhook receiver on loopback: when each `waiting` message arrived, by pending_id. */
class Receiver {
  readonly #server: Server;
  readonly #arrived = new Map<string, number>();
  readonly #waiting = new Map<string, (at: number) => void>();
  received = 0;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<Receiver> {
    let self: Receiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        res.writeHead(200).end();
        self!.received++;
        let id: string | undefined;
        try {
          id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { pending_id?: string }).pending_id;
        } catch {
          return;
        }
        if (id === undefined) return;
        const w = self!.#waiting.get(id);
        if (w) {
          self!.#waiting.delete(id);
          w(at);
        } else self!.#arrived.set(id, at);
      });
    });
    self = new Receiver(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  /** When the message for `id` arrived (now or later). */
  arrival(id: string, timeoutMs = 30_000): Promise<number> {
    const at = this.#arrived.get(id);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no webhook for ${id}`)), timeoutMs);
      this.#waiting.set(id, (t) => {
        clearTimeout(timer);
        resolve(t);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((r) => this.#server.close(() => r()));
  }
}

interface Side {
  d: Daemon;
  dir: string;
  owner: Owner;
  upserts: Upserts;
  client: Client;
}

async function open(notify: unknown[]): Promise<Side> {
  const dir = makeDataDir();
  const d = await startDaemon(dir, benchConfig({ notify }));
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

/** Queues `noop` with `tag` (it waits for review); resolves with its pending_id and when it was sent. */
async function submit(s: Side, tag: string): Promise<{ id: string; t0: number }> {
  const t0 = performance.now();
  const r = await callTool(s.client, 'run_command_wait', { command: 'noop', args: { tag }, wait_seconds: 0 });
  if (r.status !== 'PENDING') throw new Error(`noop answered ${JSON.stringify(r)}`);
  return { id: String(r.pending_id), t0 };
}

function gated(figure: string, a: number[], b: number[], label: string, goal: number): Row {
  const value = median(a);
  const baseline = median(b);
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
    detail: { calls_each: a.length, value_p99_ms: quantile(a, 0.99), baseline_p99_ms: quantile(b, 0.99) },
  };
}

export async function notify(quick: boolean): Promise<Row[]> {
  const receivers: Receiver[] = [];
  let heard: Side | undefined;
  let three: Side | undefined;
  let none: Side | undefined;
  try {
    for (let i = 0; i < 4; i++) receivers.push(await Receiver.start());
    const hook = (r: Receiver, id: string) => ({ id, type: 'webhook', url: r.url, format: 'json' });
    heard = await open([hook(receivers[0]!, 'bench')]);
    three = await open(receivers.slice(1).map((r, i) => hook(r, `bench-${i}`)));
    none = await open([]);

    // Figure 1: webhook vs owner upsert of the same command, spaced so none goes in a digest.
    const webhook: number[] = [];
    const upsert: number[] = [];
    const spaced = quick ? 12 : 40;
    for (let i = -2; i < spaced; i++) {
      const tag = `w${i + 2}`;
      const seen = heard.upserts.next(tag, 'awaiting_review');
      const { id, t0 } = await submit(heard, tag);
      const [hookAt, ownerAt] = await Promise.all([receivers[0]!.arrival(id), seen.then((s) => s.at)]);
      if (i >= 0) {
        webhook.push(hookAt - t0);
        upsert.push(ownerAt - t0);
      }
      await sleep(SPACING_MS);
    }

    // Figure 2: the submit path with 3 channels vs none, alternating one by one.
    const withChannels: number[] = [];
    const without: number[] = [];
    const n = quick ? 30 : 300;
    for (let i = -10; i < n; i++) {
      const order: Side[] = i % 2 === 0 ? [three, none] : [none, three];
      for (const s of order) {
        const tag = `${s === three ? 'c' : 'n'}${i + 10}`;
        const seen = s.upserts.next(tag, 'awaiting_review');
        const { t0 } = await submit(s, tag);
        const at = (await seen).at;
        if (i >= 0) (s === three ? withChannels : without).push(at - t0);
      }
    }
    return [
      gated('waiting: submit → webhook received, p50', webhook, upsert, 'submit → owner upsert, p50', 1.5),
      gated('3 channels: submit → PENDING, p50', withChannels, without, 'no channels, p50', 1.05),
    ];
  } finally {
    await close(heard);
    await close(three);
    await close(none);
    for (const r of receivers) await r.close();
  }
}
