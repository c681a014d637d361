/**
 * Group commit (architecture.md example 3) over a real SQLite file: transactions are counted from the WAL
 * file itself (test/helpers/wal.ts), and "committed" is checked from a second connection, which sees only
 * what is durable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { walCommits } from '../../../test/helpers/wal.js';
import { Store } from '../../store/sqlite/index.js';
import type { Command } from '../model/lifecycle.js';
import { type Change, GroupCommit, type GroupCommitDeps } from './group-commit.js';

let dir: string;
let path: string;
let store: Store;
let reader: Database.Database;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-commit-'));
  path = join(dir, 'broker.db');
  store = new Store(path);
  reader = new Database(path, { readonly: true });
});

afterEach(() => {
  reader.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function command(id: string): Command {
  return {
    id,
    version: 1,
    tool: 'run_command_wait',
    command: 'noop',
    args: {},
    display: ['/bin/true'],
    client: 'local',
    created_at: '2026-11-30T10:00:00.000Z',
    review_expires_at: '2026-11-30T10:05:00.000Z',
    phase: { state: 'awaiting_review' },
  };
}

function insert(id: string): Change['write'] {
  return () =>
    store.insert(command(id), {
      at: '2026-11-30T10:00:00.000Z',
      actor: { kind: 'client', name: 'local' },
      action: 'submit',
      command_id: id,
      version: 1,
    });
}

/** Rows in `commands` as a second connection sees them: only what committed. */
function durableRows(): number {
  return (reader.prepare('SELECT COUNT(*) AS n FROM commands').get() as { n: number }).n;
}

function makeCommit(extra: Partial<GroupCommitDeps> = {}): { commit: GroupCommit; rollbacks: unknown[] } {
  const rollbacks: unknown[] = [];
  const commit = new GroupCommit({
    transaction: (fn) => store.transaction(fn),
    rollback: (e) => rollbacks.push(e),
    ...extra,
  });
  return { commit, rollbacks };
}

describe('GroupCommit', () => {
  it('50 changes queued in one turn are one transaction; three turns are three', async () => {
    const { commit } = makeCommit();
    const before = walCommits(path);
    await Promise.all(Array.from({ length: 50 }, (_, i) => commit.add({ write: insert(`c_one${i}`) })));
    expect(walCommits(path) - before).toBe(1);
    expect(commit.commits).toBe(1);
    expect(durableRows()).toBe(50);
    for (let turn = 0; turn < 3; turn++) {
      await Promise.all([
        commit.add({ write: insert(`c_t${turn}a`) }),
        commit.add({ write: insert(`c_t${turn}b`) }),
      ]);
    }
    expect(walCommits(path) - before).toBe(4);
    expect(commit.commits).toBe(4);
  });

  it('[c20.bound] a held batch waits for the work, and a change queued as it ends joins the same transaction', async () => {
    const { commit } = makeCommit();
    const before = walCommits(path);
    let finish: () => void = () => {};
    const work = new Promise<void>((r) => {
      finish = r;
    });
    const first = commit.add({ write: insert('c_held_a') });
    commit.hold(work, 10_000);
    // The work takes several turns (an upstream read); the batch does not commit meanwhile.
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(durableRows()).toBe(0);
    const second = work.then(() => commit.add({ write: insert('c_held_b') }));
    finish();
    await Promise.all([first, second]);
    expect(durableRows()).toBe(2);
    expect(walCommits(path) - before).toBe(1);
  });

  it('[c20.bound] a hold past its bound lets the batch commit without it', async () => {
    const { commit } = makeCommit();
    const never = new Promise<void>(() => {});
    const first = commit.add({ write: insert('c_bound_a') });
    commit.hold(never, 20);
    await first;
    expect(durableRows()).toBe(1);
    // No batch pending: a hold now changes nothing, and the next change commits as usual.
    commit.hold(never, 10_000);
    await commit.add({ write: insert('c_bound_b') });
    expect(durableRows()).toBe(2);
  });

  it('nothing is released before the commit: no caller, no after, until a second connection sees the rows', async () => {
    const seen: string[] = [];
    const { commit } = makeCommit();
    const calls = Array.from({ length: 5 }, (_, i) =>
      commit
        .add({
          write: insert(`c_rel${i}`),
          after: () => seen.push(`after ${i}: ${durableRows()} durable`),
        })
        .then(() => seen.push(`caller ${i}: ${durableRows()} durable`)),
    );
    // The rest of this turn, microtasks included: still nothing written, nobody told.
    await Promise.resolve();
    await Promise.resolve();
    expect(commit.pending).toBe(5);
    expect(durableRows()).toBe(0);
    expect(seen).toEqual([]);
    await Promise.all(calls);
    // The afters in queue order, all of them before any caller, and each after the commit.
    expect(seen).toEqual([
      ...Array.from({ length: 5 }, (_, i) => `after ${i}: 5 durable`),
      ...Array.from({ length: 5 }, (_, i) => `caller ${i}: 5 durable`),
    ]);
  });

  it('a failing commit stores nothing, rolls back once, rejects every caller of the batch with its error and runs no after', async () => {
    const { commit, rollbacks } = makeCommit();
    const afters: number[] = [];
    const before = walCommits(path);
    // The second change repeats the first's id: the UNIQUE constraint aborts the whole transaction.
    const calls = [insert('c_dup'), insert('c_dup'), insert('c_other')].map((write, i) =>
      commit.add({ write, after: () => afters.push(i) }).then(
        () => 'resolved',
        (e: Error) => e.message,
      ),
    );
    const outcomes = await Promise.all(calls);
    expect(outcomes).toHaveLength(3);
    for (const o of outcomes) expect(o).toMatch(/UNIQUE constraint failed: commands\.id/);
    expect(rollbacks).toHaveLength(1);
    expect((rollbacks[0] as Error).message).toBe(outcomes[0]);
    expect(afters).toEqual([]);
    expect(durableRows()).toBe(0);
    expect(walCommits(path)).toBe(before);
    // The next batch is its own and commits.
    await commit.add({ write: insert('c_dup') });
    expect(durableRows()).toBe(1);
  });

  it('barrier: at once when nothing is pending; otherwise with the pending batch, its error included', async () => {
    const { commit } = makeCommit();
    let done = false;
    await commit.barrier().then(() => (done = true));
    expect(done).toBe(true);
    const order: string[] = [];
    const queued = commit.add({ write: insert('c_bar'), after: () => order.push('after') });
    const barrier = commit.barrier().then(() => order.push(`barrier: ${durableRows()} durable`));
    await Promise.all([queued, barrier]);
    expect(order).toEqual(['after', 'barrier: 1 durable']);
    const failing = commit.add({ write: insert('c_bar') }).catch(() => 'rejected');
    const failed = commit.barrier().then(
      () => 'resolved',
      (e: Error) => e.message,
    );
    expect(await failing).toBe('rejected');
    expect(await failed).toMatch(/UNIQUE/);
  });

  it('a change queued by an after goes into the next batch (its own transaction), after this one', async () => {
    const { commit } = makeCommit();
    const order: string[] = [];
    const before = walCommits(path);
    let later: Promise<void> | undefined;
    await commit.add({
      write: insert('c_first'),
      after: () => {
        order.push('first after');
        later = commit.add({ write: insert('c_second'), after: () => order.push('second after') });
      },
    });
    expect(order).toEqual(['first after']);
    expect(commit.pending).toBe(1);
    await later;
    expect(order).toEqual(['first after', 'second after']);
    expect(walCommits(path) - before).toBe(2);
  });

  it('flush commits now; the scheduled run then finds nothing to do', async () => {
    const runs: Array<() => void> = [];
    const { commit } = makeCommit({ schedule: (run) => runs.push(run) });
    const call = commit.add({ write: insert('c_flush') });
    expect(durableRows()).toBe(0);
    commit.flush();
    expect(durableRows()).toBe(1);
    await call;
    for (const run of runs) run();
    expect(commit.commits).toBe(1);
  });

  it('an after that throws is reported; the rest of the batch still runs and its callers are released', async () => {
    const errors: unknown[] = [];
    const { commit } = makeCommit({ onError: (e) => errors.push(e) });
    const ran: number[] = [];
    await Promise.all([
      commit.add({
        write: insert('c_a'),
        after: () => {
          throw new Error('listener bug');
        },
      }),
      commit.add({ write: insert('c_b'), after: () => ran.push(2) }),
    ]);
    expect(ran).toEqual([2]);
    expect((errors[0] as Error).message).toBe('listener bug');
  });
});
