/**
 * Issue 19 finding 6: the decision path pays one fsync, not two. An approval that finds its session lane
 * free starts its launch in its own turn, so `running` joins the approval's batch: one transaction (counted
 * from the WAL itself), approved at version N and running at N+1, announced in that order, and still
 * durable before the spawn (rule 3). A busy lane commits them apart; a batch the store refuses spawns
 * nothing. Real SQLite file, real child processes (a marker file counts spawns); only time is faked.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/helpers/fake-clock.js';
import { walCommits } from '../../../test/helpers/wal.js';
import { Catalog } from '../../kinds/catalog/catalog.js';
import { CatalogExecutor } from '../../kinds/catalog/executor.js';
import { KINDS } from '../../kinds/index.js';
import { Store } from '../../store/sqlite/index.js';
import type { Command } from '../model/lifecycle.js';
import { StaleWrite } from '../model/stale-write.js';
import type { SubmitRequest } from '../ports/broker-api.js';
import type { Executor } from '../ports/executor.js';
import { Broker } from './broker.js';

let dir: string;
let path: string;
let marker: string;
let catalog: Catalog;
let store: Store;
let admin: Database.Database;
let brokers: Broker[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-approve-running-'));
  path = join(dir, 'broker.db');
  marker = join(dir, 'spawned');
  // Each spawn appends its word to the marker file: what ran, and how often.
  const script = `require('fs').appendFileSync(${JSON.stringify(marker)}, process.argv[1] + '\\n')`;
  catalog = new Catalog({
    commands: {
      mark: {
        description: 'mark',
        argv: [process.execPath, '-e', script, '{word}'],
        params: { word: { type: 'string', max_length: 50 } },
        timeout_s: 60,
      },
    },
  });
  store = new Store(path);
  admin = new Database(path);
  brokers = [];
});

afterEach(async () => {
  for (const b of brokers) await b.close(0);
  admin.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const spawned = (): string[] =>
  existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n').filter(Boolean) : [];

/** What one launch saw when `markRunning` answered: its result, the durable row, WAL commits so far. */
interface Seen {
  ok: boolean;
  durable: string | undefined;
  commits: number;
}

/**
 * The real catalog executor, watched at `markRunning`; launches of the words in `hold` wait for
 * `release(word)` before they run, so a test can keep a lane busy.
 */
function watched() {
  const inner = new CatalogExecutor(catalog, 65536);
  const seen = new Map<string, Seen>();
  const gates = new Map<string, () => void>();
  const hold = new Set<string>();
  const executor: Executor = {
    async execute(command, io) {
      const word = String(command.args.word);
      if (hold.has(word)) await new Promise<void>((r) => gates.set(word, r));
      return inner.execute(command, {
        ...io,
        markRunning: async () => {
          const ok = await io.markRunning();
          const row = durable(command.id);
          seen.set(word, {
            ok,
            durable: row && `${row.phase.state} v${row.version}`,
            commits: walCommits(path),
          });
          return ok;
        },
      });
    },
  };
  const release = (word: string) => gates.get(word)?.();
  return { executor, seen, hold, release };
}

function makeBroker(executor: Executor) {
  const b = new Broker({
    store,
    reviewTimeoutS: 300,
    kinds: KINDS,
    executors: { run_command_wait: executor },
    commandPolicy: (name) => (name === 'mark' ? { approvals: 1 } : undefined),
    clock: new FakeClock(),
  });
  const events: string[] = [];
  b.subscribe((c) => events.push(`${String(c.args.word)} ${c.phase.state} v${c.version}`));
  b.start();
  brokers.push(b);
  return { b, events };
}

/** A catalog request; with a `session_key` it takes that session's FIFO lane (rule 6), like a cue. */
function mark(word: string, sessionKey?: string): SubmitRequest {
  const p = catalog.prepare('mark', { word }, 'local');
  if (!p.ok) throw new Error(p.message);
  return sessionKey === undefined ? p.request : { ...p.request, session_key: sessionKey };
}

function durable(id: string): Command | undefined {
  const row = admin.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string } | undefined;
  return row === undefined ? undefined : (JSON.parse(row.body) as Command);
}

function auditVersions(id: string): Array<[string, number | null]> {
  const rows = admin
    .prepare('SELECT action, version FROM audit WHERE command_id = ? ORDER BY rowid')
    .all(id) as Array<{ action: string; version: number }>;
  return rows.map((r) => [r.action, r.version]);
}

async function submitted(b: Broker, req: SubmitRequest): Promise<Command> {
  const r = await b.submit(req);
  if (!r.ok) throw new Error(r.message);
  return r.command;
}

async function settled(b: Broker, id: string): Promise<Command> {
  for (let i = 0; i < 400; i++) {
    const c = b.get(id);
    if (c && ['succeeded', 'failed', 'unknown'].includes(c.phase.state)) return c;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${id} did not end`);
}

describe('[c2.one-commit] [c2.rule-3] the decision path pays one fsync', () => {
  it('a free lane: approved (v2) and running (v3) in one transaction, announced in order, before the spawn', async () => {
    const w = watched();
    const { b, events } = makeBroker(w.executor);
    const c = await submitted(b, mark('free'));
    const before = walCommits(path);
    const answer = await b.approve(c.id, 1, 'owner');
    expect(answer).toMatchObject({ ok: true, command: { version: 2, phase: { state: 'approved' } } });
    // The owner's answer comes after the one commit, which already holds `running`.
    expect(durable(c.id)).toMatchObject({ version: 3, phase: { state: 'running' } });
    expect(auditVersions(c.id)).toEqual([
      ['submit', 1],
      ['approve', 2],
      ['start', 3],
    ]);
    expect((await settled(b, c.id)).phase.state).toBe('succeeded');
    expect(w.seen.get('free')).toEqual({ ok: true, durable: 'running v3', commits: before + 1 });
    expect(events).toEqual([
      'free awaiting_review v1',
      'free approved v2',
      'free running v3',
      'free succeeded v4',
    ]);
    expect(spawned()).toEqual(['free']);
  });

  it('approved at submit by a grant: created, approved and running in one transaction', async () => {
    const w = watched();
    const { b, events } = makeBroker(w.executor);
    const g = await b.grant({ command: 'mark', client: '*', ttl_s: 900 }, 'owner');
    if (!g.ok) throw new Error(g.message);
    const before = walCommits(path);
    const c = await submitted(b, mark('granted'));
    expect(c).toMatchObject({ version: 2, phase: { state: 'approved', decided_by: `grant:${g.grant.id}` } });
    expect(durable(c.id)).toMatchObject({ version: 3, phase: { state: 'running' } });
    expect(auditVersions(c.id)).toEqual([
      ['submit', 1],
      ['approve', 2],
      // Contract 14: the grant's use is in the command's own record, in the same transaction.
      ['grant_used', null],
      ['start', 3],
    ]);
    expect((await settled(b, c.id)).phase.state).toBe('succeeded');
    expect(w.seen.get('granted')).toEqual({ ok: true, durable: 'running v3', commits: before + 1 });
    expect(events).toEqual(['granted approved v2', 'granted running v3', 'granted succeeded v4']);
    expect(spawned()).toEqual(['granted']);
  });

  it('a busy lane: the approval commits alone, `running` later, after the lane frees', async () => {
    const w = watched();
    w.hold.add('first');
    const { b, events } = makeBroker(w.executor);
    const first = await submitted(b, mark('first', 'session-a'));
    const second = await submitted(b, mark('second', 'session-a'));
    expect((await b.approve(first.id, 1, 'owner')).ok).toBe(true);
    // `first` holds the lane (its executor waits at the gate, before `markRunning`).
    const before = walCommits(path);
    expect((await b.approve(second.id, 1, 'owner')).ok).toBe(true);
    expect(walCommits(path)).toBe(before + 1);
    expect(durable(second.id)).toMatchObject({ version: 2, phase: { state: 'approved' } });
    expect(w.seen.has('second')).toBe(false);
    w.release('first');
    expect((await settled(b, first.id)).phase.state).toBe('succeeded');
    expect((await settled(b, second.id)).phase.state).toBe('succeeded');
    // `second` went running in a transaction of its own, after `first` ended (rule 6).
    const s = w.seen.get('second')!;
    expect(s).toMatchObject({ ok: true, durable: 'running v3' });
    expect(s.commits).toBeGreaterThan(before + 1);
    expect(events.filter((e) => e.startsWith('second'))).toEqual([
      'second awaiting_review v1',
      'second approved v2',
      'second running v3',
      'second succeeded v4',
    ]);
    expect(events.indexOf('second running v3')).toBeGreaterThan(events.indexOf('first succeeded v4'));
    expect(spawned()).toEqual(['first', 'second']);
  });

  it('a batch the store refuses: nothing is spawned, nothing announced, the command awaits review again', async () => {
    const w = watched();
    const { b, events } = makeBroker(w.executor);
    const c = await submitted(b, mark('refused'));
    events.length = 0;
    admin.exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'database or disk is full (test)'); END;",
    );
    await expect(b.approve(c.id, 1, 'owner')).rejects.toThrow('disk is full');
    // The launch started in the approval's turn and its `markRunning` was in the refused batch.
    for (let i = 0; i < 200 && !w.seen.has('refused'); i++) await new Promise((r) => setTimeout(r, 5));
    expect(w.seen.get('refused')).toMatchObject({ ok: false, durable: 'awaiting_review v1' });
    await b.committed();
    expect(b.get(c.id)).toMatchObject({ version: 1, phase: { state: 'awaiting_review' } });
    expect(events).toEqual([]);
    expect(spawned()).toEqual([]);
    expect(auditVersions(c.id)).toEqual([['submit', 1]]);

    // Space returns: the owner approves again, and it runs once.
    admin.exec('DROP TRIGGER refuse');
    expect(await b.approve(c.id, 1, 'owner')).toMatchObject({ ok: true, command: { version: 2 } });
    expect((await settled(b, c.id)).phase.state).toBe('succeeded');
    expect(spawned()).toEqual(['refused']);
  });
});

describe('[c16.nodes] `running` in a batch another node made stale', () => {
  it('is tried again on the command as it now is: the launch runs once, never LaunchFailed', async () => {
    const w = watched();
    w.hold.add('raced');
    const { b } = makeBroker(w.executor);
    const c = await submitted(b, mark('raced'));
    expect((await b.approve(c.id, 1, 'owner')).ok).toBe(true);
    // The real store, refusing the first `running` write as another node's change would (contract 16):
    // the batch is refused whole and nothing of it is stored.
    const update = store.commands.update.bind(store.commands);
    let refused = 0;
    store.commands.update = (next, audit) => {
      if (next.phase.state === 'running' && refused++ === 0)
        throw new StaleWrite('grants', 'g_other', 'store: grant g_other no longer has the uses (test)');
      return update(next, audit);
    };
    w.release('raced');
    expect((await settled(b, c.id)).phase.state).toBe('succeeded');
    expect(refused).toBeGreaterThanOrEqual(2);
    expect(spawned()).toEqual(['raced']);
    expect(auditVersions(c.id)).toEqual([
      ['submit', 1],
      ['approve', 2],
      ['start', 3],
      ['finish', 4],
    ]);
  });
});
