/**
 * Row 3, approve → spawn and approve → avatar ack for a cue, vs the floor: the same
 * `ogf-bridge-client deliver` spawned by hand on a session file we write, talking to the same app.
 *
 * The reference avatar app's server (examples/avatar-app/server.ts, with its real `BridgeEndpoint`) runs
 * in this process so its `open` (the client connected) and `cue` (applied, ack being sent) events read
 * the same monotonic clock as the owner socket that sends `approve`. Broker cycles and floor cycles
 * alternate, so drift hits both. "Spawn" is observed where it can be from outside: the spawned client's
 * WebSocket connecting to the app (node start-up + imports + session file + connect), in both cases.
 * The floor is also measured with the client as it was before its start-up fix (see esmWsClient).
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSessionFile } from '../../daemon/kinds/cue/session-file.js';
import { type AvatarServer, startAvatarServer } from '../../examples/avatar-app/server.js';
import { owned } from '../lib/cleanup.js';
import { callTool, closeMcp, connectMcp, Owner, type View } from '../lib/clients.js';
import {
  BRIDGE_CLI,
  benchConfig,
  type Daemon,
  makeDataDir,
  ROOT,
  removeDir,
  startDaemon,
} from '../lib/procs.js';
import { median, type Row, ratioOf } from '../lib/stats.js';

const CUE = { action: 'wave', emotion: 'happy', intensity: 0.5, gaze: 'user', ttl_ms: 100 } as const;
const DELIVERY_TIMEOUT_MS = 5000;

interface Marks {
  open?: number;
  ack?: number;
}

function runChild(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = owned(
      spawn(process.execPath, args, {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C.UTF-8' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    child.stdout.resume();
    child.stderr.resume();
    child.once('close', (code) => resolve(code ?? -1));
  });
}

/**
 * The client as it was before it loaded `ws` through `require`: a copy of dist/bridge-client whose
 * deliver.js imports `ws` as an ES module again, so every run can report the floor before and after.
 */
function esmWsClient(): string {
  const src = join(ROOT, 'dist', 'bridge-client');
  // Beside a copy of dist/common, which the client imports (`../common/`) since issue 37 item 1.
  const home = join(ROOT, 'dist', 'bench', 'esm-ws');
  const dst = join(home, 'bridge-client');
  mkdirSync(dst, { recursive: true });
  cpSync(join(ROOT, 'dist', 'common'), join(home, 'common'), { recursive: true });
  for (const f of readdirSync(src).filter((n) => n.endsWith('.js'))) {
    let text = readFileSync(join(src, f), 'utf8');
    if (f === 'deliver.js') {
      const patched = text.replace(
        /const WebSocket = createRequire\(import\.meta\.url\)\('ws'\);/,
        "import WebSocketEsm from 'ws';\nconst WebSocket = WebSocketEsm;",
      );
      if (patched === text) throw new Error('deliver.js no longer loads ws through createRequire');
      text = patched;
    }
    writeFileSync(join(dst, f), text);
  }
  return join(dst, 'cli.js');
}

/** Spawn → exit of `args` (median of n), for the client's start-up cost against bare node. */
async function startup(args: string[], n: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await runChild(args);
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

export async function cueLatency(quick: boolean): Promise<Row[]> {
  const marks = new Map<string, Marks>();
  let openConn: number | undefined;
  let lastOpen = 0;
  const app: AvatarServer = await startAvatarServer({
    port: 0,
    webDir: join(import.meta.dirname, '..', '..', 'examples', 'avatar-app', 'web'),
    onEvent: (e) => {
      const at = performance.now();
      if (e.type === 'open') {
        openConn = e.conn;
        lastOpen = at;
      } else if (e.type === 'cue' && e.outcome === 'applied') {
        const m = marks.get(e.cue_id) ?? {};
        if (e.conn === openConn) m.open = lastOpen;
        m.ack = at;
        marks.set(e.cue_id, m);
      }
    },
  });
  const dir = makeDataDir();
  const d: Daemon = await startDaemon(
    dir,
    benchConfig({ ogf_bridge: { url: app.bridgeUrl, delivery_timeout_ms: DELIVERY_TIMEOUT_MS } }),
  );
  const handDir = mkdtempSync(join(tmpdir(), 'ogf-bench-floor-'));
  const owner = await Owner.open(d);
  const client = await connectMcp(d.mcpUrl, d.mcpToken);
  const broker = {
    spawn: [] as number[],
    ack: [] as number[],
    running: [] as number[],
    done: [] as number[],
  };
  const floor = { spawn: [] as number[], ack: [] as number[], exit: [] as number[] };
  const floorBefore = { spawn: [] as number[], ack: [] as number[], exit: [] as number[] };
  const beforeCli = esmWsClient();
  try {
    const n = quick ? 4 : 12;
    for (let i = -1; i < n; i++) {
      // Through the broker: queue, wait for the owner to see it, approve, watch the app.
      const awaiting = new Promise<View>((resolve) => {
        owner.onUpsert = (v) => {
          if (v.state === 'awaiting_review') resolve(v);
        };
      });
      await callTool(client, 'ogf_cue', {
        session_id: app.endpoint.sessionId,
        ...CUE,
        message: `bench ${i + 1}`,
        wait_seconds: 0,
      });
      const view = await awaiting;
      let running = 0;
      const done = new Promise<number>((resolve) => {
        owner.onUpsert = (v, at) => {
          if (v.id !== view.id) return;
          if (v.state === 'running') running = at;
          else if (v.state !== 'approved') resolve(at);
        };
      });
      const t0 = performance.now();
      await owner.approve(view);
      const tDone = await done;
      const m = marks.get(view.id);
      if (m?.open === undefined || m.ack === undefined) throw new Error(`cue ${view.id} was not applied`);
      if (i >= 0) {
        broker.spawn.push(m.open - t0);
        broker.ack.push(m.ack - t0);
        broker.running.push(running - t0);
        broker.done.push(tDone - t0);
      }

      // By hand: write the session file ourselves, spawn the same client, watch the same app.
      for (const [which, cli] of [
        ['now', BRIDGE_CLI],
        ['before', beforeCli],
      ] as const) {
        const cueId = `c_${which}${String(i + 1).padStart(4, '0')}benchxxxx`;
        const path = join(handDir, `cue-${cueId}.json`);
        writeSessionFile(path, {
          v: 1,
          pending_id: cueId,
          bridge_url: app.bridgeUrl,
          session_id: app.endpoint.sessionId,
          cue: { ...CUE, message: `floor ${i + 1}` },
          deliver_by: new Date(Date.now() + DELIVERY_TIMEOUT_MS + 5000).toISOString(),
          delivery_timeout_ms: DELIVERY_TIMEOUT_MS,
        });
        const f0 = performance.now();
        const code = await runChild([cli, 'deliver', '--session-file', path]);
        const f1 = performance.now();
        const fm = marks.get(cueId);
        if (code !== 0 || fm?.open === undefined || fm.ack === undefined)
          throw new Error(`hand-spawned client (${which}) exited ${code} without delivering`);
        if (i < 0) continue;
        const into = which === 'now' ? floor : floorBefore;
        into.spawn.push(fm.open - f0);
        into.ack.push(fm.ack - f0);
        into.exit.push(f1 - f0);
      }
    }
    const bareNode = await startup(['-e', '0'], quick ? 3 : 10);
    const absent = join(handDir, 'absent.json');
    const clientOnly = await startup([BRIDGE_CLI, 'deliver', '--session-file', absent], quick ? 3 : 10);
    const clientBefore = await startup([beforeCli, 'deliver', '--session-file', absent], quick ? 3 : 10);
    const row = (figure: string, value: number, baseline: number, label: string, gated: boolean): Row => {
      const ratio = ratioOf(value, baseline);
      return {
        id: '3 cue',
        figure,
        value,
        unit: 'ms',
        baseline,
        baselineLabel: label,
        ratio,
        goal: gated ? '≤ 1.2×' : '—',
        result: gated ? (ratio !== null && ratio <= 1.2 ? 'pass' : 'miss') : 'info',
        detail: { cycles: broker.ack.length },
      };
    };
    return [
      row(
        'approve → client connected (spawn), median',
        median(broker.spawn),
        median(floor.spawn),
        'spawn by hand',
        true,
      ),
      row('approve → avatar ack, median', median(broker.ack), median(floor.ack), 'spawn by hand', true),
      {
        ...row('approve → running upsert (before spawn), median', median(broker.running), 0, '', false),
        baseline: null,
        ratio: null,
        detail: { approve_to_final_ms: median(broker.done), hand_spawn_to_exit_ms: median(floor.exit) },
      },
      row(
        'floor: spawn by hand → ack, client now',
        median(floor.ack),
        median(floorBefore.ack),
        'client before',
        false,
      ),
      row('bridge-client start-up (spawn → exit, no delivery)', clientOnly, bareNode, 'node -e 0', false),
      row('bridge-client start-up before (ws as ES module)', clientBefore, bareNode, 'node -e 0', false),
    ];
  } finally {
    owner.onUpsert = () => {};
    await closeMcp([client]);
    await owner.close();
    await d.stop();
    await app.close();
    removeDir(dir);
    removeDir(handDir);
  }
}
