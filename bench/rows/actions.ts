/**
 * Row 20 (issue 38, contract 19): a decision through a notification's action URL vs the same decision over
 * the owner socket, goal ≤ 1.5×. One daemon with an ntfy-format channel (`actions: true`) whose messages a
 * receiver of the bench's own (loopback HTTP, as ntfy would) keeps; each pair queues two `noop` commands,
 * then approves one with the `approve` frame and the other by POSTing its Approve action, as the phone's
 * ntfy app does (a plain node:http POST on a kept-alive connection). Both are timed from the send to the command's `approved` upsert on the owner's socket
 * (sent after the decision's commit), so both ends are the same. Which goes first alternates. A channel
 * sends at most five `waiting` messages per 10 s (the sixth goes in a digest, which carries no actions),
 * so the row paces its submissions; each launched `/bin/true` ends before the next sample (its spawn
 * blocks the daemon's thread).
 */
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callTool, closeMcp, connectMcp, Owner, type View } from '../lib/clients.js';
import { benchConfig, makeDataDir, removeDir, sleep, startDaemon } from '../lib/procs.js';
import { quantile, type Row, ratioOf } from '../lib/stats.js';
import { Upserts } from '../lib/upserts.js';

const ID = '20 action URL';

/** The ntfy messages received, by the card id their Click header names. */
class Receiver {
  readonly server: Server;
  readonly actions = new Map<string, string>();
  readonly #waiting = new Map<string, (url: string) => void>();

  constructor() {
    this.server = createServer((req: IncomingMessage, res) => {
      req.resume();
      req.on('end', () => {
        const id = /#(.+)$/.exec(String(req.headers.click ?? ''))?.[1];
        const approve = /http, Approve, (\S+?),/.exec(String(req.headers.actions ?? ''))?.[1];
        if (id !== undefined && approve !== undefined) {
          this.actions.set(id, approve);
          this.#waiting.get(id)?.(approve);
        }
        res.end('{}');
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/topic`;
  }

  /** The Approve URL of command `id`'s message, once it came. */
  approveUrl(id: string): Promise<string> {
    const got = this.actions.get(id);
    if (got !== undefined) return Promise.resolve(got);
    return new Promise((r) => this.#waiting.set(id, r));
  }
}

/** One keep-alive connection, as ntfy's app holds one: the POST is a plain HTTP request, not undici's fetch,
 * whose own cost in this process (~1–2 ms a call on Node 20) would be the client's, not the daemon's. */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** POSTs `url` with an empty body; resolves with the status once the answer was read. */
function post(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-length': '0' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function actionUrl(quick: boolean): Promise<Row> {
  const pairs = quick ? 4 : 12;
  const receiver = new Receiver();
  const url = await receiver.listen();
  const dir = makeDataDir();
  const d = await startDaemon(
    dir,
    benchConfig({ notify: [{ id: 'phone', type: 'webhook', url, format: 'ntfy', actions: true }] }),
  );
  const owner = await Owner.open(d);
  const upserts = new Upserts(owner);
  const client = await connectMcp(d.mcpUrl, d.mcpToken);
  const viaUrl: number[] = [];
  const viaSocket: number[] = [];
  const sent: number[] = [];
  try {
    const queue = async (tag: string): Promise<View> => {
      // Five waiting messages per 10 s at most: the sixth would be a digest, with no actions.
      while (sent.length >= 4 && performance.now() - sent[sent.length - 4]! < 10_500) await sleep(200);
      sent.push(performance.now());
      await callTool(client, 'run_command_wait', { command: 'noop', args: { tag }, wait_seconds: 0 });
      return (await upserts.next(tag, 'awaiting_review')).view;
    };
    const bySocket = async (tag: string, view: View) => {
      const t0 = performance.now();
      void owner.approve(view);
      viaSocket.push((await upserts.next(tag, 'approved')).at - t0);
      await upserts.next(tag, 'succeeded');
    };
    const byUrl = async (tag: string, view: View) => {
      const action = await receiver.approveUrl(view.id);
      const t0 = performance.now();
      const status = await post(action);
      if (status !== 200) throw new Error(`the action answered ${status}`);
      viaUrl.push((await upserts.next(tag, 'approved')).at - t0);
      await upserts.next(tag, 'succeeded');
    };
    for (let i = 0; i < pairs; i++) {
      const a = await queue(`u${i}`);
      const b = await queue(`s${i}`);
      if (i % 2 === 0) {
        await byUrl(`u${i}`, a);
        await bySocket(`s${i}`, b);
      } else {
        await bySocket(`s${i}`, b);
        await byUrl(`u${i}`, a);
      }
    }
    const v = quantile(viaUrl, 0.5);
    const b = quantile(viaSocket, 0.5);
    const ratio = ratioOf(v, b);
    return {
      id: ID,
      figure: 'approve through the Approve action URL → approved, p50',
      value: v,
      unit: 'ms',
      baseline: b,
      baselineLabel: 'the approve frame over the owner socket, p50',
      ratio,
      goal: '≤ 1.5×',
      result: ratio !== null && ratio <= 1.5 ? 'pass' : 'miss',
      detail: { pairs, p90_ms: quantile(viaUrl, 0.9), baseline_p90_ms: quantile(viaSocket, 0.9) },
    };
  } finally {
    await closeMcp([client]);
    await owner.close();
    await d.stop();
    receiver.server.close();
    agent.destroy();
    removeDir(dir);
  }
}
