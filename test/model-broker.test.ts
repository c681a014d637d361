/**
 * Model-based test of the lifecycle (contracts.md section 2): fast-check draws random sequences of
 * submit / approve / deny / cancel / reconcile / expire (fake clock) / exit / crash-restart and runs them
 * against the REAL Broker over a real SQLite file, with real child processes — the real CatalogExecutor
 * running tiny node children, and the real CueExecutor running a stand-in bridge client (its test seam
 * `clientScript`) so that per-session FIFO (rule 6) and secret loss at restart (rule 4) are exercised.
 * Children wait for a release file, so the test decides when and how each one exits.
 *
 * After every step the broker, and the row in SQLite, must agree with a tiny reference model: state,
 * status, reason and version of every command. Throughout: no child launches twice, nothing launches
 * that was not approved (rule 1), and nothing the model says never ran was launched.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../daemon/base/log.js';
import type { Config } from '../daemon/config/index.js';
import type { Command } from '../daemon/core/model/lifecycle.js';
import { toResult } from '../daemon/core/model/tool-result.js';
import { Broker } from '../daemon/core/runtime/broker.js';
import { openDataDir } from '../daemon/datadir/datadir.js';
import { Catalog } from '../daemon/kinds/catalog/catalog.js';
import { CatalogExecutor } from '../daemon/kinds/catalog/executor.js';
import { CueExecutor } from '../daemon/kinds/cue/executor.js';
import type { CuesApi } from '../daemon/kinds/cue/feature.js';
import { createCueFeature } from '../daemon/kinds/cue/feature.js';
import { sweepRunDir } from '../daemon/kinds/cue/session-file.js';
import { KINDS } from '../daemon/kinds/index.js';
import { Store } from '../daemon/store/sqlite/index.js';
import { FakeClock } from './helpers/fake-clock.js';
import type { Expected, ModelCommand, ModelState } from './helpers/fault-model.js';
import * as M from './helpers/fault-model.js';

const REVIEW_S = 300;
const SESSIONS = ['6f1c2a9e-1b2c-4d3e-8f4a-5b6c7d8e9f00', '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'];

/** A catalog child: records its launch, then exits with the code written into its release file. */
const JOB = `const fs=require('fs'),p=require('path');const [d,tag]=process.argv.slice(1);
fs.appendFileSync(p.join(d,'launched'),tag+'\\n');
const go=p.join(d,'go-'+tag);setTimeout(()=>process.exit(9),30000);
setInterval(()=>{try{process.exit(Number(fs.readFileSync(go,'utf8')))}catch{if(!fs.existsSync(d))process.exit(9)}},10);`;

/** The stand-in bridge client: consumes its session file like the real one, then waits for its release. */
const FAKE_CLIENT = `const fs=require('fs'),p=require('path');const file=process.argv[process.argv.length-1];
const s=JSON.parse(fs.readFileSync(file,'utf8'));fs.unlinkSync(file);const d=p.join(p.dirname(file),'..');
fs.appendFileSync(p.join(d,'launched'),s.pending_id+'\\n');const go=p.join(d,'go-'+s.pending_id);setTimeout(()=>process.exit(9),30000);
setInterval(()=>{let how;try{how=fs.readFileSync(go,'utf8')}catch{if(!fs.existsSync(d))process.exit(9);return}
if(how==='ok'){console.log(JSON.stringify({outcome:'delivered',code:'Delivered',detail:'ok',ack:{type:'cue_ack',cue_id:s.pending_id,applied_at:new Date().toISOString(),duplicate:false}}));process.exit(0)}
if(how==='fail'){console.log(JSON.stringify({outcome:'not_delivered',code:'AvatarNotReady',detail:'not ready'}));process.exit(2)}
console.log(JSON.stringify({outcome:'unknown',code:'DeliveryUnconfirmed',detail:'no ack'}));process.exit(3)},10);`;

interface Real {
  dir: string;
  clock: FakeClock;
  store: Store;
  broker: Broker;
  catalog: Catalog;
  cues: CuesApi;
  cueExecutor: CueExecutor;
  /** Brokers replaced by a crash, closed at teardown. */
  dead: Array<Promise<void>>;
}

function launched(r: Real): string[] {
  const f = join(r.dir, 'launched');
  return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n') : [];
}

function makeBroker(r: Pick<Real, 'store' | 'clock' | 'catalog' | 'cueExecutor'>): Broker {
  const b = new Broker({
    store: r.store,
    reviewTimeoutS: REVIEW_S,
    kinds: KINDS,
    executors: {
      run_command_wait: new CatalogExecutor(r.catalog, 4096),
      ogf_cue: r.cueExecutor,
    },
    clock: r.clock,
  });
  b.start();
  return b;
}

async function setup(): Promise<Real> {
  const dir = await mkdtemp(join(tmpdir(), 'ogf-model-'));
  const paths = openDataDir(dir);
  writeFileSync(join(dir, 'fake-client.cjs'), FAKE_CLIENT);
  const commands = {
    job: {
      description: 'model job',
      argv: [process.execPath, '-e', JOB, dir, '{tag}'],
      params: { tag: { type: 'string' as const, max_length: 20, pattern: '^[a-z0-9]+$' } },
      timeout_s: 60,
    },
  };
  const config = {
    ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge', delivery_timeout_ms: 20_000 },
    output_limit_bytes: 4096,
    commands,
  } as unknown as Config;
  const feature = createCueFeature({ config, paths, log: silentLogger });
  if (!feature) throw new Error('cue feature off');
  const cueExecutor = new CueExecutor({
    bridge: config.ogf_bridge!,
    outputLimitBytes: 4096,
    log: silentLogger,
    clientScript: join(dir, 'fake-client.cjs'),
  });
  const clock = new FakeClock();
  const store = new Store(paths.db);
  const catalog = new Catalog({ commands });
  const broker = makeBroker({ store, clock, catalog, cueExecutor });
  return { dir, clock, store, broker, catalog, cues: feature.cues, cueExecutor, dead: [] };
}

async function teardown(r: Real): Promise<void> {
  // Release every child still waiting, then let the brokers go.
  for (const id of launched(r)) writeFileSync(join(r.dir, `go-${id}`), '0');
  await r.broker.close(3000);
  await Promise.all(r.dead);
  r.store.close();
  // A child spawned just before the end may still be starting and append its launch line while the
  // directory goes; retry, as it then sees the directory gone and exits.
  rmSync(r.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}

/** Differences between the model and the real broker (and the durable row); empty when they agree. */
function diff(m: ModelState, r: Real): string[] {
  const out: string[] = [];
  for (const mc of m.commands) {
    const e: Expected = M.expectedStatus(mc);
    for (const [where, c] of [
      ['broker', r.broker.get(mc.id)],
      ['store', r.store.get(mc.id)],
    ] as Array<[string, Command | undefined]>) {
      if (!c) {
        out.push(`${where}: ${mc.id} lost`);
        continue;
      }
      const res = toResult(c);
      const got = { state: c.phase.state, status: res.status, reason: res.reason, version: c.version };
      if (JSON.stringify(got) !== JSON.stringify(e))
        out.push(
          `${where}: ${mc.id} (${mc.kind}) is ${JSON.stringify(got)}, model says ${JSON.stringify(e)}`,
        );
    }
  }
  const ran = launched(r);
  const once = new Set(ran);
  if (once.size !== ran.length) out.push(`a child launched twice: ${ran.join(',')}`);
  for (const mc of m.commands) {
    const key = mc.kind === 'job' && mc.tag !== undefined ? mc.tag : mc.id;
    // The model knows when something MUST have launched (released and finished) and when it must NOT
    // (it never went running: rule 1, and rule 3's durable mark before the spawn).
    if (mc.mustHaveRun && !once.has(key)) out.push(`${mc.id} should have launched`);
    if (!mc.mayRun && once.has(key)) out.push(`${mc.id} launched but never went running (rules 1, 3)`);
  }
  return out;
}

/** Asserts agreement now (synchronous steps) or within a short while (steps that wait on children). */
async function agree(m: ModelState, r: Real, eventually: boolean): Promise<void> {
  steps++;
  const op = m.log.at(-1)?.split(' ')[0] ?? '?';
  ops.set(op, (ops.get(op) ?? 0) + 1);
  let d = diff(m, r);
  const end = Date.now() + 10_000;
  while (eventually && d.length > 0 && Date.now() < end) {
    await new Promise((res) => setTimeout(res, 15));
    d = diff(m, r);
  }
  expect(d, `after ${m.log.join(' → ')}`).toEqual([]);
}

// ---- the model's operations ------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<ModelState, Real>;

class SubmitJob implements Cmd {
  check = () => true;
  async run(m: ModelState, r: Real) {
    const tag = `t${m.commands.length}n${m.nonce}`;
    const p = r.catalog.prepare('job', { tag }, 'local');
    if (!p.ok) throw new Error(p.message);
    const res = await r.broker.submit(p.request);
    if (!res.ok) throw new Error(res.message);
    M.submit(m, { id: res.command.id, kind: 'job', tag });
    await agree(m, r, false);
  }
  toString = () => 'submitJob';
}

class SubmitCue implements Cmd {
  constructor(
    readonly session: number,
    readonly action: 'wave' | 'nod' | 'celebrate',
  ) {}
  check = () => true;
  async run(m: ModelState, r: Real) {
    const req = r.cues.prepare(
      {
        session_id: SESSIONS[this.session]!,
        action: this.action,
        emotion: 'happy',
        intensity: 0.5,
        gaze: 'user',
        ttl_ms: 3000,
        wait_seconds: 0,
      },
      'local',
    );
    const res = await r.broker.submit(req);
    if (!res.ok) throw new Error(res.message);
    // The twin rule (3.1): an identical cue still PENDING comes back instead of a new one.
    const twin = M.twinOf(m, this.session, this.action);
    if (twin) expect(res).toMatchObject({ created: false, command: { id: twin.id } });
    else {
      expect(res.created).toBe(true);
      M.submit(m, { id: res.command.id, kind: 'cue', session: this.session, action: this.action });
    }
    await agree(m, r, false);
  }
  toString = () => `submitCue(${this.session},${this.action})`;
}

/** Several distinct cues for one session, approved at once: the per-session FIFO (rule 6) must order them. */
class CueBurst implements Cmd {
  constructor(
    readonly session: number,
    readonly actions: ReadonlyArray<'wave' | 'nod' | 'celebrate'>,
  ) {}
  check = () => true;
  async run(m: ModelState, r: Real) {
    for (const action of new Set(this.actions)) {
      await new SubmitCue(this.session, action).run(m, r);
      const c = M.twinOf(m, this.session, action)!;
      if (c.state !== 'awaiting_review') continue;
      await new Decide(m.commands.indexOf(c) * 5 + 1, 'approve', false).runOn(m, r, c);
    }
  }
  toString = () => `cueBurst(${this.session},${this.actions.join('+')})`;
}

abstract class OnCommand implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<ModelState>) => m.commands.length > 0;
  /** Mostly a command in the states this operation is meant for; sometimes any (to probe refusals). */
  target(m: ModelState, prefer?: ReadonlyArray<string>): ModelCommand {
    const fit = prefer ? m.commands.filter((c) => prefer.includes(c.state)) : [];
    const pool = fit.length > 0 && this.pick % 5 !== 0 ? fit : m.commands;
    return pool[Math.floor(this.pick / 5) % pool.length]!;
  }
  abstract run(m: ModelState, r: Real): Promise<void>;
}

class Decide extends OnCommand {
  constructor(
    pick: number,
    readonly how: 'approve' | 'deny',
    readonly stale: boolean,
  ) {
    super(pick);
  }
  async run(m: ModelState, r: Real) {
    await this.runOn(m, r, this.target(m, ['awaiting_review']));
  }
  async runOn(m: ModelState, r: Real, c: ModelCommand) {
    const version = this.stale ? c.version - 1 : c.version;
    const res = await (this.how === 'approve'
      ? r.broker.approve(c.id, version, 'owner')
      : r.broker.deny(c.id, version, 'owner', 'no thanks'));
    const want = M.decide(m, c, this.how, version);
    expect(res.ok ? 'ok' : res.code, `${this} on ${c.id}`).toBe(want);
    // An approval's launch commits `running` in a later batch than the approval (group commit).
    await agree(m, r, true);
  }
  override toString = () => `${this.how}(${this.pick}${this.stale ? ',stale' : ''})`;
}

class Cancel extends OnCommand {
  async run(m: ModelState, r: Real) {
    const c = this.target(m, ['awaiting_review', 'approved', 'running']);
    const res = await r.broker.cancel(c.id, 'local');
    expect(res.ok).toBe(true);
    M.cancel(m, c);
    await agree(m, r, false);
  }
  override toString = () => `cancel(${this.pick})`;
}

class Reconcile extends OnCommand {
  async run(m: ModelState, r: Real) {
    const c = this.target(m, ['failed', 'unknown']);
    const res = await r.broker.reconcile(c.id, 'delivered', 'owner', 'seen it');
    expect(res.ok ? 'ok' : res.code).toBe(M.reconcile(m, c));
    await agree(m, r, false);
  }
  override toString = () => `reconcile(${this.pick})`;
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: ModelState, r: Real) {
    r.clock.advance(this.ms);
    M.advance(m, this.ms);
    await r.broker.committed(); // the expiries the clock fired
    await agree(m, r, false);
  }
  toString = () => `advance(${this.ms})`;
}

class Exit implements Cmd {
  constructor(
    readonly pick: number,
    readonly how: 'ok' | 'fail' | 'unknown',
  ) {}
  check = (m: Readonly<ModelState>) => m.commands.some((c) => c.state === 'running');
  async run(m: ModelState, r: Real) {
    const running = m.commands.filter((c) => c.state === 'running');
    const c = running[this.pick % running.length]!;
    const key = c.kind === 'job' ? c.tag! : c.id;
    const code = c.kind === 'job' ? { ok: '0', fail: '4', unknown: '4' }[this.how] : this.how;
    writeFileSync(join(r.dir, `go-${key}`), code);
    M.exit(m, c, this.how);
    await agree(m, r, true);
  }
  toString = () => `exit(${this.pick},${this.how})`;
}

class CrashRestart implements Cmd {
  constructor(readonly downMs: number) {}
  check = () => true;
  async run(m: ModelState, r: Real) {
    // A crash: the old broker and its SQLite connection go away without grace; whatever it still
    // had in flight can no longer commit. A new broker starts on the same file, as a restart would.
    const old = r.broker;
    r.dead.push(old.close(0));
    r.store.close();
    // Children of the dead daemon finish on their own (orphans); release them so they exit.
    for (const c of m.commands) if (c.state === 'running') c.orphan = true;
    r.clock.advance(this.downMs); // time passes while no daemon runs
    r.store = new Store(join(r.dir, 'broker.db'));
    sweepRunDir(join(r.dir, 'run'));
    r.broker = makeBroker(r);
    r.clock.advance(0); // the first turn of the new daemon's event loop
    M.restart(m, this.downMs);
    await agree(m, r, true);
    for (const c of m.commands)
      if (c.orphan) writeFileSync(join(r.dir, `go-${c.kind === 'job' ? c.tag : c.id}`), '0');
  }
  toString = () => `crashRestart(${this.downMs})`;
}

const submitJob = fc.constant(new SubmitJob());
const submitCue = fc
  .tuple(fc.integer({ min: 0, max: 1 }), fc.constantFrom<'wave' | 'nod'>('wave', 'nod'))
  .map(([s, a]) => new SubmitCue(s, a));
const cueBurst = fc
  .tuple(
    fc.integer({ min: 0, max: 1 }),
    fc.array(fc.constantFrom<'wave' | 'nod' | 'celebrate'>('wave', 'nod', 'celebrate'), {
      minLength: 2,
      maxLength: 3,
    }),
  )
  .map(([s, a]) => new CueBurst(s, a));
const decide = fc
  .tuple(fc.nat(), fc.constantFrom<'approve' | 'deny'>('approve', 'approve', 'approve', 'deny'), fc.nat(9))
  .map(([p, h, s]) => new Decide(p, h, s === 0));
const exit = fc
  .tuple(fc.nat(), fc.constantFrom<'ok' | 'fail' | 'unknown'>('ok', 'fail', 'unknown'))
  .map(([p, h]) => new Exit(p, h));
// Repeats weight the draw: launches and exits are where the rules live; crashes are rarer but land anywhere.
const commandArb = fc.commands(
  [
    submitJob,
    submitJob,
    submitCue,
    cueBurst,
    decide,
    decide,
    decide,
    fc.nat().map((p) => new Cancel(p)),
    fc.nat().map((p) => new Reconcile(p)),
    fc.integer({ min: 1, max: 200_000 }).map((ms) => new Advance(ms)),
    exit,
    exit,
    exit,
    fc.integer({ min: 0, max: 400_000 }).map((ms) => new CrashRestart(ms % 3 === 0 ? 0 : ms)),
  ],
  { maxCommands: 20, size: 'max' },
);

const RUNS = 30;
let trials = 0;
let steps = 0;
const ops = new Map<string, number>();

afterAll(() => {
  console.log(
    `model-broker: ${trials} random sequences, ${steps} steps, each checked against the model (${[...ops].map(([k, v]) => `${k} ${v}`).join(', ')})`,
  );
});

describe('[c2.rule-1] [c2.rule-2] [c2.rule-3] [c2.rule-4] [c2.rule-6] [c2.rule-8] [c2.crash-safety] the real broker agrees with the lifecycle model after every step', () => {
  it('random submit/approve/deny/cancel/reconcile/expire/exit/crash-restart sequences', async () => {
    await fc.assert(
      fc.asyncProperty(commandArb, async (cmds) => {
        trials++;
        const r = await setup();
        const m = M.initial();
        try {
          await fc.asyncModelRun(() => ({ model: m, real: r }), cmds);
        } finally {
          await teardown(r);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  }, 170_000);

  // Pinned sequences the random draw reaches only rarely, run through the same model and checks.
  const PINNED: Array<[string, Cmd[]]> = [
    [
      'a cue cut off by two crashes in a row still holds its session (rule 6)',
      [
        new CueBurst(0, ['wave']),
        new CrashRestart(0),
        new CrashRestart(5000),
        new CueBurst(0, ['nod']),
        new Advance(20_000),
        new Advance(20_000),
        new Exit(0, 'ok'),
      ],
    ],
    [
      'approved cues queued behind a running one all fail with SessionSecretNotRetained at a restart',
      [new CueBurst(1, ['wave', 'nod', 'celebrate']), new CrashRestart(40_000), new CueBurst(1, ['wave'])],
    ],
  ];
  for (const [title, cmds] of PINNED) {
    it(title, async () => {
      const r = await setup();
      try {
        await fc.asyncModelRun(() => ({ model: M.initial(), real: r }), cmds);
      } finally {
        await teardown(r);
      }
    }, 60_000);
  }
});
