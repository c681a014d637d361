/**
 * The broker on the group commit (architecture.md example 3), over a real SQLite file and real child
 * processes (only time is faked): one transaction per turn, counted from the WAL itself; nobody — caller,
 * listener, reader — hears of a change before a second connection can read it; `running` is durable before
 * the spawn; a batch the store refuses is rolled back in memory too and every caller gets its error. The
 * refusal is real SQLite: a trigger, installed from a second connection, aborts every audit insert.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/helpers/fake-clock.js';
import { walCommits } from '../../../test/helpers/wal.js';
import type { CatalogEntry } from '../../config/index.js';
import { Catalog } from '../../kinds/catalog/catalog.js';
import { CatalogExecutor } from '../../kinds/catalog/executor.js';
import { KINDS } from '../../kinds/index.js';
import { Store } from '../../store/sqlite/index.js';
import type { Grant } from '../model/grant-rules.js';
import type { Command } from '../model/lifecycle.js';
import type { SubmitRequest } from '../ports/broker-api.js';
import type { Executor } from '../ports/executor.js';
import { Broker } from './broker.js';

const COMMANDS: Record<string, CatalogEntry> = {
  say: {
    description: 'say',
    argv: [process.execPath, '-e', '0', '{text}'],
    params: { text: { type: 'string', max_length: 50 } },
    timeout_s: 60,
  },
};
const catalog = new Catalog({ commands: COMMANDS });

let dir: string;
let path: string;
let store: Store;
let admin: Database.Database;
let clock: FakeClock;
let brokers: Broker[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-broker-commit-'));
  path = join(dir, 'broker.db');
  store = new Store(path);
  admin = new Database(path);
  clock = new FakeClock();
  brokers = [];
});

afterEach(async () => {
  for (const b of brokers) await b.close(0);
  admin.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function makeBroker(executor: Executor = new CatalogExecutor(catalog, 65536)) {
  const b = new Broker({
    store,
    reviewTimeoutS: 300,
    kinds: KINDS,
    executors: { run_command_wait: executor },
    commandPolicy: (name) => (name in COMMANDS ? { approvals: 1 } : undefined),
    maxPendingPerClient: 60,
    clock,
  });
  const events: Array<Command | Grant> = [];
  b.subscribe((c) => events.push(c));
  b.subscribeGrants((g) => events.push(g));
  b.start();
  brokers.push(b);
  return { b, events };
}

function say(text: string, client = 'local'): SubmitRequest {
  const p = catalog.prepare('say', { text }, client);
  if (!p.ok) throw new Error(p.message);
  return p.request;
}

/** The command as a second connection reads it: only what is durable. */
function durable(id: string): Pick<Command, 'version' | 'phase'> | undefined {
  const row = admin.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string } | undefined;
  return row === undefined ? undefined : (JSON.parse(row.body) as Command);
}

function durableGrant(id: string): Grant | undefined {
  const row = admin.prepare('SELECT body FROM grants WHERE id = ?').get(id) as { body: string } | undefined;
  return row === undefined ? undefined : (JSON.parse(row.body) as Grant);
}

/** From now on the store refuses every write that carries an audit entry (all of the broker's). */
function refuseWrites(): void {
  admin.exec(
    "CREATE TRIGGER refuse_writes BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'database or disk is full (test)'); END;",
  );
}

function allowWrites(): void {
  admin.exec('DROP TRIGGER refuse_writes');
}

describe('[c8.atomic] the broker on the group commit', () => {
  it('50 submits of one turn are one transaction; each caller and each listener hears only of durable versions', async () => {
    const { b, events } = makeBroker();
    const heard: string[] = [];
    b.subscribe((c) => {
      if (durable(c.id)?.version !== c.version) heard.push(`event ${c.id} v${c.version} not durable`);
    });
    const before = walCommits(path);
    const calls = Array.from({ length: 50 }, (_, i) =>
      b.submit(say(`n${i}`)).then((r) => {
        if (!r.ok) throw new Error(r.message);
        if (durable(r.command.id)?.version !== r.command.version) heard.push(`answer ${r.command.id} early`);
        return r.command;
      }),
    );
    // Until the commit, edges read the committed view: nothing of this turn.
    expect(b.snapshot()).toEqual([]);
    expect(events).toEqual([]);
    const made = await Promise.all(calls);
    expect(walCommits(path) - before).toBe(1);
    expect(heard).toEqual([]);
    expect(events.map((c) => (c as Command).id)).toEqual(made.map((c) => c.id));
    expect(b.snapshot().map((c) => c.id)).toEqual(made.map((c) => c.id).reverse());
  });

  it('a grant with 3 uses and 50 identical submits in one turn: exactly 3 approved, one transaction', async () => {
    const { b, events } = makeBroker();
    const g = await b.grant(
      { command: 'say', client: '*', args: { text: 'hi' }, ttl_s: 900, uses: 3 },
      'alice',
    );
    if (!g.ok) throw new Error(g.message);
    const before = walCommits(path);
    events.length = 0;
    const results = await Promise.all(Array.from({ length: 50 }, () => b.submit(say('hi'))));
    expect(walCommits(path) - before).toBe(1);
    const approved = results.filter((r) => r.ok && r.command.phase.state === 'approved');
    expect(approved).toHaveLength(3);
    expect(durableGrant(g.grant.id)).toMatchObject({ state: 'spent', uses_left: 0 });
    // Commit order: each approved command's upsert before its grant's.
    const grantEvents = events.flatMap((e, i) => ('uses_left' in e ? [[i, e.uses_left]] : []));
    expect(grantEvents.map(([, uses]) => uses)).toEqual([2, 1, 0]);
  });

  it('[c2.rule-3] `running` is durable before the executor may spawn', async () => {
    const seen: Array<string | undefined> = [];
    const inner = new CatalogExecutor(catalog, 65536);
    const watching: Executor = {
      execute: (command, io) =>
        inner.execute(command, {
          ...io,
          markRunning: async () => {
            const ok = await io.markRunning();
            seen.push(durable(command.id)?.phase.state);
            return ok;
          },
        }),
    };
    const { b } = makeBroker(watching);
    const sub = await b.submit(say('go'));
    if (!sub.ok) throw new Error(sub.message);
    await b.approve(sub.command.id, 1, 'owner');
    for (let i = 0; i < 400 && b.get(sub.command.id)?.phase.state !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(b.get(sub.command.id)?.phase.state).toBe('succeeded');
    expect(seen).toEqual(['running']);
  });
});

describe('[c2.crash-safety] a batch the store refuses', () => {
  it('is rolled back in memory too: every caller gets the error, nobody hears of it, and nothing it did stays', async () => {
    const { b, events } = makeBroker();
    const g = await b.grant(
      { command: 'say', client: '*', args: { text: 'hi' }, ttl_s: 900, uses: 2 },
      'alice',
    );
    if (!g.ok) throw new Error(g.message);
    const waitingSub = await b.submit(say('waiting'));
    if (!waitingSub.ok) throw new Error(waitingSub.message);
    const waiting = waitingSub.command;
    const snapshot = b.snapshot();
    const live = b.liveGrants();
    events.length = 0;

    refuseWrites();
    const calls = [
      ...Array.from({ length: 5 }, () => b.submit(say('hi'))),
      ...Array.from({ length: 55 }, (_, i) => b.submit(say(`fill${i}`))),
      b.approve(waiting.id, 1, 'owner'),
      b.grant({ command: 'say', client: 'local', ttl_s: 900 }, 'alice'),
      b.revoke(g.grant.id, 'alice'),
      // Answers that queued nothing but read this turn's changes fail with it too.
      b.approve(waiting.id, 1, 'bob'),
    ];
    // Before the commit, readers see the committed view only.
    expect(b.get(waiting.id)).toEqual(waiting);
    expect(b.liveGrants()).toEqual(live);
    const outcomes = await Promise.all(
      calls.map((p) =>
        p.then(
          () => 'answered',
          (e: Error) => e.message,
        ),
      ),
    );
    expect(new Set(outcomes)).toEqual(new Set(['database or disk is full (test)']));
    expect(events).toEqual([]);
    expect(b.snapshot()).toEqual(snapshot);
    expect(b.liveGrants()).toEqual(live);
    expect(b.get(waiting.id)).toEqual(waiting);

    // Space returns: the working view was put back too (the caps' counts, the grant's uses, versions).
    allowWrites();
    const fill = await Promise.all(Array.from({ length: 59 }, (_, i) => b.submit(say(`more${i}`))));
    expect(fill.every((r) => r.ok && r.created)).toBe(true); // 60 per client: waiting + 59
    expect(await b.submit(say('over'))).toMatchObject({ ok: false, code: 'TooManyPending' });
    const again = await Promise.all([1, 2, 3].map(() => b.submit(say('hi', 'other'))));
    expect(again.map((r) => r.ok && r.command.phase.state)).toEqual([
      'approved',
      'approved',
      'awaiting_review',
    ]);
    expect(await b.approve(waiting.id, 1, 'owner')).toMatchObject({ ok: true, command: { version: 2 } });
  });

  it('subscribeQueued hears a new awaiting command before it is durable, and whether its commit held', async () => {
    const { b, events } = makeBroker();
    const heard: Array<{ id: string; durable: boolean; committed: Promise<boolean> }> = [];
    b.subscribeQueued(({ command, committed }) =>
      heard.push({ id: command.id, durable: durable(command.id) !== undefined, committed }),
    );
    const ok = await b.submit(say('early'));
    if (!ok.ok) throw new Error(ok.message);
    expect(heard).toMatchObject([{ id: ok.command.id, durable: false }]);
    expect(await heard[0]!.committed).toBe(true);
    // A commit the store refuses: heard as queued, then told it never committed; nobody else heard of it.
    events.length = 0;
    refuseWrites();
    await expect(b.submit(say('lost'))).rejects.toThrow('disk is full');
    expect(heard).toHaveLength(2);
    expect(await heard[1]!.committed).toBe(false);
    expect(durable(heard[1]!.id)).toBeUndefined();
    expect(events).toEqual([]);
    allowWrites();
  });

  it('an expiry the store refused is retried and recorded once writes work again', async () => {
    const { b } = makeBroker();
    const sub = await b.submit(say('late'));
    if (!sub.ok) throw new Error(sub.message);
    refuseWrites();
    clock.advance(300_000);
    await expect(b.committed()).rejects.toThrow('disk is full');
    expect(b.get(sub.command.id)?.phase.state).toBe('awaiting_review');
    clock.advance(1000);
    await expect(b.committed()).rejects.toThrow('disk is full');
    allowWrites();
    clock.advance(1000);
    await b.committed();
    expect(durable(sub.command.id)?.phase).toMatchObject({ state: 'denied', reason: 'ReviewExpired' });
    expect(b.get(sub.command.id)?.phase).toMatchObject({ state: 'denied', reason: 'ReviewExpired' });
  });
});
