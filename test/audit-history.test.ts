/**
 * Contract 14 (v4), issue 35 finding 6: `audit verify --data-dir` checks that what the history shows agrees
 * with the chain. The attacks are run as the reported one was: code running as the owner's user, no key,
 * raw SQL into broker.db of a stopped daemon (a copy per attack), then `audit verify --pub <an off-machine
 * copy of audit.pub>`. Before the fix each said `ok`; now each is `mismatch: <command id>: <field>`, exit 1.
 * An untouched record — with a command the retention rule pruned — still verifies.
 */
import { copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { deployConfig, LONG } from './helpers/history.js';
import { callTool, mcpClient, OwnerSocket } from './helpers/owner.js';

const DAY = 86_400_000;

let d: RunningDaemon;
let dataDir: string;
/** An off-machine copy of audit.pub (what a `checkpoint` notification carried away). */
let pub: string;
const ids: Record<string, string> = {};

async function ask(
  ai: Client,
  command: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return callTool(ai, 'run_command_wait', { command, args, wait_seconds: 0 });
}

/** Moves a command's times back by `ms` (the retention rule reads the real clock: retention.test.ts). */
function age(dir: string, id: string, ms: number): void {
  const db = new Database(join(dir, 'broker.db'));
  try {
    const { body } = db.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string };
    const c = JSON.parse(body) as Record<string, unknown> & { phase: Record<string, unknown> };
    const back = (t: unknown) => new Date(Date.parse(String(t)) - ms).toISOString();
    c.created_at = back(c.created_at);
    c.review_expires_at = back(c.review_expires_at);
    for (const k of ['decided_at', 'started_at', 'finished_at'])
      if (k in c.phase) c.phase[k] = back(c.phase[k]);
    db.prepare('UPDATE commands SET created_at = ?, body = ? WHERE id = ?').run(
      c.created_at,
      JSON.stringify(c),
      id,
    );
  } finally {
    db.close();
  }
}

/** Whether the retention rule pruned `id` in the running daemon's broker.db (read-only, beside it). */
function prunedBody(dir: string, id: string): boolean {
  const db = new Database(join(dir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string };
    return (JSON.parse(row.body) as { pruned?: unknown }).pruned !== undefined;
  } finally {
    db.close();
  }
}

/** A copy of the stopped daemon's record, for one attack. */
function copyRecord(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ogf-history-attack-'));
  for (const f of ['broker.db', 'broker.db-wal', 'audit.pub']) {
    if (existsSync(join(dataDir, f))) copyFileSync(join(dataDir, f), join(dir, f));
  }
  return dir;
}

type Row = Record<string, unknown> & {
  id: string;
  args: Record<string, unknown>;
  phase: Record<string, unknown>;
};

/** The attacker's tools: broker.db opened with SQLite, a command's body rewritten (and its state column). */
function tamper(dir: string, fn: (db: Database.Database) => void): void {
  const db = new Database(join(dir, 'broker.db'));
  try {
    fn(db);
  } finally {
    db.close();
  }
}

function rewrite(db: Database.Database, id: string, change: (c: Row) => void): void {
  const { body } = db.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string };
  const c = JSON.parse(body) as Row;
  change(c);
  db.prepare('UPDATE commands SET state = ?, body = ? WHERE id = ?').run(
    c.phase.state,
    JSON.stringify(c),
    id,
  );
}

async function verify(dir: string) {
  const r = await runCli(['audit', 'verify', '--data-dir', dir, '--pub', pub]);
  return { code: r.code, out: r.stdout.trim(), lines: r.stdout.trim().split('\n') };
}

beforeAll(async () => {
  dataDir = makeDataDir('ogf-audit-history-');
  d = await startDaemon({ dataDir, config: deployConfig() });
  const ai = await mcpClient(d);
  const owner = await OwnerSocket.open(d);
  try {
    const prod = await ask(ai, 'deploy', { env: 'prod' });
    expect(prod).toMatchObject({ status: 'DENIED', reason: 'PolicyDenied' });
    ids.prod = prod.pending_id as string;
    for (const name of ['approved', 'denied', 'big'] as const) {
      const r = await ask(
        ai,
        name === 'big' ? 'big' : 'deploy',
        name === 'big' ? { tag: 'one', text: LONG } : { env: 'staging' },
      );
      ids[name] = r.pending_id as string;
      await owner.view(ids[name]!, (v) => v.version === 1, `${name} waiting`);
    }
    await owner.request({ type: 'approve', id: ids.approved, version: 1 });
    await owner.request({ type: 'deny', id: ids.denied, version: 1, note: 'not today' });
    await owner.request({ type: 'approve', id: ids.big, version: 1 });
    for (const id of [ids.approved!, ids.big!]) await owner.view(id, (v) => v.status === 'SUCCEEDED', 'ran');
  } finally {
    await owner.close();
    await ai.close();
  }
  await d.stop();
  // The retention rule prunes `big`'s long argument at the next start (it passes rows in creation order and
  // stops at the first young one: every command is aged).
  for (const id of Object.values(ids)) age(dataDir, id, 8 * DAY);
  d = await startDaemon({ dataDir });
  await waitFor(() => prunedBody(dataDir, ids.big!), 'big pruned', 30_000);
  expect(await d.stop()).toBe(0);
  pub = join(mkdtempSync(join(tmpdir(), 'ogf-offsite-')), 'audit.pub');
  copyFileSync(join(dataDir, 'audit.pub'), pub);
}, 120_000);

afterAll(async () => {
  await d?.stop();
});

describe('[c14.history] audit verify checks the history against the chain', () => {
  it('an untouched record verifies: a rule denial, owner decisions and a pruned argument are no mismatch', async () => {
    const v = await verify(dataDir);
    expect(v.out).toMatch(/^ok: \d+ entries, \d+ checkpoints, 0 passkey approvals verified$/);
    expect(v.code).toBe(0);
  });

  it('(a) a rule-denied `deploy prod` rewritten as `staging`, denied by owner: mismatch on each field', async () => {
    const dir = copyRecord();
    tamper(dir, (db) =>
      rewrite(db, ids.prod!, (c) => {
        c.args = { env: 'staging' };
        c.display = (c.display as string[]).map((s) => (s === 'prod' ? 'staging' : s));
        c.phase = {
          ...c.phase,
          state: 'denied',
          reason: 'OwnerDenied',
          detail: 'The owner denied the command.',
          decided_by: 'owner',
        };
        delete c.phase.owner_note;
      }),
    );
    const v = await verify(dir);
    expect(v.lines).toEqual([
      `mismatch: ${ids.prod}: reason`,
      `mismatch: ${ids.prod}: decided_by`,
      `mismatch: ${ids.prod}: args`,
      `mismatch: ${ids.prod}: display`,
    ]);
    expect(v.code).toBe(1);
  });

  it('(a) each field alone: state, reason, decided_by, args, display', async () => {
    const cases: Array<[string, string, (c: Row) => void]> = [
      [
        'state',
        ids.denied!,
        (c) => {
          c.phase.state = 'succeeded';
        },
      ],
      [
        'reason',
        ids.denied!,
        (c) => {
          c.phase.reason = 'ReviewExpired';
        },
      ],
      [
        'decided_by',
        ids.approved!,
        (c) => {
          c.phase.decided_by = 'rule:release';
        },
      ],
      [
        'args',
        ids.approved!,
        (c) => {
          c.args = { env: 'prod' };
        },
      ],
      [
        'display',
        ids.approved!,
        (c) => {
          c.display = ['deploy', 'prod'];
        },
      ],
      // The pruned command's argument that was kept is still checked (the prune entry's digest).
      [
        'args',
        ids.big!,
        (c) => {
          c.args = { ...c.args, tag: 'two' };
        },
      ],
    ];
    for (const [field, id, change] of cases) {
      const dir = copyRecord();
      tamper(dir, (db) => rewrite(db, id, change));
      const v = await verify(dir);
      expect(v.lines, field).toEqual([`mismatch: ${id}: ${field}`]);
      expect(v.code, field).toBe(1);
    }
  }, 60_000);

  it('(b) the commands table’s ids swapped: each card shows the other’s history', async () => {
    const dir = copyRecord();
    tamper(dir, (db) => {
      const [a, b] = [ids.approved!, ids.denied!];
      db.prepare('UPDATE commands SET id = ? WHERE id = ?').run('swap', a);
      rewrite(db, b, (c) => {
        c.id = a;
      });
      db.prepare('UPDATE commands SET id = ? WHERE id = ?').run(a, b);
      rewrite(db, 'swap', (c) => {
        c.id = b;
      });
      db.prepare('UPDATE commands SET id = ? WHERE id = ?').run(b, 'swap');
    });
    const v = await verify(dir);
    expect(v.lines).toContain(`mismatch: ${ids.approved}: state`);
    expect(v.lines).toContain(`mismatch: ${ids.denied}: state`);
    expect(v.code).toBe(1);
  });

  it('(b) an approval entry moved to another card (the audit row’s command_id column)', async () => {
    const dir = copyRecord();
    tamper(dir, (db) => {
      db.exec('DROP TRIGGER audit_no_update');
      db.prepare("UPDATE audit SET command_id = ? WHERE command_id = ? AND action = 'approve'").run(
        ids.denied,
        ids.approved,
      );
    });
    const v = await verify(dir);
    expect(v.lines).toEqual([`mismatch: ${ids.approved}: command_id`, `mismatch: ${ids.denied}: command_id`]);
    expect(v.code).toBe(1);
  });

  it('(b) a command row inserted by hand, and a row whose body names another id', async () => {
    const dir = copyRecord();
    tamper(dir, (db) => {
      const row = db.prepare('SELECT * FROM commands WHERE id = ?').get(ids.approved) as Record<
        string,
        unknown
      >;
      const body = JSON.parse(String(row.body)) as Row;
      body.id = 'c_forgedForgedForged1';
      db.prepare(
        'INSERT INTO commands (id, client, request_id, state, version, created_at, body) VALUES (?, ?, NULL, ?, ?, ?, ?)',
      ).run(body.id, row.client, row.state, row.version, row.created_at, JSON.stringify(body));
      rewrite(db, ids.denied!, (c) => {
        c.id = ids.prod!;
      });
    });
    const v = await verify(dir);
    expect(v.lines).toEqual([
      `mismatch: ${ids.denied}: command_id`,
      'mismatch: c_forgedForgedForged1: command_id',
    ]);
    expect(v.code).toBe(1);
  });
});
