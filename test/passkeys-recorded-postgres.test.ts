/**
 * Issue 35 finding 2 on a shared PostgreSQL (contracts 13.3 (v4), 16): the passkey path reads the chain from
 * the database there (store/postgres/passkeys.ts `recorded`), so the attack of test/passkeys-recorded.test.ts
 * is made again against it — a key inserted into the `passkeys` table with the database's password, used,
 * deleted: refused, while the owner's own key (added in the panel) approves. And a database of the previous
 * version has the passkeys it holds taken into the chain at the first start of this one, once.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../daemon/store/postgres/schema.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';
import { panelLogin, panelProtocols } from './helpers/panel.js';
import { type Postgres, startPostgres } from './helpers/postgres.js';
import { SoftAuthenticator } from './helpers/soft-authenticator.js';

let pg: Postgres;
let url: string;
let db: string;
let dataDir: string;
let markFile: string;

function config(): Record<string, unknown> {
  const base = ownerCatalog(markFile) as { commands: Record<string, Record<string, unknown>> };
  const mark = base.commands.mark!;
  return { commands: { mark, vault: { ...mark, description: 'Vault (passkey)', require_passkey: true } } };
}

let nextReq = 1;
async function ask(s: OwnerSocket, frame: Frame): Promise<Frame> {
  const req_id = `p${nextReq++}`;
  s.ws.send(JSON.stringify({ ...frame, req_id }));
  return s.waitFor((f) => f.req_id === req_id, `answer to ${frame.type}`);
}

async function openPanel(d: RunningDaemon): Promise<OwnerSocket> {
  const login = await panelLogin(d);
  const origin = d.url.replace('127.0.0.1', 'localhost');
  return OwnerSocket.open(d, { Cookie: login.cookie, Origin: origin }, panelProtocols(login.key));
}

async function approveWith(
  s: OwnerSocket,
  key: SoftAuthenticator,
  id: string,
  origin: string,
): Promise<Frame> {
  const ch = await ask(s, { type: 'approve_challenge', id, version: 1 });
  expect(ch.type).toBe('approve_challenge');
  return ask(s, { type: 'approve', id, version: 1, assertion: key.assert(ch.challenge, { origin }) });
}

const start = () => startDaemon({ dataDir, config: config(), env: { OGF_BROKER_DATABASE_URL: url } });
const insertKey = (k: SoftAuthenticator) =>
  pg.sql(
    db,
    `INSERT INTO passkeys (credential_id, owner, public_key, rp_id, counter, created_at)
     VALUES ('${k.id}', 'owner', '${k.publicKey}', 'localhost', 0, '${new Date().toISOString()}')`,
  );

beforeAll(async () => {
  pg = await startPostgres();
  url = await pg.createDatabase();
  db = url.split('/').pop()!;
  dataDir = makeDataDir('ogf-passkeys-pg-');
  markFile = join(dataDir, 'marks.txt');
}, 60_000);

afterAll(async () => {
  await pg?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('[c16.postgres] passkeys the chain added, on PostgreSQL (contract 13.3 (v4))', () => {
  it('[c13.3.recorded] [attack] a key inserted into the database, used, deleted: refused; the owner’s own key approves', async () => {
    const d = await start();
    const origin = d.url.replace('127.0.0.1', 'localhost');
    const panel = await openPanel(d);
    const ai = await mcpClient(d);
    try {
      const mine = new SoftAuthenticator('localhost', origin);
      const begun = await ask(panel, { type: 'passkey_begin' });
      expect(
        await ask(panel, { type: 'passkey_finish', response: mine.register(begun.options.challenge) }),
      ).toMatchObject({ ok: true });
      const id = await queue(ai, 'vault', { word: 'pgforged' });
      await panel.view(id, (v) => v.state === 'awaiting_review', 'waiting');
      const theirs = new SoftAuthenticator('localhost', origin);
      await insertKey(theirs);
      const forged = await approveWith(panel, theirs, id, origin);
      expect(forged).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
      expect(forged.error.message).toContain('not in the audit record');
      await pg.sql(db, `DELETE FROM passkeys WHERE credential_id = '${theirs.id}'`);
      expect(readMarks(markFile)).not.toContain('pgforged');
      expect(await approveWith(panel, mine, id, origin)).toMatchObject({ ok: true });
      await panel.view(id, (v) => v.state === 'succeeded', 'ran');
    } finally {
      await ai.close();
      await panel.close();
      await d.stop();
    }
    const v = await runCli(['audit', 'verify', '--data-dir', dataDir], { OGF_BROKER_DATABASE_URL: url });
    expect(v.stdout).toMatch(/^ok: \d+ entries, \d+ checkpoints, 1 passkey approvals verified$/m);
  });

  it('[c13.3.recorded] a passkey the previous version left in the database is taken into the chain once; it then approves', async () => {
    // As the previous version left it: a passkey row whose add entry carried no key, this migration not run.
    const old = new SoftAuthenticator('localhost');
    await insertKey(old);
    const step = MIGRATIONS.findIndex((m) => m.includes('audit_passkeys'));
    expect(step).toBeGreaterThan(0);
    await pg.sql(db, `DELETE FROM ogf_broker_migrations WHERE version > ${step}`);
    const d = await start();
    const origin = d.url.replace('127.0.0.1', 'localhost');
    const panel = await openPanel(d);
    const ai = await mcpClient(d);
    try {
      const taken = await pg.sql(
        db,
        "SELECT entry FROM audit WHERE action = 'passkey_added' AND hash IS NOT NULL ORDER BY seq",
      );
      // Only the row no keyed entry named was taken in (the owner's key from the test above already was).
      const entries = taken.split('\n').filter((l) => l.includes('taken_at_upgrade'));
      expect(entries).toHaveLength(1);
      expect(entries[0]).toContain(old.id);
      const id = await queue(ai, 'vault', { word: 'pgupgraded' });
      await panel.view(id, (v) => v.state === 'awaiting_review', 'waiting');
      expect(await approveWith(panel, old, id, origin)).toMatchObject({ ok: true });
      await panel.view(id, (v) => v.state === 'succeeded', 'ran');
    } finally {
      await ai.close();
      await panel.close();
      await d.stop();
    }
    const v = await runCli(['audit', 'verify', '--data-dir', dataDir], { OGF_BROKER_DATABASE_URL: url });
    expect(v.stdout).toMatch(/^ok: \d+ entries, \d+ checkpoints, 2 passkey approvals verified$/m);
  });
});
