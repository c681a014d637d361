/**
 * The broker over a real SQLite file and real child processes (the catalog executor). Only time is
 * faked, for review expiry and wait deadlines.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/helpers/fake-clock.js';
import type { CatalogEntry } from '../../config/index.js';
import { Catalog } from '../../kinds/catalog/catalog.js';
import { CatalogExecutor } from '../../kinds/catalog/executor.js';
import { KINDS } from '../../kinds/index.js';
import { Store } from '../../store/sqlite/index.js';
import type { Command } from '../model/lifecycle.js';
import type { SubmitRequest } from '../ports/broker-api.js';
import { Broker } from './broker.js';

const node = process.execPath;
let dir: string;
let store: Store;
let clock: FakeClock;
let brokers: Broker[] = [];

function entry(script: string, extra: Partial<CatalogEntry> = {}): CatalogEntry {
  return { description: 'test', argv: [node, '-e', script], params: {}, timeout_s: 60, ...extra };
}

function makeBroker(commands: Record<string, CatalogEntry>, outputLimit = 65536): Broker {
  const catalog = new Catalog({ commands });
  const b = new Broker({
    store,
    reviewTimeoutS: 300,
    kinds: KINDS,
    executors: { run_command_wait: new CatalogExecutor(catalog, outputLimit) },
    clock,
  });
  b.start();
  brokers.push(b);
  return b;
}

function request(command: string, extra: Partial<SubmitRequest> = {}): SubmitRequest {
  return {
    tool: 'run_command_wait',
    command,
    args: {},
    display: [node, '-e', 'x'],
    client: 'local',
    ...extra,
  };
}

/** The request the MCP edge would make for a catalog command: argv from the catalog. */
function prepared(commands: Record<string, CatalogEntry>, name: string): SubmitRequest {
  const p = new Catalog({ commands }).prepare(name, {}, 'local');
  if (!p.ok) throw new Error(p.message);
  return p.request;
}

async function submit(
  b: Broker,
  commands: Record<string, CatalogEntry>,
  name: string,
  extra: Partial<SubmitRequest> = {},
) {
  const r = await b.submit({ ...prepared(commands, name), ...extra });
  if (!r.ok) throw new Error(r.message);
  return r.command;
}

async function final(b: Broker, id: string): Promise<Command> {
  for (let i = 0; i < 400; i++) {
    const c = b.get(id)!;
    if (['succeeded', 'denied', 'failed', 'unknown'].includes(c.phase.state)) return c;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`command ${id} did not finish`);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-broker-'));
  store = new Store(join(dir, 'broker.db'));
  clock = new FakeClock();
  brokers = [];
});

afterEach(async () => {
  for (const b of brokers) await b.close(100);
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('decisions', () => {
  it('approve checks AlreadyDecided first, then VersionConflict; unknown ids are NotFound', async () => {
    const cmds = { ok: entry('') };
    const b = makeBroker(cmds);
    const c = await submit(b, cmds, 'ok');
    expect(c).toMatchObject({ version: 1, phase: { state: 'awaiting_review' } });
    expect(await b.approve(c.id, 7, 'owner')).toMatchObject({ ok: false, code: 'VersionConflict' });
    expect(await b.deny(c.id, 1, 'owner', 'no')).toMatchObject({ ok: true });
    expect(await b.approve(c.id, 7, 'owner')).toMatchObject({ ok: false, code: 'AlreadyDecided' });
    expect(await b.approve(c.id, 2, 'owner')).toMatchObject({ ok: false, code: 'AlreadyDecided' });
    expect(await b.approve('c_nope12345', 1, 'owner')).toMatchObject({ ok: false, code: 'NotFound' });
    expect(b.get(c.id)!.phase).toMatchObject({ state: 'denied', reason: 'OwnerDenied', owner_note: 'no' });
  });

  it('[c2.rule-5] two approvals of one command: one launch, the other AlreadyDecided (rule 5)', async () => {
    const marker = join(dir, 'ran');
    const cmds = { once: entry(`require('fs').appendFileSync(${JSON.stringify(marker)}, 'x')`) };
    const b = makeBroker(cmds);
    const c = await submit(b, cmds, 'once');
    // Both in one turn: the second sees the first's approval although neither has committed yet.
    const results = await Promise.all([b.approve(c.id, 1, 'tab1'), b.approve(c.id, 1, 'tab2')]);
    expect(results.map((r) => (r.ok ? 'ok' : r.code))).toEqual(['ok', 'AlreadyDecided']);
    expect((await final(b, c.id)).phase.state).toBe('succeeded');
    expect(readFileSync(marker, 'utf8')).toBe('x');
  });

  it('[c2.rule-1] a denied, expired or cancelled command never launches (rule 1)', async () => {
    const marker = join(dir, 'ran');
    const cmds = { touch: entry(`require('fs').appendFileSync(${JSON.stringify(marker)}, 'x')`) };
    const b = makeBroker(cmds);
    const denied = await submit(b, cmds, 'touch');
    const expired = await submit(b, cmds, 'touch');
    const cancelled = await submit(b, cmds, 'touch');
    await b.deny(denied.id, 1, 'owner');
    await b.cancel(cancelled.id, 'local');
    clock.advance(300_000);
    await b.committed();
    expect(b.get(expired.id)!.phase).toMatchObject({ state: 'denied', reason: 'ReviewExpired' });
    expect(b.get(cancelled.id)!.phase).toMatchObject({ state: 'denied', reason: 'CancelledByCaller' });
    for (const c of [denied, expired, cancelled]) {
      expect(await b.approve(c.id, 2, 'owner')).toMatchObject({ ok: false, code: 'AlreadyDecided' });
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);
    expect(b.running).toBe(0);
  });

  it('cancel after approval changes nothing and returns the current command', async () => {
    const cmds = { ok: entry('') };
    const b = makeBroker(cmds);
    const c = await submit(b, cmds, 'ok');
    await b.approve(c.id, 1, 'owner');
    const r = await b.cancel(c.id, 'local');
    expect(r.ok && r.command.phase.state).not.toBe('denied');
    expect((await final(b, c.id)).phase.state).toBe('succeeded');
  });

  it('[c2.rule-2] reconcile only failed/unknown; the state stays and the record is added (rule 2)', async () => {
    const cmds = { fail: entry('process.exit(3)'), ok: entry('') };
    const b = makeBroker(cmds);
    const f = await submit(b, cmds, 'fail');
    const s = await submit(b, cmds, 'ok');
    await b.approve(f.id, 1, 'owner');
    await b.approve(s.id, 1, 'owner');
    await final(b, f.id);
    await final(b, s.id);
    expect(await b.reconcile(s.id, 'delivered', 'owner')).toMatchObject({
      ok: false,
      code: 'NotReconcilable',
    });
    expect(await b.reconcile('c_missing1', 'delivered', 'owner')).toMatchObject({
      ok: false,
      code: 'NotFound',
    });
    const r = await b.reconcile(f.id, 'not_delivered', 'owner', 'checked the log');
    expect(r.ok && r.command.phase).toMatchObject({
      state: 'failed',
      reason: 'NonZeroExit',
      reconciliations: [{ outcome: 'not_delivered', note: 'checked the log' }],
    });
  });
});

describe('launching real processes (contract 4)', () => {
  it('[c2.rule-8] exit 0 → succeeded with output; events in commit order with rising versions (rule 8)', async () => {
    const cmds = { hello: entry("process.stdout.write('hi'); process.stderr.write('err')") };
    const b = makeBroker(cmds);
    const seen: Array<[string, number]> = [];
    b.subscribe((c) => seen.push([c.phase.state, c.version]));
    const c = await submit(b, cmds, 'hello');
    await b.approve(c.id, 1, 'owner');
    const done = await final(b, c.id);
    expect(done.phase).toMatchObject({
      state: 'succeeded',
      outcome: { exit_code: 0, stdout: 'hi', stderr: 'err', output_truncated: false },
    });
    expect(seen).toEqual([
      ['awaiting_review', 1],
      ['approved', 2],
      ['running', 3],
      ['succeeded', 4],
    ]);
    expect(store.auditFor(c.id).map((a) => a.action)).toEqual(['submit', 'approve', 'start', 'finish']);
  });

  it('exit 3 → failed/NonZeroExit; a missing program → failed/LaunchFailed', async () => {
    const cmds = {
      three: entry('process.exit(3)'),
      missing: { description: 'x', argv: ['/nonexistent/program-ogf'], params: {}, timeout_s: 5 },
    };
    const b = makeBroker(cmds);
    const three = await submit(b, cmds, 'three');
    const missing = await submit(b, cmds, 'missing');
    await b.approve(three.id, 1, 'owner');
    await b.approve(missing.id, 1, 'owner');
    expect((await final(b, three.id)).phase).toMatchObject({
      state: 'failed',
      reason: 'NonZeroExit',
      outcome: { exit_code: 3 },
    });
    expect((await final(b, missing.id)).phase).toMatchObject({ state: 'failed', reason: 'LaunchFailed' });
  });

  it('past its deadline: SIGTERM, then SIGKILL 5 s later → unknown/KilledAtDeadline', async () => {
    const cmds = {
      stubborn: entry("process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)", { timeout_s: 1 }),
    };
    const b = makeBroker(cmds);
    const c = await submit(b, cmds, 'stubborn');
    await b.approve(c.id, 1, 'owner');
    const done = await final(b, c.id);
    expect(done.phase).toMatchObject({
      state: 'unknown',
      reason: 'KilledAtDeadline',
      outcome: { signal: 'SIGKILL' },
    });
  }, 20_000);

  it('keeps output up to output_limit_bytes and says it was cut', async () => {
    const cmds = {
      loud: entry("process.stdout.write('a'.repeat(5000)); process.stderr.write('b'.repeat(10))"),
    };
    const b = makeBroker(cmds, 1024);
    const c = await submit(b, cmds, 'loud');
    await b.approve(c.id, 1, 'owner');
    const done = await final(b, c.id);
    expect(done.phase.state).toBe('succeeded');
    if (done.phase.state !== 'succeeded') return;
    expect(done.phase.outcome.stdout).toHaveLength(1024);
    expect(done.phase.outcome.stderr).toBe('bbbbbbbbbb');
    expect(done.phase.outcome.output_truncated).toBe(true);
  });

  it('[c4.child-env] runs with PATH/HOME/LANG plus the entry env only', async () => {
    process.env.OGF_SHOULD_NOT_LEAK = 'leak';
    const cmds = {
      env: entry('process.stdout.write(Object.keys(process.env).sort().join(","))', { env: { EXTRA: '1' } }),
    };
    const b = makeBroker(cmds);
    const c = await submit(b, cmds, 'env');
    await b.approve(c.id, 1, 'owner');
    const done = await final(b, c.id);
    delete process.env.OGF_SHOULD_NOT_LEAK;
    expect(done.phase.state === 'succeeded' && done.phase.outcome.stdout).toBe('EXTRA,HOME,LANG,PATH');
  });

  it('[c2.rule-6] per-session FIFO: launches of one session never overlap and follow approval order (rule 6)', async () => {
    const log = join(dir, 'log');
    const script = (tag: string) =>
      `const fs=require('fs');fs.appendFileSync(${JSON.stringify(log)},'start ${tag}\\n');setTimeout(()=>fs.appendFileSync(${JSON.stringify(log)},'end ${tag}\\n'),150)`;
    const cmds = { a: entry(script('a')), b: entry(script('b')), c: entry(script('c')) };
    const b = makeBroker(cmds);
    const ids: string[] = [];
    for (const n of ['a', 'b', 'c']) ids.push((await submit(b, cmds, n, { session_key: 'k1' })).id);
    // Approve in the order c, a, b.
    for (const i of [2, 0, 1]) await b.approve(ids[i]!, 1, 'owner');
    for (const id of ids) await final(b, id);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([
      'start c',
      'end c',
      'start a',
      'end a',
      'start b',
      'end b',
    ]);
  });
});

describe('waiting and idempotency', () => {
  it('[c2.rule-7] wait resolves at the first final state, or at its deadline with the PENDING command (rule 7)', async () => {
    const cmds = { ok: entry('') };
    const b = makeBroker(cmds);
    const c = await submit(b, cmds, 'ok');
    const early = b.wait(c.id, 10);
    clock.advance(10_000);
    expect((await early).phase.state).toBe('awaiting_review');
    const late = b.wait(c.id, 60);
    await b.approve(c.id, 1, 'owner');
    expect((await late).phase.state).toBe('succeeded');
    expect((await b.wait(c.id, 0)).phase.state).toBe('succeeded');
  });

  it('request_id: the same request returns the existing command; different arguments are refused', async () => {
    const cmds = { a: entry(''), b: entry('') };
    const b = makeBroker(cmds);
    const first = await submit(b, cmds, 'a', { request_id: 'r1' });
    expect(await b.submit({ ...prepared(cmds, 'a'), request_id: 'r1' })).toMatchObject({
      ok: true,
      created: false,
      command: { id: first.id },
    });
    expect(await b.submit({ ...request('b'), request_id: 'r1' })).toMatchObject({
      ok: false,
      code: 'RequestIdReused',
    });
    // Another client may use the same request_id.
    expect(await b.submit({ ...request('b'), request_id: 'r1', client: 'other' })).toMatchObject({
      ok: true,
      created: true,
    });
  });

  it('an identical pending cue returns its twin instead of queueing another', async () => {
    const b = makeBroker({});
    const cue: SubmitRequest = {
      tool: 'ogf_cue',
      command: 'ogf.cue',
      args: { action: 'wave', emotion: 'happy', intensity: 0.5, gaze: 'user', ttl_ms: 3000 },
      display: ['ogf-bridge-client'],
      session_key: 'k',
      client: 'local',
      secret: 'not-stored',
    };
    const a = await b.submit(cue);
    const twin = await b.submit(cue);
    const other = await b.submit({ ...cue, args: { ...cue.args, intensity: 0.6 } });
    expect(a.ok && twin.ok && twin.command.id === a.command.id && !twin.created).toBe(true);
    expect(other.ok && other.created).toBe(true);
  });
});

describe('[c2.rule-3] [c2.rule-4] restart recovery (rules 3 and 4)', () => {
  it('running → unknown/DaemonRestarted; cues lose their secret; approved catalog commands launch; others keep their deadline', async () => {
    const marker = join(dir, 'ran');
    const cmds = { touch: entry(`require('fs').appendFileSync(${JSON.stringify(marker)}, 'x')`) };
    // A first broker without executors leaves an approved command that never launched.
    const first = new Broker({ store, reviewTimeoutS: 300, kinds: KINDS, executors: {}, clock });
    first.start();
    const approved = await first.submit(prepared(cmds, 'touch'));
    const waiting = await first.submit(request('touch'));
    const cue = await first.submit({ ...request('ogf.cue'), tool: 'ogf_cue', session_key: 'k', secret: 's' });
    const running = await first.submit(request('touch'));
    if (!approved.ok || !waiting.ok || !cue.ok || !running.ok) throw new Error('submit');
    // Simulate the durable states a killed daemon leaves behind.
    await first.close(0);
    const a = store.get(approved.command.id)!;
    store.update(
      { ...a, version: 2, phase: { state: 'approved', decided_at: a.created_at, decided_by: 'owner' } },
      { at: a.created_at, actor: { kind: 'owner', name: 'o' }, action: 'approve' },
    );
    const r = store.get(running.command.id)!;
    store.update(
      {
        ...r,
        version: 2,
        phase: { state: 'running', decided_at: r.created_at, decided_by: 'o', started_at: r.created_at },
      },
      { at: r.created_at, actor: { kind: 'daemon', name: 'd' }, action: 'start' },
    );

    clock.advance(1000);
    const b = makeBroker(cmds);
    expect(b.get(running.command.id)!.phase).toMatchObject({ state: 'unknown', reason: 'DaemonRestarted' });
    expect(b.get(cue.command.id)!.phase).toMatchObject({
      state: 'denied',
      reason: 'SessionSecretNotRetained',
    });
    expect(b.get(waiting.command.id)!.review_expires_at).toBe(waiting.command.review_expires_at);
    expect((await final(b, approved.command.id)).phase.state).toBe('succeeded');
    expect(readFileSync(marker, 'utf8')).toBe('x'); // the approved one ran once; the running one never again
    clock.advance(299_000);
    await b.committed();
    expect(b.get(waiting.command.id)!.phase).toMatchObject({ state: 'denied', reason: 'ReviewExpired' });
  });
});

describe('[c1.3.pending-caps] PENDING caps (contract 1.3, 3.2)', () => {
  function capped(perClient: number, all: number): { b: Broker; events: Command[] } {
    const catalog = new Catalog({ commands: {} });
    const b = new Broker({
      store,
      reviewTimeoutS: 300,
      kinds: KINDS,
      executors: { run_command_wait: new CatalogExecutor(catalog, 65536) },
      maxPendingPerClient: perClient,
      maxPending: all,
      clock,
    });
    b.start();
    brokers.push(b);
    const events: Command[] = [];
    b.subscribe((c) => events.push(c));
    return { b, events };
  }
  const ok = (r: Awaited<ReturnType<Broker['submit']>>) => {
    if (!r.ok) throw new Error(r.message);
    return r.command;
  };

  it('refuses past either cap with TooManyPending naming it; nothing stored, nothing published', async () => {
    const { b, events } = capped(2, 3);
    const first = ok(await b.submit(request('x', { request_id: 'r1' })));
    ok(await b.submit(request('x')));
    const over = await b.submit(request('x'));
    expect(over).toMatchObject({ ok: false, code: 'TooManyPending' });
    expect(!over.ok && over.message).toBe(
      'max_pending_per_client is 2 and this client already has 2 PENDING commands, so nothing was queued; wait for your pending commands to be decided (await_command_result) before queueing more',
    );
    // The request_id rule comes first: a repeat is the existing command, not a new one.
    expect(await b.submit(request('x', { request_id: 'r1' }))).toMatchObject({
      ok: true,
      created: false,
      command: { id: first.id },
    });
    ok(await b.submit(request('x', { client: 'other' })));
    const full = await b.submit(request('x', { client: 'other' }));
    expect(!full.ok && full.message).toBe(
      'max_pending is 3 and all clients together already have 3 PENDING commands, so nothing was queued; wait for pending commands (yours: 1) to be decided (await_command_result) before queueing more',
    );
    expect(store.counts()).toEqual({ awaiting_review: 3 });
    expect(events).toHaveLength(3);
  });

  it('counts PENDING only (approved included): a deny, a cancel, an end or an expiry frees a place', async () => {
    const { b } = capped(2, 100);
    const a = ok(await b.submit(request('x')));
    const c = ok(await b.submit(request('x')));
    expect(await b.deny(a.id, 1, 'owner')).toMatchObject({ ok: true });
    const d = ok(await b.submit(request('x')));
    expect(await b.submit(request('x'))).toMatchObject({ ok: false, code: 'TooManyPending' });
    expect(await b.cancel(c.id, 'local')).toMatchObject({ ok: true });
    ok(await b.submit(request('x')));
    expect(await b.submit(request('x'))).toMatchObject({ ok: false, code: 'TooManyPending' });
    // Approved is still PENDING (it launches, and fails for want of a catalog entry, only after the
    // approval committed: a submit of the same turn meets the cap).
    const approving = b.approve(d.id, 1, 'owner');
    const over = b.submit(request('x'));
    expect(await approving).toMatchObject({ ok: true });
    expect(await over).toMatchObject({ ok: false, code: 'TooManyPending' });
    expect((await final(b, d.id)).phase.state).toBe('failed');
    ok(await b.submit(request('x')));
    clock.advance(300_000);
    ok(await b.submit(request('x')));
    ok(await b.submit(request('x')));
    expect(await b.submit(request('x'))).toMatchObject({ ok: false, code: 'TooManyPending' });
  });

  it('an identical pending cue at the cap is its twin, not a refusal', async () => {
    const { b } = capped(1, 10);
    const cue: SubmitRequest = {
      tool: 'ogf_cue',
      command: 'ogf.cue',
      args: { action: 'wave', emotion: 'happy', intensity: 0.5, gaze: 'user', ttl_ms: 3000 },
      display: ['ogf-bridge-client'],
      session_key: 'k',
      client: 'local',
      secret: 's',
    };
    const a = ok(await b.submit(cue));
    expect(await b.submit(cue)).toMatchObject({ ok: true, created: false, command: { id: a.id } });
    expect(await b.submit({ ...cue, args: { ...cue.args, intensity: 0.6 } })).toMatchObject({
      ok: false,
      code: 'TooManyPending',
    });
  });

  it('after a restart the counts come from the store', async () => {
    const first = capped(2, 3).b;
    ok(await first.submit(request('x')));
    ok(await first.submit(request('x')));
    ok(await first.submit(request('x', { client: 'other' })));
    await first.close(0);
    const { b } = capped(2, 3);
    expect(await b.submit(request('x'))).toMatchObject({ ok: false, code: 'TooManyPending' });
    expect(await b.submit(request('x', { client: 'third' }))).toMatchObject({
      ok: false,
      code: 'TooManyPending',
    });
  });
});
