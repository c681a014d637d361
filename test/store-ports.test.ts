/**
 * One port suite, two implementations (contract 16, issue 27 item 1): every method of core/ports/store.ts's
 * StorePorts, the reads the broker makes synchronously (committedReads) and the token checks, run against
 * the embedded SQLite (a real file) and a real PostgreSQL 15 (test/helpers/postgres.ts). The races are run
 * for real between two store instances on one database, as two daemons would: two updates at one version
 * (one is refused), a grant's uses taken from both (exactly its uses), a transaction that throws (nothing
 * stays), and the change feed hearing the other writer's commit.
 */
import { generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgClient from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyChain } from '../daemon/audit/index.js';
import type {
  AuditEntry,
  AuditSigner,
  Checkpoint,
  Command,
  Grant,
  StoreChange,
  StorePorts,
} from '../daemon/core/index.js';
import { checkpointPayload, sealEntry } from '../daemon/core/index.js';
import { PostgresStore, SCHEMA_VERSION, searchQuery } from '../daemon/store/postgres/index.js';
import { MIGRATIONS as PG_MIGRATIONS } from '../daemon/store/postgres/schema.js';
import { Store } from '../daemon/store/sqlite/index.js';
import { waitFor } from './helpers/daemon.js';
import { type Postgres, startPostgres } from './helpers/postgres.js';

/** The token checks tokens/ makes synchronously: the same method names on both stores. */
interface TokenReads {
  oauthClientNames(): Set<string> | Promise<Set<string>>;
  forgetPasskeys(owner: string, at: string, actor: AuditEntry['actor']): number | Promise<number>;
  ownerByTokenHash(hash: string): string | undefined;
  ownerTokenHash(name: string): string | undefined;
  clientByTokenHash(hash: string): string | undefined;
  owners(): Map<string, string>;
}
type Impl = StorePorts & TokenReads;

interface Backend {
  name: string;
  /**
   * A fresh, empty database, and how to open a store on it (twice: two writers); `node` as a daemon opens
   * it (contract 16: the node that adopts what older versions stored without one).
   */
  fresh(opts?: { signer?: AuditSigner }): Promise<(node?: string) => Promise<Impl>>;
  done(store: Impl): Promise<void>;
}

let pg: Postgres | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.destroy();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const sqlite: Backend = {
  name: 'sqlite',
  async fresh(opts = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'ogf-ports-'));
    dirs.push(dir);
    return async (node?: string) =>
      new Store(join(dir, 'broker.db'), { pollMs: 20, ...opts, ...(node === undefined ? {} : { node }) });
  },
  async done(store) {
    store.close();
  },
};

const postgres: Backend = {
  name: 'postgres',
  async fresh(opts = {}) {
    const url = await pg!.createDatabase();
    return (node?: string) =>
      PostgresStore.open(url, {
        max: 4,
        ...opts,
        ...(node === undefined
          ? {}
          : { node: { name: node, host: 'test', pid: process.pid, version: 'test' } }),
      });
  },
  async done(store) {
    store.close();
    await (store as unknown as PostgresStore).closed();
  },
};

let n = 0;
function command(client = 'local', extra: Partial<Command> = {}): Command {
  n++;
  return {
    id: `c_${String(n).padStart(10, '0')}`,
    version: 1,
    tool: 'run_command_wait',
    command: 'echo',
    args: { n },
    display: ['echo', String(n)],
    client,
    created_at: new Date(Date.UTC(2026, 10, 30, 10, 0, 0, n)).toISOString(),
    review_expires_at: '2026-11-30T11:00:00.000Z',
    phase: { state: 'awaiting_review' },
    ...extra,
  };
}

const audit = (c: { id: string; version: number }, action: AuditEntry['action']): AuditEntry => ({
  at: '2026-11-30T10:00:00.000Z',
  actor: { kind: 'owner', name: 'owner' },
  action,
  command_id: c.id,
  version: c.version,
});

/** The command denied by the owner: the next version. */
function denied(c: Command, by = 'owner'): Command {
  return {
    ...c,
    version: c.version + 1,
    phase: {
      state: 'denied',
      reason: 'OwnerDenied',
      detail: `denied by ${by}`,
      decided_at: '2026-11-30T10:00:01.000Z',
      decided_by: by,
    },
  };
}

function approved(c: Command, by = 'owner'): Command {
  return {
    ...c,
    version: c.version + 1,
    phase: { state: 'approved', decided_at: '2026-11-30T10:00:01.000Z', decided_by: by },
  };
}

function grant(uses?: number): Grant {
  n++;
  const g: Grant = {
    id: `g_${n}`,
    command: 'echo',
    client: 'local',
    state: 'live',
    source: 'owner',
    created_by: 'owner',
    created_at: '2026-11-30T10:00:00.000Z',
    expires_at: '2099-01-01T00:00:00.000Z',
  };
  if (uses !== undefined) g.uses_left = uses;
  return g;
}

const grantAudit = (g: Grant, action: AuditEntry['action']): AuditEntry => ({
  at: '2026-11-30T10:00:00.000Z',
  actor: { kind: 'owner', name: 'owner' },
  action,
  detail: { grant_id: g.id, uses_left: g.uses_left },
});

describe.each([sqlite, postgres])('[c16.store-ports] the store ports on $name', (backend) => {
  const open: Impl[] = [];
  let openStore: (node?: string) => Promise<Impl>;
  async function fresh(): Promise<Impl> {
    openStore = await backend.fresh();
    return another();
  }
  async function another(node?: string): Promise<Impl> {
    const s = await openStore(node);
    open.push(s);
    return s;
  }
  afterEach(async () => {
    for (const s of open.splice(0)) await backend.done(s);
  });

  it('insert, get, the committed reads and the audit entry written with each row', async () => {
    const s = await fresh();
    const a = command('local', { request_id: 'r1' });
    await s.commands.insert(a, audit(a, 'submit'));
    expect(await s.commands.get(a.id)).toEqual(a);
    expect(await s.commands.get('c_missing')).toBeUndefined();
    expect(s.committedReads.command(a.id)).toEqual(a);
    expect(s.committedReads.byRequest('local', 'r1')).toEqual(a);
    expect(s.committedReads.byRequest('other', 'r1')).toBeUndefined();
    expect(s.committedReads.active().map((c) => c.id)).toEqual([a.id]);
    expect(await s.commands.active()).toEqual([a]);
    expect(await s.audits.forCommand(a.id)).toMatchObject([
      { action: 'submit', version: 1, seq: expect.any(Number) },
    ]);
    // The same request_id twice for one client: the unique index refuses it, nothing is added.
    const twin = command('local', { request_id: 'r1' });
    await expect(s.commands.insert(twin, audit(twin, 'submit'))).rejects.toThrow();
    expect(await s.commands.get(twin.id)).toBeUndefined();
    expect(await s.audits.forCommand(twin.id)).toEqual([]);
  });

  it('update replaces only the version it names; a stale one is refused and changes nothing', async () => {
    const s = await fresh();
    const a = command();
    await s.commands.insert(a, audit(a, 'submit'));
    const d = denied(a);
    await s.commands.update(d, audit(d, 'deny'));
    expect(s.committedReads.command(a.id)).toEqual(d);
    expect(s.committedReads.active()).toEqual([]);
    expect(s.committedReads.recentFinal(10)).toEqual([d]);
    await expect(s.commands.update(approved(a), audit(approved(a), 'approve'))).rejects.toThrow(/version 1/);
    expect(await s.commands.get(a.id)).toEqual(d);
    expect((await s.audits.forCommand(a.id)).map((e) => e.action)).toEqual(['submit', 'deny']);
  });

  it('two writers updating one command at one version: exactly one wins', async () => {
    const s1 = await fresh();
    const s2 = await another();
    for (let round = 0; round < 5; round++) {
      const a = command();
      await s1.commands.insert(a, audit(a, 'submit'));
      const results = await Promise.allSettled([
        s1.commands.update(approved(a, 'alice'), audit(a, 'approve')),
        s2.commands.update(denied(a, 'bob'), audit(a, 'deny')),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const stored = (await s1.commands.get(a.id))!;
      expect(stored.version).toBe(2);
      const winner = results[0]!.status === 'fulfilled' ? 'approved' : 'denied';
      expect(stored.phase.state).toBe(winner);
      expect(await s2.audits.forCommand(a.id)).toHaveLength(2);
    }
  });

  it('a transaction is all or nothing: a throw, or one refused write, leaves nothing of it', async () => {
    const s = await fresh();
    const a = command();
    const b = command();
    await expect(
      s.transaction(() =>
        Promise.all([
          s.commands.insert(a, audit(a, 'submit')),
          s.commands.insert(b, audit(b, 'submit')),
        ]).then(() => {
          throw new Error('the batch failed');
        }),
      ),
    ).rejects.toThrow('the batch failed');
    expect(await s.commands.get(a.id)).toBeUndefined();
    expect(s.committedReads.command(a.id)).toBeUndefined();
    expect(await s.audits.since(0)).toEqual([]);

    const c = command();
    await s.commands.insert(c, audit(c, 'submit'));
    const g = grant(3);
    await expect(
      s.transaction(() =>
        Promise.all([
          s.commands.insert(a, audit(a, 'submit')),
          s.grants.put(g, grantAudit(g, 'grant_created')),
          // A stale version: refused, so the whole transaction goes.
          s.commands.update(denied({ ...c, version: 5 }), audit(c, 'deny')),
        ]).then(() => undefined),
      ),
    ).rejects.toThrow();
    expect(await s.commands.get(a.id)).toBeUndefined();
    expect(await s.grants.get(g.id)).toBeUndefined();
    expect(s.committedReads.grant(g.id)).toBeUndefined();
    expect(s.committedReads.command(a.id)).toBeUndefined();
    expect((await s.audits.since(0)).map((e) => e.action)).toEqual(['submit']);

    // updateMany is one transaction too.
    const d = command();
    await s.commands.insert(d, audit(d, 'submit'));
    await expect(
      s.commands.updateMany([
        { next: denied(d), audit: audit(d, 'deny') },
        { next: denied({ ...c, version: 9 }), audit: audit(c, 'deny') },
      ]),
    ).rejects.toThrow();
    expect((await s.commands.get(d.id))!.version).toBe(1);
    await s.commands.updateMany([
      { next: denied(d), audit: audit(d, 'deny') },
      { next: denied(c), audit: audit(c, 'deny') },
    ]);
    expect((await s.commands.counts()).denied).toBe(2);
  });

  it('recentFinal, history (by id, by time, by size), tasksOf, retentionScan and counts', async () => {
    const s = await fresh();
    const rows: Command[] = [];
    for (let i = 0; i < 6; i++) {
      const c = command(i % 2 === 0 ? 'me' : 'you', i % 3 === 0 ? { task: { ttl_ms: 60_000 } } : {});
      await s.commands.insert(c, audit(c, 'submit'));
      rows.push(c);
    }
    for (const c of rows.slice(0, 3)) await s.commands.update(denied(c), audit(c, 'deny'));
    expect((await s.commands.recentFinal(2)).map((c) => c.id)).toEqual([rows[2]!.id, rows[1]!.id]);
    expect(s.committedReads.recentFinal(2).map((c) => c.id)).toEqual([rows[2]!.id, rows[1]!.id]);
    expect(s.committedReads.active().map((c) => c.id)).toEqual(rows.slice(3).map((c) => c.id));
    expect((await s.commands.active()).map((c) => c.id)).toEqual(rows.slice(3).map((c) => c.id));
    const ids = rows.map((c) => c.id).reverse();
    expect((await s.commands.history(4)).map((c) => c.id)).toEqual(ids.slice(0, 4));
    expect((await s.commands.history(10, rows[3]!.id)).map((c) => c.id)).toEqual(ids.slice(3));
    expect((await s.commands.history(10, rows[2]!.created_at)).map((c) => c.id)).toEqual(ids.slice(4));
    const one = JSON.stringify(rows[5]).length;
    expect(await s.commands.history(10, undefined, 1)).toHaveLength(1);
    expect(await s.commands.history(10, undefined, one * 2 + 10)).toHaveLength(2);
    const tasks = rows.filter((c) => c.task !== undefined && c.client === 'me').reverse();
    expect(tasks.length).toBe(1);
    const mine = await s.commands.tasksOf('me', 10, 1 << 20);
    expect(mine).toEqual({ commands: [expect.objectContaining({ id: tasks[0]!.id })], more: false });
    const theirs = rows.filter((c) => c.task !== undefined && c.client === 'you');
    expect((await s.commands.tasksOf('you', 10, 1 << 20))!.commands.map((c) => c.id)).toEqual(
      theirs.map((c) => c.id),
    );
    expect(await s.commands.tasksOf('me', 10, 1 << 20, theirs[0]!.id)).toBeUndefined();
    expect(await s.commands.tasksOf('me', 10, 1 << 20, 'c_nonexistent')).toBeUndefined();
    const page = await s.commands.tasksOf('me', 0, 1 << 20);
    expect(page).toEqual({ commands: [], more: true });
    const scan = await s.commands.retentionScan(0, 3);
    expect(scan.map((r) => r.id)).toEqual(rows.slice(0, 3).map((c) => c.id));
    expect(scan[0]).toEqual({
      seq: expect.any(Number),
      id: rows[0]!.id,
      state: 'denied',
      created_at: rows[0]!.created_at,
      chars: JSON.stringify(denied(rows[0]!)).length,
    });
    expect((await s.commands.retentionScan(scan[2]!.seq, 10)).map((r) => r.id)).toEqual(
      rows.slice(3).map((c) => c.id),
    );
    expect(await s.commands.counts()).toEqual({ denied: 3, awaiting_review: 3 });
  });

  it('[c19.actions-attack] actions: stored by hash, found, spent once across two writers, pruned', async () => {
    const s1 = await fresh();
    const s2 = await another();
    const row = (hash: string, expires_at: string) => ({
      token_hash: hash,
      command_id: 'c_act',
      version: 1,
      action: 'approve' as const,
      owner: 'owner',
      channel: 'phone',
      expires_at,
    });
    const live = row('a'.repeat(64), '2999-01-01T00:00:00.000Z');
    const old = row('b'.repeat(64), '2000-01-01T00:00:00.000Z');
    await s1.actions.put([live, old]);
    expect(await s2.actions.find(live.token_hash)).toEqual(live);
    // Two nodes spend one token at once: exactly one gets the row.
    const [x, y] = await Promise.all([s1.actions.spend(live.token_hash), s2.actions.spend(live.token_hash)]);
    expect([x, y].filter((v) => v !== undefined)).toEqual([live]);
    expect(await s1.actions.find(live.token_hash)).toBeUndefined();
    expect(await s2.actions.prune('2026-01-01T00:00:00.000Z')).toBe(1);
    expect(await s1.actions.find(old.token_hash)).toBeUndefined();
  });

  it('grants: put, get, live, recent, and the committed reads', async () => {
    const s = await fresh();
    const g1 = grant(2);
    const g2 = grant();
    await s.grants.put(g1, grantAudit(g1, 'grant_created'));
    await s.grants.put(g2, grantAudit(g2, 'grant_created'));
    expect(await s.grants.get(g1.id)).toEqual(g1);
    expect((await s.grants.live()).map((g) => g.id)).toEqual([g1.id, g2.id]);
    expect(s.committedReads.liveGrants().map((g) => g.id)).toEqual([g1.id, g2.id]);
    const revoked: Grant = { ...g2, state: 'revoked', ended_at: '2026-11-30T10:01:00.000Z' };
    await s.grants.put(revoked, grantAudit(revoked, 'grant_revoked'));
    expect((await s.grants.live()).map((g) => g.id)).toEqual([g1.id]);
    expect(s.committedReads.liveGrants().map((g) => g.id)).toEqual([g1.id]);
    expect(s.committedReads.grant(g2.id)).toEqual(revoked);
    expect((await s.grants.recent(1)).map((g) => g.id)).toEqual([g2.id]);
    // A use takes one from the stored uses; a write that would give one back is refused.
    const used: Grant = { ...g1, uses_left: 1 };
    await s.grants.put(used, grantAudit(used, 'grant_used'));
    await expect(s.grants.put(g1, grantAudit(g1, 'grant_used'))).rejects.toThrow(/uses/);
    expect(await s.grants.get(g1.id)).toEqual(used);
    expect((await s.audits.since(0)).filter((e) => e.action === 'grant_used')).toHaveLength(1);
  });

  it('[c16.grant-node] a grant keeps its node (a name or *); one stored without a node is adopted by the node that opens the store', async () => {
    const s1 = await fresh();
    const mine: Grant = { ...grant(), node: 'alpha' };
    const all: Grant = { ...grant(3), node: '*' };
    const old = grant();
    for (const g of [mine, all, old]) await s1.grants.put(g, grantAudit(g, 'grant_created'));
    expect(await s1.grants.get(mine.id)).toEqual(mine);
    expect(await s1.grants.get(all.id)).toEqual(all);
    expect((await s1.grants.get(old.id))?.node).toBeUndefined();
    // Opened as a daemon's node (at its start): the grant of an older version takes that node, never `*`;
    // the others keep theirs.
    const s2 = await another('beta');
    expect(await s2.grants.get(old.id)).toEqual({ ...old, node: 'beta' });
    expect(s2.committedReads.grant(old.id)).toEqual({ ...old, node: 'beta' });
    expect(await s2.grants.get(mine.id)).toEqual(mine);
    expect(await s2.grants.get(all.id)).toEqual(all);
  });

  it('[c16.caps-fleet] an insert with caps: PostgreSQL counts every writer’s non-final commands and refuses past a cap; SQLite (one writer, counted in memory) ignores them', async () => {
    const s1 = await fresh();
    const s2 = await another();
    const caps = { perClient: 3, all: 4 };
    const a = [command('a'), command('a'), command('a')];
    await s1.commands.insert(a[0]!, audit(a[0]!, 'submit'), caps);
    await s2.commands.insert(a[1]!, audit(a[1]!, 'submit'), caps);
    await s1.commands.insert(a[2]!, audit(a[2]!, 'submit'), caps);
    const past = command('a');
    const b = command('b');
    if (backend.name === 'sqlite') {
      await s2.commands.insert(past, audit(past, 'submit'), caps);
      expect(await s1.commands.get(past.id)).toBeDefined();
      return;
    }
    // The client's cap (3), whichever writer asks; nothing of the refused insert is stored.
    await expect(s2.commands.insert(past, audit(past, 'submit'), caps)).rejects.toMatchObject({
      name: 'StaleWrite',
      table: 'caps',
    });
    expect(await s1.commands.get(past.id)).toBeUndefined();
    expect((await s1.audits.since(0)).filter((e) => e.command_id === past.id)).toEqual([]);
    // All clients together (4): b's first fills it, b's second is refused.
    await s2.commands.insert(b, audit(b, 'submit'), caps);
    const b2 = command('b');
    await expect(s1.commands.insert(b2, audit(b2, 'submit'), caps)).rejects.toMatchObject({ table: 'caps' });
    // A decision frees a slot, on any writer.
    await s2.commands.update(denied(a[0]!), audit(a[0]!, 'deny'));
    await s1.commands.insert(past, audit(past, 'submit'), caps);
    // Two writers at once for the last slots: never more than the cap.
    await s2.commands.update(denied(b), audit(b, 'deny'));
    await s2.commands.update(denied(past), audit(past, 'deny'));
    const burst = Array.from({ length: 12 }, () => command('c'));
    const done = await Promise.allSettled(
      burst.map((c, i) => (i % 2 === 0 ? s1 : s2).commands.insert(c, audit(c, 'submit'), caps)),
    );
    expect(done.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect((await s1.commands.active()).length).toBe(4);
  });

  it("a grant's uses taken by two writers at once: exactly its uses, never one more", async () => {
    const s1 = await fresh();
    const s2 = await another();
    const uses = 8;
    const g = grant(uses);
    await s1.grants.put(g, grantAudit(g, 'grant_created'));
    let taken = 0;
    const take = async (s: Impl): Promise<void> => {
      for (;;) {
        const now = (await s.grants.get(g.id))!;
        if (now.state !== 'live') return;
        const left = now.uses_left! - 1;
        const next: Grant = { ...now, uses_left: left, state: left === 0 ? 'spent' : 'live' };
        try {
          await s.grants.put(next, grantAudit(next, 'grant_used'));
          taken++;
        } catch {
          // Another writer took that use first: read again.
        }
      }
    };
    await Promise.all([take(s1), take(s2), take(s1), take(s2)]);
    expect(taken).toBe(uses);
    expect(await s1.grants.get(g.id)).toMatchObject({ uses_left: 0, state: 'spent' });
    expect((await s2.audits.since(0)).filter((e) => e.action === 'grant_used')).toHaveLength(uses);
  });

  it('token hashes: set, read back, the audit actions, and the synchronous checks', async () => {
    const s = await fresh();
    const daemon = { kind: 'daemon', name: 'daemon' } as const;
    await s.ownerTokens.setTokenHash('alice', 'h1', '2026-11-30T10:00:00.000Z', daemon, { via: 'start' });
    await s.ownerTokens.setTokenHash('alice', 'h2', '2026-11-30T10:00:01.000Z', daemon);
    await s.clientTokens.setTokenHash('ci', 'h3', '2026-11-30T10:00:02.000Z', daemon);
    expect(await s.ownerTokens.tokenHash('alice')).toBe('h2');
    expect(await s.ownerTokens.byTokenHash('h1')).toBeUndefined();
    expect(await s.ownerTokens.byTokenHash('h2')).toBe('alice');
    expect(await s.clientTokens.byTokenHash('h3')).toBe('ci');
    expect(await s.clientTokens.all()).toEqual(new Map([['ci', 'h3']]));
    expect(s.ownerByTokenHash('h2')).toBe('alice');
    expect(s.ownerByTokenHash('h1')).toBeUndefined();
    expect(s.ownerTokenHash('alice')).toBe('h2');
    expect(s.clientByTokenHash('h3')).toBe('ci');
    expect(s.owners()).toEqual(new Map([['alice', 'h2']]));
    // One hash, one holder: another owner cannot take alice's.
    await expect(
      s.ownerTokens.setTokenHash('bob', 'h2', '2026-11-30T10:00:03.000Z', daemon),
    ).rejects.toThrow();
    expect(s.ownerByTokenHash('h2')).toBe('alice');
    const log = await s.audits.since(0);
    expect(log.map((e) => [e.action, e.detail])).toEqual([
      ['owner_created', { owner: 'alice', via: 'start' }],
      ['owner_token_rotated', { owner: 'alice' }],
      ['mcp_token_set', { client: 'ci', rotated: false }],
    ]);
    expect(log.map((e) => e.seq)).toEqual([...log.map((e) => e.seq)].sort((a, b) => a - b));
    await s.audits.append({ at: '2026-11-30T10:00:04.000Z', actor: daemon, action: 'cue_refused' });
    expect((await s.audits.since(log[2]!.seq)).map((e) => e.action)).toEqual(['cue_refused']);
    expect(await s.audits.since(0, 1)).toHaveLength(1);
  });

  it("the change feed: another writer's commit is heard, and the synchronous reads already see it", async () => {
    const s1 = await fresh();
    const s2 = await another();
    const heard: Array<{ change: StoreChange; sees: boolean }> = [];
    const a = command();
    s1.subscribe((change) =>
      heard.push({
        change,
        sees: s1.committedReads.command(a.id) !== undefined || s1.ownerByTokenHash('hx') !== undefined,
      }),
    );
    await s2.commands.insert(a, audit(a, 'submit'));
    await waitFor(() => heard.length > 0, 'the feed to hear the other writer');
    expect(heard[0]!.sees).toBe(true);
    expect(s1.committedReads.command(a.id)).toEqual(a);
    const d = denied(a);
    await s2.commands.update(d, audit(d, 'deny'));
    await waitFor(() => s1.committedReads.command(a.id)?.version === 2, 'the update to be seen');
    expect(s1.committedReads.recentFinal(5)).toEqual([d]);
    await s2.ownerTokens.setTokenHash('bob', 'hx', '2026-11-30T10:00:00.000Z', {
      kind: 'owner',
      name: 'owner',
    });
    await waitFor(() => s1.ownerByTokenHash('hx') === 'bob', "the other writer's owner");
    const g = grant(1);
    await s2.grants.put(g, grantAudit(g, 'grant_created'));
    await waitFor(
      () => s1.committedReads.liveGrants().some((x) => x.id === g.id),
      "the other writer's grant",
    );
    // Its own commits are not news to a store: it does not hear them.
    const before = heard.length;
    const own = command();
    await s1.commands.insert(own, audit(own, 'submit'));
    await new Promise((r) => setTimeout(r, 150));
    if (backend.name === 'postgres') expect(heard.length).toBe(before);
    expect(s1.committedReads.command(own.id)).toEqual(own);
  });
});

describe('[c16.unavailable] what only PostgreSQL has: overlapping transactions, deadlocks, a lost feed, a lost database', () => {
  const open: PostgresStore[] = [];
  async function store(url: string): Promise<PostgresStore> {
    const s = await PostgresStore.open(url, { max: 4 });
    open.push(s);
    return s;
  }
  afterEach(async () => {
    for (const s of open.splice(0)) {
      s.close();
      await s.closed();
    }
  });
  const db = (url: string) => url.split('/').pop()!;

  it('migrates once: a second daemon on the same database finds the schema; the audit log refuses change', async () => {
    const url = await pg!.createDatabase();
    await Promise.all([store(url), store(url)]);
    expect(await pg!.sql(db(url), 'SELECT version FROM ogf_broker_migrations ORDER BY version')).toBe(
      Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1).join('\n'),
    );
    const s = open[0]!;
    await s.audits.append({ at: 'x', actor: { kind: 'daemon', name: 'daemon' }, action: 'cue_refused' });
    await expect(pg!.sql(db(url), "UPDATE audit SET action = 'forged'")).rejects.toThrow(/append-only/);
    await expect(pg!.sql(db(url), 'DELETE FROM audit')).rejects.toThrow(/append-only/);
    await expect(pg!.sql(db(url), 'TRUNCATE audit')).rejects.toThrow(/append-only/);
  });

  it('[c16.grant-node] the upgrade: a grant stored before grants named their node takes the node of the command whose approval made it; the caps count what was there', async () => {
    const url = await pg!.createDatabase();
    const s = await store(url);
    // As a v3 database held them: alpha's command approved with a grant (no node on the grant), a grant
    // made with the bare grant frame (no command), and two non-final commands.
    const c = command('local', { node: 'alpha' });
    await s.commands.insert(c, audit(c, 'submit'));
    const made = grant();
    await s.grants.put(made, {
      ...grantAudit(made, 'grant_created'),
      detail: { grant_id: made.id, command_id: c.id },
    });
    const bare = grant();
    await s.grants.put(bare, grantAudit(bare, 'grant_created'));
    const other = command('other', { node: 'beta' });
    await s.commands.insert(other, audit(other, 'submit'));
    s.close();
    await s.closed();
    open.splice(0);
    // Back to the schema before this version's migration.
    await pg!.sql(
      db(url),
      `DROP TRIGGER commands_pending ON commands; DROP FUNCTION ogf_pending_count(); DROP TABLE pending_counts;
       DELETE FROM ogf_broker_migrations WHERE version >= ${PG_MIGRATIONS.findIndex((m) => m.includes('pending_counts')) + 1}`,
    );
    const again = await PostgresStore.open(url, {
      max: 4,
      node: { name: 'gamma', host: 'test', pid: process.pid, version: 'test' },
    });
    open.push(again);
    expect((await again.grants.get(made.id))?.node).toBe('alpha');
    // No command made it: the first node to start takes it (never `*`).
    expect((await again.grants.get(bare.id))?.node).toBe('gamma');
    expect(
      await pg!.sql(
        db(url),
        "SELECT string_agg(client || '=' || n, ',' ORDER BY client) FROM pending_counts",
      ),
    ).toBe('*=2,local=1,other=1');
  });

  it('two transactions open at once updating one command at one version: one commits, one is refused', async () => {
    const url = await pg!.createDatabase();
    const [s1, s2] = await Promise.all([store(url), store(url)]);
    for (let round = 0; round < 5; round++) {
      const a = command();
      await s1.commands.insert(a, audit(a, 'submit'));
      const results = await Promise.allSettled([
        s1.transaction(() => s1.commands.update(approved(a, 'alice'), audit(a, 'approve'))),
        s2.transaction(() => s2.commands.update(denied(a, 'bob'), audit(a, 'deny'))),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await s2.audits.forCommand(a.id)).toHaveLength(2);
    }
  });

  it('a deadlock with another session is retried: the transaction commits whole, once', async () => {
    const url = await pg!.createDatabase();
    const s = await store(url);
    const at = '2026-11-30T10:00:00.000Z';
    const daemon = { kind: 'daemon', name: 'daemon' } as const;
    await s.ownerTokens.setTokenHash('a', 'ha0', at, daemon);
    await s.ownerTokens.setTokenHash('b', 'hb0', at, daemon);
    const raw = new pgClient.Client({ connectionString: url });
    await raw.connect();
    try {
      // Only the store's session detects the deadlock (the server's is 100 ms): it is the one aborted.
      await raw.query("SET deadlock_timeout = '20s'");
      await raw.query('BEGIN');
      await raw.query("UPDATE owners SET created_at = 'raw' WHERE name = 'b'");
      const tx = s.transaction(() =>
        Promise.all([
          s.ownerTokens.setTokenHash('a', 'ha1', at, daemon),
          s.ownerTokens.setTokenHash('b', 'hb1', at, daemon),
        ]).then(() => undefined),
      );
      await waitFor(
        async () =>
          (await raw.query('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted')).rows[0].n > 0,
        'the store to wait for row b',
      );
      await raw.query("UPDATE owners SET created_at = 'raw' WHERE name = 'a'");
      await raw.query('COMMIT');
      await tx;
    } finally {
      await raw.end();
    }
    expect(s.retries).toBeGreaterThanOrEqual(1);
    expect(await s.ownerTokens.all()).toEqual(
      new Map([
        ['a', 'ha1'],
        ['b', 'hb1'],
      ]),
    );
    expect(s.ownerByTokenHash('hb1')).toBe('b');
    expect((await s.audits.since(0)).map((e) => e.action)).toEqual([
      'owner_created',
      'owner_created',
      'owner_token_rotated',
      'owner_token_rotated',
    ]);
  });

  it('a notification missed while the feed was cut delays the change, never loses it', async () => {
    const url = await pg!.createDatabase();
    const [s1, s2] = await Promise.all([store(url), store(url)]);
    const heard: StoreChange[] = [];
    s1.subscribe((c) => heard.push(c));
    // Cut s1's LISTEN session, then commit from s2 before it can be back (it waits 250 ms first).
    await pg!.sql(
      db(url),
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ogf-broker-feed' AND pid <> pg_backend_pid()",
    );
    const a = command();
    await s2.commands.insert(a, audit(a, 'submit'));
    await waitFor(() => s1.committedReads.command(a.id), 'the reload after the feed is back', 10_000);
    await waitFor(
      () => heard.some((c) => c.table === undefined),
      'a change with no table: reload everything',
    );
    expect(s1.committedReads.active().map((c) => c.id)).toContain(a.id);
  });

  it('the database stopped: writes are Unavailable, nothing is kept; started again: it works, no restart', async () => {
    const url = await pg!.createDatabase();
    const changes: boolean[] = [];
    const s = await PostgresStore.open(url, { max: 4, onAvailability: (up) => changes.push(up) });
    open.push(s);
    const before = command();
    await s.commands.insert(before, audit(before, 'submit'));
    await pg!.stop('immediate');
    try {
      const c = command();
      await expect(s.transaction(() => s.commands.insert(c, audit(c, 'submit')))).rejects.toMatchObject({
        code: 'Unavailable',
        message: expect.stringMatching(/database is out of reach/),
      });
      await expect(s.commands.get(before.id)).rejects.toMatchObject({ code: 'Unavailable' });
      expect(s.available).toBe(false);
      expect(s.committedReads.command(c.id)).toBeUndefined();
      // What it had is still answered from memory.
      expect(s.committedReads.command(before.id)).toEqual(before);
    } finally {
      await pg!.start();
    }
    const after = command();
    await waitFor(
      () =>
        Promise.resolve(s.transaction(() => s.commands.insert(after, audit(after, 'submit')))).then(
          () => true,
          () => false,
        ),
      'a write to succeed again',
    );
    expect(await s.commands.get(after.id)).toEqual(after);
    await waitFor(() => s.available, 'available again');
    expect(changes).toEqual([false, true]);
    expect((await s.commands.active()).map((x) => x.id)).toEqual([before.id, after.id]);
  });
});

/** An Ed25519 signer as the daemon's (audit/keys.ts signerOf), with its public key for verifyChain. */
function ed25519(): { signer: AuditSigner; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    signer: { sign: (payload) => sign(null, Buffer.from(payload, 'utf8'), privateKey).toString('base64') },
    publicKey,
  };
}

describe.each([sqlite, postgres])('[c16.store-ports] the v3 ports on $name', (backend) => {
  const open: Impl[] = [];
  let openStore: () => Promise<Impl>;
  async function fresh(opts: { signer?: AuditSigner } = {}): Promise<Impl> {
    openStore = await backend.fresh(opts);
    return another();
  }
  async function another(): Promise<Impl> {
    const s = await openStore();
    open.push(s);
    return s;
  }
  afterEach(async () => {
    for (const s of open.splice(0)) await backend.done(s);
  });
  const at = '2026-11-30T10:00:00.000Z';
  const owner = { kind: 'owner', name: 'owner' } as const;

  it('amend replaces the record at the same version, with its audit entry; another version is refused', async () => {
    const s = await fresh();
    const a = command();
    await s.commands.insert(a, audit(a, 'submit'));
    const previewed: Command = {
      ...a,
      preview: { kind: 'file_diff', status: 'ready', diff: '--- a\n+++ a\n' },
    };
    await s.commands.amend(previewed, audit(a, 'preview_made'));
    expect(await s.commands.get(a.id)).toEqual(previewed);
    expect(s.committedReads.command(a.id)).toEqual(previewed);
    expect((await s.commands.get(a.id))!.version).toBe(1);
    const stale = { ...previewed, version: 2 };
    await expect(s.commands.amend(stale, audit(stale, 'preview_made'))).rejects.toThrow(/not at version 2/);
    expect((await s.audits.forCommand(a.id)).map((e) => e.action)).toEqual(['submit', 'preview_made']);
    // The next update still names version 1: an amend never moved it.
    const d = denied(previewed);
    await s.commands.update(d, audit(d, 'deny'));
    expect((await s.commands.get(a.id))!.version).toBe(2);
  });

  it('the chain: two store instances writing at once, every entry chained, seq without gaps, verified', async () => {
    const key = ed25519();
    const s1 = await fresh({ signer: key.signer });
    // Two daemons on one database are PostgreSQL's (the multi-node property); two SQLite connections in one
    // process would wait on each other's open transaction, so SQLite's writers share one store.
    const s2 = backend.name === 'postgres' ? await another() : s1;
    const ids: string[] = [];
    const write = async (s: Impl) => {
      for (let i = 0; i < 15; i++) {
        const c = command();
        ids.push(c.id);
        await s.transaction(() =>
          Promise.all([
            s.commands.insert(c, audit(c, 'submit')),
            s.commands.update(denied(c), audit(denied(c), 'deny')),
          ]).then(() => undefined),
        );
      }
    };
    await Promise.all([write(s1), write(s2), write(s1), write(s2)]);
    const chain = await s2.audits.chainFor(ids);
    expect(chain).toHaveLength(ids.length * 2);
    expect(chain.map((e) => e.seq)).toEqual(Array.from({ length: chain.length }, (_, i) => i + 1));
    const cp = await s1.audits.checkpoint('2026-11-30T11:00:00.000Z');
    expect(cp).toMatchObject({ seq: chain.length, hash: chain.at(-1)!.hash });
    const result = verifyChain({
      entries: chain.map((value) => ({ value: { ...value } })),
      checkpoints: [cp!],
      publicKey: key.publicKey,
    });
    expect(result).toMatchObject({ ok: true, entries: chain.length, checkpoints: 1 });
    // The recomputation an outsider makes: prev is the entry before's hash, hash the SHA-256 of the rest.
    chain.forEach((e, i) => {
      const { hash, ...rest } = e;
      expect(e.prev).toBe(i === 0 ? '0'.repeat(64) : chain[i - 1]!.hash);
      expect(sealEntry(rest).hash).toBe(hash);
    });
    // Each command's entries name it; a grant's use names the command it approved.
    expect(chain.filter((e) => e.command_id === ids[0]).map((e) => e.event)).toEqual(['submit', 'deny']);
  });

  it('checkpoints: the 10-minute one only when new, every 1,000th in its transaction, heard after commit', async () => {
    const key = ed25519();
    const s = await fresh({ signer: key.signer });
    const heard: Checkpoint[] = [];
    const off = s.audits.onCheckpoint((cp) => heard.push(cp));
    expect(await s.audits.checkpoint(at)).toBeUndefined();
    await s.audits.append({ at, actor: owner, action: 'owner_login' });
    const first = await s.audits.checkpoint(at);
    expect(first).toMatchObject({ seq: 1, at });
    expect(await s.audits.checkpoint(at)).toBeUndefined();
    // A batch that fails makes no checkpoint, and no one hears of one.
    await expect(
      Promise.resolve(
        s.transaction(async () => {
          const appends = Array.from({ length: 1000 }, () =>
            s.audits.append({ at, actor: owner, action: 'owner_login' }),
          );
          await Promise.all(appends);
          throw new Error('the batch fails');
        }),
      ),
    ).rejects.toThrow(/the batch fails/);
    expect(heard.map((cp) => cp.seq)).toEqual([1]);
    await s.transaction(() =>
      Promise.all(
        Array.from({ length: 1000 }, () => s.audits.append({ at, actor: owner, action: 'owner_login' })),
      ).then(() => undefined),
    );
    await waitFor(() => heard.length === 2, 'the 1,000th entry’s checkpoint');
    expect(heard[1]).toMatchObject({ seq: 1000 });
    off();
    for (const cp of heard) {
      const payload = Buffer.from(checkpointPayload(cp), 'utf8');
      expect(verify(null, payload, key.publicKey, Buffer.from(cp.signature, 'base64'))).toBe(true);
    }
  });

  it('the history search: text in any case (command, args, decider, note), state, client, node, before', async () => {
    const s = await fresh();
    const a = command('local', { command: 'ls', args: { path: '/srv/Reports/q3' }, node: 'alpha' });
    const b = command('ci', {
      command: 'rm',
      args: { path: '/tmp/x' },
      justification: 'Clean the scratch dir',
      node: 'beta',
    });
    const c = command('local', { command: 'cat', args: { path: '/etc/hosts' } });
    for (const x of [a, b, c]) await s.commands.insert(x, audit(x, 'submit'));
    const d = denied(c, 'alice');
    await s.commands.update(d, audit(d, 'deny'));
    const ids = async (f: Parameters<Impl['commands']['search']>[0], before?: string) =>
      (await s.commands.search(f, 10, before)).map((x) => x.id);
    expect(await ids({ text: 'reports/Q3' })).toEqual([a.id]);
    expect(await ids({ text: 'SCRATCH' })).toEqual([b.id]);
    expect(await ids({ text: 'alice' })).toEqual([c.id]);
    expect(await ids({ text: '/' })).toEqual([c.id, b.id, a.id]);
    expect(await ids({ text: '100%' })).toEqual([]);
    expect(await ids({ state: 'denied' })).toEqual([c.id]);
    expect(await ids({ state: 'awaiting_review', client: 'local' })).toEqual([a.id]);
    expect(await ids({ text: 'path', client: 'local' })).toEqual([c.id, a.id]);
    expect(await ids({}, c.id)).toEqual([b.id, a.id]);
    expect(await ids({}, 'c_unknown')).toEqual([]);
    // Contract 16: the node that received it, exactly (c was stored before nodes: it has none).
    expect(await ids({ node: 'beta' })).toEqual([b.id]);
    expect(await ids({ node: 'alpha', text: 'reports' })).toEqual([a.id]);
    expect(await ids({ node: 'alp' })).toEqual([]);
    expect(await ids({ node: 'alpha', client: 'ci' })).toEqual([]);
    // Contract 11 (v4): the command name, exactly (the Allow… dialog's test against the past).
    expect(await ids({ command: 'rm' })).toEqual([b.id]);
    expect(await ids({ command: 'cat', state: 'denied' })).toEqual([c.id]);
    expect(await ids({ command: 'r' })).toEqual([]);
    const e = command('local', { command: 'ls' });
    await s.commands.insert(e, audit(e, 'submit'));
    expect(await ids({ command: 'ls' })).toEqual([e.id, a.id]);
    expect(await ids({ command: 'ls' }, e.id)).toEqual([a.id]);
  });

  it('oauth: connect, token, rotate raced by two writers (one wins), disconnect once, only hashes', async () => {
    const s1 = await fresh();
    const s2 = await another();
    await s1.oauth.register({
      client_id: 'dcr_1',
      client_name: 'Claude',
      redirect_uris: ['https://x/cb'],
      created_at: at,
    });
    expect(await s2.oauth.registered('dcr_1')).toMatchObject({ redirect_uris: ['https://x/cb'] });
    // Contract 15 (v4): only registrations the owner allowed count; the others can be listed and dropped.
    await s1.oauth.register({
      client_id: 'dcr_2',
      client_name: 'x',
      redirect_uris: ['https://x/cb'],
      created_at: at,
    });
    expect(await s2.oauth.registrationsSince(at)).toBe(0);
    expect(await s2.oauth.pendingRegistrations()).toEqual([
      { client_id: 'dcr_1', created_at: at },
      { client_id: 'dcr_2', created_at: at },
    ]);
    expect(await s1.oauth.completeRegistration('dcr_1', at)).toBe(true);
    expect(await s1.oauth.completeRegistration('dcr_none', at)).toBe(false);
    expect(await s2.oauth.registered('dcr_1')).toMatchObject({ completed_at: at });
    expect(await s2.oauth.registrationsSince(at)).toBe(1);
    await s2.oauth.dropRegistrations(['dcr_1', 'dcr_2']);
    expect(await s1.oauth.registered('dcr_1')).toBeDefined();
    expect(await s1.oauth.registered('dcr_2')).toBeUndefined();
    expect(await s1.oauth.pendingRegistrations()).toEqual([]);
    expect(await s1.oauth.nameUse('claude')).toEqual({ commands: 0, connections: 0 });
    const connection = {
      id: 'conn_1',
      client_name: 'claude',
      client_id: 'dcr_1',
      client_host: 'x',
      redirect_host: 'x',
      connected_at: at,
      last_used_at: at,
    };
    const token = (hash: string, kind: 'access' | 'refresh') =>
      ({
        hash,
        connection_id: 'conn_1',
        kind,
        state: 'live',
        expires_at: '2099-01-01T00:00:00.000Z',
      }) as const;
    await s1.oauth.connect(connection, [token('a0', 'access'), token('r0', 'refresh')], {
      at,
      actor: owner,
      action: 'oauth_client_connected',
      detail: { connection_id: 'conn_1' },
    });
    expect(await s2.oauth.token('r0')).toMatchObject({
      token: { state: 'live' },
      connection: { id: 'conn_1' },
    });
    for (let round = 1; round <= 5; round++) {
      const old = `r${round - 1}`;
      const won = await Promise.all([
        s1.oauth.rotate(old, [token(`a${round}`, 'access'), token(`r${round}`, 'refresh')], at),
        s2.oauth.rotate(old, [token(`a${round}b`, 'access'), token(`r${round}b`, 'refresh')], at),
      ]);
      expect(won.filter(Boolean)).toHaveLength(1);
      if (!won[0]) {
        // The other writer won: carry on from its refresh token.
        await s1.oauth.rotate(
          `r${round}b`,
          [token(`a${round}`, 'access'), token(`r${round}`, 'refresh')],
          at,
        );
      }
      expect((await s1.oauth.token(old))!.token.state).toBe('rotated');
    }
    await s1.oauth.touch('conn_1', '2026-11-30T12:00:00.000Z');
    expect(await s2.oauth.connections()).toMatchObject([
      { id: 'conn_1', last_used_at: '2026-11-30T12:00:00.000Z' },
    ]);
    expect(await s2.oauthClientNames()).toEqual(new Set(['claude']));
    const bye = {
      at,
      actor: owner,
      action: 'oauth_client_disconnected',
      detail: { connection_id: 'conn_1' },
    } as const;
    const ended = await Promise.all([
      s1.oauth.disconnect('conn_1', at, bye),
      s2.oauth.disconnect('conn_1', at, bye),
    ]);
    expect(ended.filter(Boolean)).toHaveLength(1);
    expect(await s1.oauth.connections()).toEqual([]);
    // A past connection still marks its name as used, and its commands stay in the history (what a new
    // connection of that name would inherit).
    for (const c of [command('claude'), command('claude'), command('other')])
      await s1.commands.insert(c, audit(c, 'submit'));
    expect(await s2.oauth.nameUse('claude')).toEqual({ commands: 2, connections: 1 });
    expect((await s1.oauth.token('a5'))!.token.state).toBe('revoked');
    const log = (await s1.audits.since(0)).map((e) => e.action);
    expect(log.filter((a) => a.startsWith('oauth_'))).toEqual([
      'oauth_client_connected',
      'oauth_client_disconnected',
    ]);
  });

  it('[c13.3.recorded] passkeys: add, get, list in order, remove only its owner’s, used, forget all on rotation, the recorded history', async () => {
    const s = await fresh();
    const key = (id: string, who = 'owner') => ({
      credential_id: id,
      owner: who,
      public_key: `pk_${id}`,
      rp_id: 'localhost',
      counter: 0,
      created_at: at,
    });
    const added = (id: string) =>
      ({ at, actor: owner, action: 'passkey_added', detail: { credential_id: id } }) as const;
    await s.passkeys.add({ ...key('k1'), transports: ['internal'] }, added('k1'));
    await s.passkeys.add(key('k2'), added('k2'));
    await s.passkeys.add(key('k3', 'alice'), added('k3'));
    await expect(s.passkeys.add(key('k1'), added('k1'))).rejects.toThrow();
    expect((await s.passkeys.list('owner')).map((p) => p.credential_id)).toEqual(['k1', 'k2']);
    expect(await s.passkeys.get('k1')).toEqual({ ...key('k1'), transports: ['internal'] });
    const removed = { at, actor: owner, action: 'passkey_removed', detail: {} } as const;
    expect(await s.passkeys.remove('owner', 'k3', removed)).toBe(false);
    expect(await s.passkeys.remove('owner', 'k2', removed)).toBe(true);
    expect(await s.passkeys.remove('owner', 'k2', removed)).toBe(false);
    await s.passkeys.used('k1', 7, '2026-11-30T12:00:00.000Z');
    expect(await s.passkeys.get('k1')).toMatchObject({
      counter: 7,
      last_used_at: '2026-11-30T12:00:00.000Z',
    });
    expect(await s.forgetPasskeys('alice', at, owner)).toBe(1);
    expect(await s.passkeys.list('alice')).toEqual([]);
    expect((await s.audits.since(0)).map((e) => [e.action, e.detail?.removed])).toEqual([
      ['passkey_added', undefined],
      ['passkey_added', undefined],
      ['passkey_added', undefined],
      ['passkey_removed', undefined],
      ['passkeys_removed', 1],
    ]);
    // [c13.3.recorded] the chain's key history, as core/model/passkey-ledger.ts reads it: chained entries only.
    expect((await s.passkeys.recorded()).map((e) => [e.event, e.data.credential_id ?? e.data.owner])).toEqual(
      [
        ['passkey_added', 'k1'],
        ['passkey_added', 'k2'],
        ['passkey_added', 'k3'],
        ['passkey_removed', undefined],
        ['passkeys_removed', 'alice'],
      ],
    );
  });

  it('push: put, an endpoint handed to another owner, all, remove once', async () => {
    const s = await fresh();
    const sub = (endpoint: string, who: string, created_at = at) => ({
      endpoint,
      keys: { p256dh: 'p', auth: 'a' },
      owner: who,
      created_at,
    });
    const ev = (action: 'push_subscribed' | 'push_unsubscribed') => ({
      at,
      actor: owner,
      action,
      detail: {},
    });
    await s.push.put(sub('https://push.example/1', 'owner'), ev('push_subscribed'));
    await s.push.put(
      sub('https://push.example/2', 'owner', '2026-11-30T10:00:01.000Z'),
      ev('push_subscribed'),
    );
    await s.push.put(sub('https://push.example/1', 'alice'), ev('push_subscribed'));
    expect(await s.push.all()).toEqual([
      sub('https://push.example/1', 'alice'),
      sub('https://push.example/2', 'owner', '2026-11-30T10:00:01.000Z'),
    ]);
    expect(await s.push.remove('https://push.example/1', ev('push_unsubscribed'))).toBe(true);
    expect(await s.push.remove('https://push.example/1', ev('push_unsubscribed'))).toBe(false);
    expect((await s.push.all()).map((x) => x.endpoint)).toEqual(['https://push.example/2']);
    expect((await s.audits.since(0)).map((e) => e.action)).toEqual([
      'push_subscribed',
      'push_subscribed',
      'push_subscribed',
      'push_unsubscribed',
    ]);
  });
});

describe('[c11.policy-test-same-command] the newest commands of one name are read through an index', () => {
  it('SQLite: the search by command uses commands_command_seq', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ogf-ports-plan-'));
    dirs.push(dir);
    const s = new Store(join(dir, 'broker.db'), { pollMs: 20 });
    try {
      expect(s.searchPlan({ command: 'mark' }).join('\n')).toMatch(/commands_command_seq/);
    } finally {
      s.close();
    }
  });

  it('PostgreSQL: the search by command uses commands_command_seq', async () => {
    const url = await pg!.createDatabase();
    const s = await PostgresStore.open(url, { max: 2 });
    try {
      // The query the search runs (search.ts), not a copy of its WHERE clause.
      const { sql, values } = searchQuery({ command: 'mark' }, undefined, 50, 1024);
      const raw = new pgClient.Client({ connectionString: url });
      await raw.connect();
      try {
        await raw.query('SET enable_seqscan = off');
        const plan = await raw.query(`EXPLAIN ${sql}`, values);
        expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/commands_command_seq/);
      } finally {
        await raw.end();
      }
    } finally {
      s.close();
      await s.closed();
    }
  });
});

describe('[c16.store-ports] the history search on PostgreSQL is served by its trigram index', () => {
  it('EXPLAIN of a text search names commands_search_trgm', async () => {
    const url = await pg!.createDatabase();
    const s = await PostgresStore.open(url, { max: 2 });
    try {
      const db = url.split('/').pop()!;
      expect(await pg!.sql(db, "SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'")).toBe('pg_trgm');
      const { sql, values } = searchQuery({ text: 'reports' }, undefined, 50, 1024);
      const raw = new pgClient.Client({ connectionString: url });
      await raw.connect();
      try {
        // A small table is cheaper to scan: the planner is told not to, so the index's use shows.
        await raw.query('SET enable_seqscan = off');
        const plan = await raw.query(`EXPLAIN ${sql}`, values);
        expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/commands_search_trgm/);
      } finally {
        await raw.end();
      }
    } finally {
      s.close();
      await s.closed();
    }
  });
});
