/**
 * Approvals beyond one owner's click, in the broker over a real SQLite file and real child processes (only
 * time is faked): grants (contract 8) and quorum (contract 9).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/helpers/fake-clock.js';
import type { CatalogEntry } from '../../config/index.js';
import { Catalog } from '../../kinds/catalog/catalog.js';
import { CatalogExecutor } from '../../kinds/catalog/executor.js';
import { KINDS } from '../../kinds/index.js';
import { Store } from '../../store/sqlite/index.js';
import type { ConfigGrant, Grant } from '../model/grant-rules.js';
import type { Command } from '../model/lifecycle.js';
import type { SubmitRequest } from '../ports/broker-api.js';
import { Broker } from './broker.js';

const node = process.execPath;
const COMMANDS: Record<string, CatalogEntry> = {
  say: {
    description: 'say',
    argv: [node, '-e', '0', '{text}'],
    params: { text: { type: 'string', max_length: 50 } },
    timeout_s: 60,
  },
  other: { description: 'other', argv: [node, '-e', '0'], params: {}, timeout_s: 60 },
  deploy: {
    description: 'deploy',
    argv: [node, '-e', 'require("fs").appendFileSync(process.argv[1], "x")', '{file}'],
    params: { file: { type: 'string', max_length: 500 } },
    timeout_s: 60,
    approvals: 2,
  },
};
/** approvals per command; a test may change one to mimic a config edited between restarts. */
const approvals: Record<string, number> = {};
const POLICY = (name: string) =>
  name in COMMANDS
    ? { approvals: approvals[name] ?? COMMANDS[name]!.approvals ?? 1 }
    : name === 'quorum'
      ? { approvals: 2 }
      : undefined;

let dir: string;
let store: Store;
let clock: FakeClock;
let brokers: Broker[] = [];

function makeBroker(configGrants: ConfigGrant[] = []): {
  b: Broker;
  events: Command[];
  grants: Grant[];
} {
  const catalog = new Catalog({ commands: COMMANDS });
  const b = new Broker({
    store,
    reviewTimeoutS: 300,
    kinds: KINDS,
    executors: { run_command_wait: new CatalogExecutor(catalog, 65536) },
    commandPolicy: POLICY,
    configGrants,
    clock,
  });
  const events: Command[] = [];
  const grants: Grant[] = [];
  b.subscribe((c) => events.push(c));
  b.subscribeGrants((g) => grants.push(g));
  b.start();
  brokers.push(b);
  return { b, events, grants };
}

function say(text: string, client = 'local'): SubmitRequest {
  const p = new Catalog({ commands: COMMANDS }).prepare('say', { text }, client);
  if (!p.ok) throw new Error(p.message);
  return p.request;
}

async function submit(b: Broker, req: SubmitRequest): Promise<Command> {
  const r = await b.submit(req);
  if (!r.ok) throw new Error(r.message);
  return r.command;
}

async function grantOk(b: Broker, spec: Parameters<Broker['grant']>[0]): Promise<Grant> {
  const r = await b.grant(spec, 'alice');
  if (!r.ok) throw new Error(r.message);
  return r.grant;
}

beforeEach(() => {
  for (const k of Object.keys(approvals)) delete approvals[k];
  dir = mkdtempSync(join(tmpdir(), 'ogf-approvals-'));
  store = new Store(join(dir, 'broker.db'));
  clock = new FakeClock();
});

afterEach(async () => {
  for (const b of brokers) await b.close(0);
  brokers = [];
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('[c8.match] a grant approves at submit', () => {
  it('same args with 2 uses: two approved at version 2 by the grant, the third waits; owners see only v2', async () => {
    const { b, events, grants } = makeBroker();
    const g = await grantOk(b, {
      command: 'say',
      client: 'local',
      args: { text: 'hi' },
      ttl_s: 900,
      uses: 2,
    });
    const first = await submit(b, say('hi'));
    const second = await submit(b, say('hi'));
    const third = await submit(b, say('hi'));
    for (const c of [first, second]) {
      expect(c.version).toBe(2);
      expect(c.phase).toMatchObject({ state: 'approved', decided_by: `grant:${g.id}` });
    }
    expect(third.phase.state).toBe('awaiting_review');
    // Each grant-approved command reached listeners once, at version 2 (never its version 1).
    for (const c of [first, second]) {
      const seen = events.filter((e) => e.id === c.id && e.version <= 2);
      expect(seen.map((e) => e.version)).toEqual([2]);
    }
    expect(grants.map((x) => [x.state, x.uses_left])).toEqual([
      ['live', 2],
      ['live', 1],
      ['spent', 0],
    ]);
    expect(b.liveGrants()).toEqual([]);
    expect(store.getGrant(g.id)).toMatchObject({ state: 'spent', uses_left: 0 });
    // The audit log holds the insert, the approval and the use of each, in one transaction each.
    const audit = store.auditFor(first.id).map((a) => [a.action, a.version, a.actor.name]);
    expect(audit.slice(0, 2)).toEqual([
      ['submit', 1, 'local'],
      ['approve', 2, `grant:${g.id}`],
    ]);
  });

  it('any args for * matches another client and other args, never another command', async () => {
    const { b } = makeBroker();
    const g = await grantOk(b, { command: 'say', client: '*', ttl_s: 900 });
    expect((await submit(b, say('one', 'chatgpt'))).phase).toMatchObject({ decided_by: `grant:${g.id}` });
    expect((await submit(b, say('two', 'claude'))).phase.state).toBe('approved');
    const p = new Catalog({ commands: COMMANDS }).prepare('other', {}, 'local');
    if (!p.ok) throw new Error('prepare');
    expect((await submit(b, p.request)).phase.state).toBe('awaiting_review');
  });

  it('another client or other args are not matched by a narrow grant', async () => {
    const { b } = makeBroker();
    await grantOk(b, { command: 'say', client: 'local', args: { text: 'hi' }, ttl_s: 900 });
    expect((await submit(b, say('hi', 'chatgpt'))).phase.state).toBe('awaiting_review');
    expect((await submit(b, say('hi!'))).phase.state).toBe('awaiting_review');
  });

  it('the oldest live match is used first', async () => {
    const { b } = makeBroker();
    const older = await grantOk(b, { command: 'say', client: '*', ttl_s: 900, uses: 1 });
    const newer = await grantOk(b, { command: 'say', client: 'local', ttl_s: 900 });
    expect((await submit(b, say('a'))).phase).toMatchObject({ decided_by: `grant:${older.id}` });
    expect((await submit(b, say('b'))).phase).toMatchObject({ decided_by: `grant:${newer.id}` });
  });

  it('a new grant never approves commands already waiting', async () => {
    const { b } = makeBroker();
    const waiting = await submit(b, say('hi'));
    await grantOk(b, { command: 'say', client: '*', ttl_s: 900 });
    expect(b.get(waiting.id)!.phase.state).toBe('awaiting_review');
  });

  it('cues are never approved by a grant', async () => {
    const { b } = makeBroker();
    expect(await b.grant({ command: 'ogf.cue', client: '*', ttl_s: 900 }, 'alice')).toMatchObject({
      ok: false,
      code: 'NotGrantable',
    });
  });
});

describe('[c8.grantable] what may be granted', () => {
  it('NotGrantable for ogf.cue, a quorum command and an unknown name', async () => {
    const { b } = makeBroker();
    for (const command of ['ogf.cue', 'quorum', 'nope']) {
      const r = await b.grant({ command, client: '*', ttl_s: 900 }, 'alice');
      expect(r.ok ? 'ok' : r.code).toBe('NotGrantable');
    }
    expect(b.liveGrants()).toEqual([]);
  });

  it('approve with a grant: approved and granted together; the approval takes no use', async () => {
    const { b } = makeBroker();
    const c = await submit(b, say('hi'));
    const r = await b.approve(c.id, c.version, 'alice', { same_args: true, ttl_s: 3600, uses: 1 });
    if (!r.ok) throw new Error(r.message);
    expect(r.command.phase).toMatchObject({ state: 'approved', decided_by: 'alice' });
    expect(r.grant).toMatchObject({
      command: 'say',
      client: 'local',
      args: { text: 'hi' },
      uses_left: 1,
      created_by: 'alice',
      source: 'owner',
    });
    expect(r.grant!.expires_at).toBe(new Date(clock.now() + 3_600_000).toISOString());
    expect((await submit(b, say('hi'))).phase).toMatchObject({ decided_by: `grant:${r.grant!.id}` });
    expect((await submit(b, say('hi'))).phase.state).toBe('awaiting_review');
  });

  it('approve with a grant refused (NotGrantable, VersionConflict, AlreadyDecided) approves nothing and grants nothing', async () => {
    const { b } = makeBroker();
    const cue = await submit(b, { ...say('x'), tool: 'ogf_cue', command: 'ogf.cue' });
    expect(await b.approve(cue.id, cue.version, 'alice', { same_args: false, ttl_s: 900 })).toMatchObject({
      ok: false,
      code: 'NotGrantable',
    });
    expect(b.get(cue.id)!.phase.state).toBe('awaiting_review');
    const c = await submit(b, say('hi'));
    expect(await b.approve(c.id, 7, 'alice', { same_args: false, ttl_s: 900 })).toMatchObject({
      code: 'VersionConflict',
    });
    await b.deny(c.id, c.version, 'bob');
    expect(await b.approve(c.id, c.version, 'alice', { same_args: false, ttl_s: 900 })).toMatchObject({
      code: 'AlreadyDecided',
    });
    expect(b.liveGrants()).toEqual([]);
    expect(store.recentGrants(10)).toEqual([]);
  });
});

describe('[c8.end] revoke, expiry, config grants, restarts', () => {
  it('revoke is immediate and leaves what it approved alone; a second revoke is ok; unknown is NotFound', async () => {
    const { b, grants } = makeBroker();
    const g = await grantOk(b, { command: 'say', client: '*', ttl_s: 900 });
    const approved = await submit(b, say('hi'));
    const r = await b.revoke(g.id, 'bob');
    expect(r).toMatchObject({ ok: true, grant: { state: 'revoked' } });
    expect(grants.at(-1)).toMatchObject({ id: g.id, state: 'revoked' });
    expect(b.get(approved.id)!.phase.state).not.toBe('awaiting_review');
    expect((await submit(b, say('hi'))).phase.state).toBe('awaiting_review');
    expect(await b.revoke(g.id, 'bob')).toMatchObject({ ok: true, grant: { state: 'revoked' } });
    expect(await b.revoke('g_nosuchgrant', 'bob')).toMatchObject({ ok: false, code: 'NotFound' });
  });

  it('expiry on the clock: it stops matching at expires_at and is announced as expired', async () => {
    const { b, grants } = makeBroker();
    const g = await grantOk(b, { command: 'say', client: '*', ttl_s: 60 });
    clock.advance(59_999);
    expect((await submit(b, say('a'))).phase.state).toBe('approved');
    clock.advance(1);
    await b.committed();
    expect(grants.at(-1)).toMatchObject({ id: g.id, state: 'expired' });
    expect(store.getGrant(g.id)).toMatchObject({ state: 'expired' });
    expect((await submit(b, say('b'))).phase.state).toBe('awaiting_review');
  });

  it('config grants: stable id, no expiry or count, NotRevocable; a removed entry ends at the next start', async () => {
    const entry: ConfigGrant = { command: 'say', client: '*', args: { text: 'hi' } };
    const first = makeBroker([entry]);
    const [g] = first.b.liveGrants();
    expect(g).toMatchObject({ source: 'config', created_by: 'config', state: 'live', args: { text: 'hi' } });
    expect(g!.id).toMatch(/^g_cfg_/);
    expect(g!.expires_at).toBeUndefined();
    expect(g!.uses_left).toBeUndefined();
    expect(await first.b.revoke(g!.id, 'alice')).toMatchObject({ ok: false, code: 'NotRevocable' });
    expect((await submit(first.b, say('hi'))).phase.state).toBe('approved');
    await first.b.close(0);
    const again = makeBroker([entry]);
    expect(again.b.liveGrants().map((x) => x.id)).toEqual([g!.id]);
    await again.b.close(0);
    const without = makeBroker([]);
    expect(without.b.liveGrants()).toEqual([]);
    expect(store.getGrant(g!.id)).toMatchObject({ state: 'revoked' });
  });

  it('a restart keeps grants and their counts, and an expired one stays expired', async () => {
    const first = makeBroker();
    const counted = await grantOk(first.b, {
      command: 'say',
      client: '*',
      args: { text: 'a' },
      ttl_s: 900,
      uses: 3,
    });
    const short = await grantOk(first.b, { command: 'say', client: '*', args: { text: 'b' }, ttl_s: 60 });
    await submit(first.b, say('a'));
    await first.b.close(0);
    clock.advance(61_000); // the short one expires while the daemon is down
    const second = makeBroker();
    expect(second.b.liveGrants().map((g) => [g.id, g.uses_left])).toEqual([[counted.id, 2]]);
    expect(store.getGrant(short.id)).toMatchObject({ state: 'expired' });
    await submit(second.b, say('a'));
    await submit(second.b, say('a'));
    expect((await submit(second.b, say('a'))).phase.state).toBe('awaiting_review');
  });
});

describe('[c2.rule-5] quorum: N distinct owners (contract 9)', () => {
  function deploy(b: Broker): Promise<Command> {
    const p = new Catalog({ commands: COMMANDS }).prepare('deploy', { file: join(dir, 'deployed') }, 'local');
    if (!p.ok) throw new Error(p.message);
    return submit(b, p.request);
  }
  function ran(): string {
    try {
      return readFileSync(join(dir, 'deployed'), 'utf8');
    } catch {
      return '';
    }
  }

  it('the second distinct owner approves; a repeat is AlreadyApproved before the version; the command runs once', async () => {
    const { b, events } = makeBroker();
    const c = await deploy(b);
    expect(c).toMatchObject({ approvals_needed: 2, approvals: [], phase: { state: 'awaiting_review' } });
    const first = await b.approve(c.id, c.version, 'alice');
    if (!first.ok) throw new Error(first.message);
    expect(first.command).toMatchObject({ version: 2, phase: { state: 'awaiting_review' } });
    expect(first.command.approvals).toEqual([{ by: 'alice', at: new Date(clock.now()).toISOString() }]);
    expect(await b.approve(c.id, 99, 'alice')).toMatchObject({ ok: false, code: 'AlreadyApproved' });
    expect(await b.approve(c.id, c.version, 'bob')).toMatchObject({ ok: false, code: 'VersionConflict' });
    const second = await b.approve(c.id, 2, 'bob');
    expect(second).toMatchObject({
      ok: true,
      command: { version: 3, phase: { state: 'approved', decided_by: 'bob' } },
    });
    expect(await b.approve(c.id, 3, 'carol')).toMatchObject({ ok: false, code: 'AlreadyDecided' });
    const done = await b.wait(c.id, 30);
    expect(done.phase.state).toBe('succeeded');
    expect(ran()).toBe('x');
    expect(events.filter((e) => e.id === c.id).map((e) => e.version)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a deny by either owner denies, after an approval too', async () => {
    const { b } = makeBroker();
    const c = await deploy(b);
    await b.approve(c.id, 1, 'alice');
    expect(await b.deny(c.id, 2, 'bob')).toMatchObject({
      ok: true,
      command: { phase: { state: 'denied', decided_by: 'bob' } },
    });
    expect(ran()).toBe('');
  });

  it('no grant and no policy approve a quorum command; approve-with-grant is NotGrantable', async () => {
    approvals.deploy = 1;
    const { b } = makeBroker();
    await grantOk(b, { command: 'deploy', client: '*', ttl_s: 900 });
    approvals.deploy = 2; // the config changed: deploy now needs two owners
    const c = await deploy(b);
    expect(c.phase.state).toBe('awaiting_review');
    const p = new Catalog({ commands: COMMANDS }).prepare('deploy', { file: 'y' }, 'local');
    if (!p.ok) throw new Error('prepare');
    expect((await submit(b, { ...p.request, approved_by: 'policy:read_only' })).phase.state).toBe(
      'awaiting_review',
    );
    expect(await b.approve(c.id, 1, 'alice', { same_args: true, ttl_s: 900 })).toMatchObject({
      ok: false,
      code: 'NotGrantable',
    });
    expect(b.get(c.id)!.approvals).toEqual([]);
  });

  it('a restart keeps the first approval; the second owner then approves', async () => {
    const first = makeBroker();
    const c = await deploy(first.b);
    await first.b.approve(c.id, 1, 'alice');
    await first.b.close(0);
    const second = makeBroker();
    expect(second.b.get(c.id)).toMatchObject({ version: 2, approvals: [{ by: 'alice' }] });
    expect(await second.b.approve(c.id, 2, 'alice')).toMatchObject({ code: 'AlreadyApproved' });
    expect(await second.b.approve(c.id, 2, 'bob')).toMatchObject({
      ok: true,
      command: { phase: { state: 'approved' } },
    });
    expect((await second.b.wait(c.id, 30)).phase.state).toBe('succeeded');
  });
});
