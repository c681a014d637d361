/**
 * Contract 14 (v4) with 16: on the shared PostgreSQL, `audit verify` (OGF_BROKER_DATABASE_URL set) checks
 * the commands table against the chain in the database, in the walk's snapshot. The attack of issue 35
 * finding 6 made as an attacker with the database's password would (a copy of the database per attack):
 * a rule-denied `deploy prod` rewritten to read "staging, denied by owner", and an approval entry's
 * `command_id` column moved to another card. Before the fix both said ok.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { deployConfig } from './helpers/history.js';
import { callTool, mcpClient, OwnerSocket } from './helpers/owner.js';
import { type Postgres, startPostgres } from './helpers/postgres.js';

let pg: Postgres;
let db: string;
let dataDir: string;
let d: RunningDaemon | undefined;
const ids: Record<string, string> = {};

async function verify(database: string) {
  const r = await runCli(['audit', 'verify', '--data-dir', dataDir], {
    OGF_BROKER_DATABASE_URL: pg.url(database),
  });
  return { code: r.code, out: r.stdout.trim(), lines: r.stdout.trim().split('\n'), err: r.stderr };
}

let copies = 0;
/** A copy of the shared database with `sql` run in it as the attacker. */
async function tampered(sql: string): Promise<string> {
  const name = `history${++copies}`;
  await pg.sql('postgres', `CREATE DATABASE ${name} TEMPLATE ${db}`);
  await pg.sql(name, sql);
  return name;
}

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase();
  db = url.split('/').pop()!;
  dataDir = makeDataDir('ogf-history-pg-');
  d = await startDaemon({ dataDir, config: deployConfig(), env: { OGF_BROKER_DATABASE_URL: url } });
  const ai = await mcpClient(d);
  const owner = await OwnerSocket.open(d);
  try {
    const prod = await callTool(ai, 'run_command_wait', {
      command: 'deploy',
      args: { env: 'prod' },
      wait_seconds: 0,
    });
    expect(prod).toMatchObject({ status: 'DENIED', reason: 'PolicyDenied' });
    ids.prod = prod.pending_id as string;
    for (const name of ['approved', 'denied']) {
      const r = await callTool(ai, 'run_command_wait', {
        command: 'deploy',
        args: { env: 'staging' },
        wait_seconds: 0,
      });
      ids[name] = r.pending_id as string;
      await owner.view(ids[name]!, (v) => v.version === 1, `${name} waiting`);
    }
    await owner.request({ type: 'approve', id: ids.approved, version: 1 });
    await owner.request({ type: 'deny', id: ids.denied, version: 1 });
    await owner.view(ids.approved!, (v) => v.status === 'SUCCEEDED', 'ran');
  } finally {
    await owner.close();
    await ai.close();
  }
  expect(await d.stop()).toBe(0);
  d = undefined;
}, 90_000);

afterAll(async () => {
  await d?.stop();
  await pg?.destroy();
});

describe('[c14.history] [c16.postgres] the history in the shared database against its chain', () => {
  it('an untouched database verifies', async () => {
    const v = await verify(db);
    expect(v.out, v.err).toMatch(/^ok: \d+ entries, \d+ checkpoints, 0 passkey approvals verified$/);
    expect(v.code).toBe(0);
  });

  it('a rule-denied `deploy prod` rewritten as `staging`, denied by owner: mismatch on each field', async () => {
    const copy = await tampered(
      `UPDATE commands SET body = jsonb_set(jsonb_set(jsonb_set(jsonb_set(body::jsonb,
         '{args}', '{"env":"staging"}'), '{phase,reason}', '"OwnerDenied"'), '{phase,decided_by}', '"owner"'),
         '{display}', (SELECT jsonb_agg(CASE WHEN x = 'prod' THEN 'staging' ELSE x END)
                       FROM jsonb_array_elements_text(body::jsonb -> 'display') AS x))::text
       WHERE id = '${ids.prod}'`,
    );
    const v = await verify(copy);
    expect(v.lines, v.err).toEqual([
      `mismatch: ${ids.prod}: reason`,
      `mismatch: ${ids.prod}: decided_by`,
      `mismatch: ${ids.prod}: args`,
      `mismatch: ${ids.prod}: display`,
    ]);
    expect(v.code).toBe(1);
  });

  it('an approval entry moved to another card by its command_id column', async () => {
    const copy = await tampered(
      `DROP TRIGGER audit_no_update ON audit;
       UPDATE audit SET command_id = '${ids.denied}' WHERE command_id = '${ids.approved}' AND action = 'approve'`,
    );
    const v = await verify(copy);
    expect(v.lines, v.err).toEqual([
      `mismatch: ${ids.approved}: command_id`,
      `mismatch: ${ids.denied}: command_id`,
    ]);
    expect(v.code).toBe(1);
  });
});
