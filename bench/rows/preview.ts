/**
 * Row 13, previews (issue 21, contract 12). The daemon gates the real
 * `@modelcontextprotocol/server-filesystem` with `preset: "filesystem"`, so a `notes__write_file` that
 * starts awaiting review gets a `file_diff` preview: the daemon reads the file through the server's own
 * `read_text_file` and diffs it against the proposed content. Figure: send → the owner's socket shows the
 * preview `ready` (a same-version upsert). Baseline: what the preview cannot avoid, done by the bench
 * itself — the same `read_text_file` sent straight to a second copy of the server over stdio, plus one
 * `createTwoFilesPatch` of the same bytes. Each round writes a fresh file of 200 lines and proposes a
 * change of one line in the middle. Goal: p50 ≤ 1.5×.
 */
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTwoFilesPatch } from 'diff';
import { callTool, closeMcp, connectMcp, Owner } from '../lib/clients.js';
import { benchConfig, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { median, quantile, type Row, ratioOf } from '../lib/stats.js';
import { connectDirect, type DirectUpstream, FILESYSTEM, waitForTools } from '../lib/upstream.js';

const ID = '13 preview';

interface PreviewView {
  args: Record<string, unknown>;
  preview?: { status?: string; diff?: string; error?: string };
}

function fileText(round: number): string {
  return Array.from({ length: 200 }, (_, i) => `line ${i} of round ${round}: some words to diff\n`).join('');
}

export async function preview(quick: boolean): Promise<Row[]> {
  const files = realpathSync(mkdtempSync(join(tmpdir(), 'ogf-bench-files-')));
  const argv = [process.execPath, FILESYSTEM, files];
  const dir = makeDataDir();
  const d = await startDaemon(
    dir,
    benchConfig({ upstreams: { notes: { argv, preset: 'filesystem', wait_seconds: 0 } } }),
  );
  const clients: Client[] = [];
  let owner: Owner | undefined;
  let up: DirectUpstream | undefined;
  try {
    const client = await connectMcp(d.mcpUrl, d.mcpToken);
    clients.push(client);
    await waitForTools(client, ['notes__write_file']);
    const o = await Owner.open(d);
    owner = o;
    const ready = new Map<string, (at: number, v: PreviewView) => void>();
    o.onUpsert = (view, at) => {
      const v = view as unknown as PreviewView;
      const status = v.preview?.status;
      if (status !== 'ready' && status !== 'failed') return;
      ready.get(String(v.args.path))?.(at, v);
    };
    up = await connectDirect(argv);
    const direct = up;
    const viaGate: number[] = [];
    const byHand: number[] = [];
    const n = quick ? 15 : 150;
    for (let i = -5; i < n; i++) {
      const path = join(files, `note-${i + 5}.txt`);
      const old = fileText(i);
      writeFileSync(path, old);
      const proposed = old.replace(`line 100 of round ${i}`, `line 100 changed in round ${i}`);
      // Through the gate: the call queues (wait_seconds 0) and the preview follows on the owner's socket.
      const seen = new Promise<{ at: number; v: PreviewView }>((resolve) =>
        ready.set(path, (at, v) => resolve({ at, v })),
      );
      const t0 = performance.now();
      const r = await callTool(client, 'notes__write_file', { path, content: proposed });
      if (r.status !== 'PENDING') throw new Error(`notes__write_file answered ${JSON.stringify(r)}`);
      const { at, v } = await seen;
      ready.delete(path);
      if (v.preview?.status !== 'ready' || !v.preview.diff?.includes('+line 100 changed'))
        throw new Error(`the preview was ${JSON.stringify(v.preview)}`);
      // By hand: the same read, straight to the server, and one diff of the same bytes.
      const t1 = performance.now();
      const read = await direct.call('read_text_file', { path });
      const text = (read.content as Array<{ text?: string }>)[0]?.text ?? '';
      const patch = createTwoFilesPatch(path, path, text, proposed, undefined, undefined, { context: 3 });
      const t2 = performance.now();
      if (!patch.includes('+line 100 changed')) throw new Error('the bench diff missed the change');
      if (i < 0) continue;
      viaGate.push(at - t0);
      byHand.push(t2 - t1);
    }
    const value = median(viaGate);
    const baseline = median(byHand);
    const ratio = ratioOf(value, baseline);
    return [
      {
        id: ID,
        figure: 'write_file: submit → preview ready, p50',
        value,
        unit: 'ms',
        baseline,
        baselineLabel: 'direct read + one diff, p50',
        ratio,
        goal: '≤ 1.5×',
        result: ratio !== null && ratio <= 1.5 ? 'pass' : 'miss',
        detail: {
          calls_each: viaGate.length,
          gate_p99_ms: quantile(viaGate, 0.99),
          hand_p99_ms: quantile(byHand, 0.99),
        },
      },
    ];
  } finally {
    if (owner) owner.onUpsert = () => {};
    await owner?.close();
    await up?.close();
    await closeMcp(clients);
    await d.stop();
    removeDir(dir);
    removeDir(files);
  }
}
