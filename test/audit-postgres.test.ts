/**
 * Contract 16 with 14: the audit chain shared on PostgreSQL, verified from any node — `ogf-broker audit
 * verify` reads the chain in the database (daemon running or not), each checkpoint checked under the keys
 * it trusts (this data dir's audit.pub, `--pub`, `--key`) and, named on a line of its own, under a key the
 * database's `nodes` table alone publishes; a checkpoint no known key verifies fails at its seq. Two nodes
 * write one chain: a real daemon (node A) and a second PostgresStore with its own data dir's key (node B,
 * as its daemon would). Then the attacks of test/audit-verify.test.ts, made in the database as an attacker
 * with its password would (the append-only triggers dropped): each found with the right seq and reason.
 * An export of the shared chain names each checkpoint's own signer and verifies on its own.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditPublicKeyText, keyFingerprint, loadOrCreateAuditKey, signerOf } from '../daemon/audit/index.js';
import { PostgresStore } from '../daemon/store/postgres/index.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { type Postgres, startPostgres } from './helpers/postgres.js';

let pg: Postgres;
let url: string;
let db: string;
let nodeA: string;
let nodeB: string;
let d: RunningDaemon | undefined;
/** The seq node B signed, and the tail node A signed at its clean stop. */
let signedByB = 0;
let tail = 0;

const at = (i: number) => new Date(Date.UTC(2026, 11, 2, 10, 0, i)).toISOString();

async function verify(dataDir: string, database: string, ...more: string[]) {
  const r = await runCli(['audit', 'verify', '--data-dir', dataDir, ...more], {
    OGF_BROKER_DATABASE_URL: pg.url(database),
  });
  return { code: r.code, out: r.stdout.trim(), err: r.stderr };
}

/** A copy of the shared database (PostgreSQL's template copy), for one attack. */
let copies = 0;
async function copyDatabase(): Promise<string> {
  const name = `attack${++copies}`;
  await pg.sql('postgres', `CREATE DATABASE ${name} TEMPLATE ${db}`);
  return name;
}

/** Edits the copy as an attacker with the database's password: the append-only triggers dropped first. */
async function tamper(database: string, sql: string): Promise<void> {
  await pg.sql(
    database,
    `DROP TRIGGER audit_no_update ON audit; DROP TRIGGER audit_no_delete ON audit;
     DROP TRIGGER audit_checkpoints_no_change ON audit_checkpoints; ${sql}`,
  );
}

beforeAll(async () => {
  pg = await startPostgres();
  url = await pg.createDatabase();
  db = url.split('/').pop()!;
  nodeA = makeDataDir('ogf-audit-pg-a-');
  nodeB = makeDataDir('ogf-audit-pg-b-');
  d = await startDaemon({ dataDir: nodeA, env: { OGF_BROKER_DATABASE_URL: url } });
}, 60_000);

afterAll(async () => {
  await d?.stop();
  await pg?.destroy();
});

describe('[c14.verify] [c16.postgres] audit verify on the shared PostgreSQL', () => {
  it('verifies the chain two nodes wrote, the daemon running or not; a checkpoint known only from `nodes` is named', async () => {
    const running = await verify(nodeA, db);
    expect(running.out, running.err).toMatch(
      /^ok: \d+ entries, 0 checkpoints, 0 passkey approvals verified$/,
    );
    expect(running.code).toBe(0);

    // Node B: its own data dir's key, its checkpoints in the same table, its key published in `nodes`.
    const keyB = loadOrCreateAuditKey(nodeB);
    const b = await PostgresStore.open(url, { max: 2, signer: signerOf(keyB) });
    const daemonActor = { kind: 'daemon' as const, name: 'daemon' };
    for (let i = 0; i < 12; i++)
      await b.audits.append({ at: at(i), actor: daemonActor, action: 'cue_refused' });
    signedByB = (await b.audits.checkpoint(at(12)))!.seq;
    for (let i = 13; i < 20; i++)
      await b.audits.append({ at: at(i), actor: daemonActor, action: 'cue_refused' });
    await b.close();
    await pg.sql(
      db,
      `INSERT INTO nodes (name, host, pid, version, started_at, heartbeat_at, stopped_at, audit_public_key)
       VALUES ('node-b', 'b.example', 1, '0.1.0', now(), now(), now(), '${auditPublicKeyText(keyB.publicKey)}')`,
    );

    expect(await d!.stop()).toBe(0); // node A signs the tail at its clean stop
    d = undefined;
    const stopped = await verify(nodeA, db);
    expect(stopped.code, stopped.out).toBe(0);
    const lines = stopped.out.split('\n');
    const m = /^ok: (\d+) entries, 2 checkpoints, 0 passkey approvals verified$/.exec(lines[0]!);
    expect(m, stopped.out).not.toBeNull();
    tail = Number(m![1]);
    expect(tail).toBeGreaterThan(signedByB);
    expect(lines.slice(1)).toEqual([
      `1 checkpoints (seq ${signedByB}) signed by node node-b (key fingerprint ${keyFingerprint(keyB.publicKey)}) known only from the database; pin it with --key FILE (a copy of that node's \`ogf-broker audit key\`)`,
    ]);

    // Pinned with --key (B's audit.pub): nothing left to name.
    const pinned = await verify(nodeA, db, '--key', join(nodeB, 'audit.pub'));
    expect(pinned.out).toBe(`ok: ${tail} entries, 2 checkpoints, 0 passkey approvals verified`);
    // From node B's data dir: A's key is the one known only from the database (each node publishes its
    // own audit key in `nodes` at its start, contract 16), so A's checkpoints verify and are named.
    const fromB = await verify(nodeB, db);
    expect(fromB.code, fromB.out).toBe(0);
    // (A fingerprint is base64: `+` and `/` are not for a RegExp.)
    expect(fromB.out).toContain(
      `(key fingerprint ${keyFingerprint(loadOrCreateAuditKey(nodeA).publicKey)}) known only from the database`,
    );
    expect((await verify(nodeB, db, '--key', join(nodeA, 'audit.pub'))).code).toBe(0);
  });

  it('a checkpoint whose signer no longer has a key in `nodes` fails at its seq', async () => {
    const copy = await copyDatabase();
    await pg.sql(copy, "UPDATE nodes SET audit_public_key = NULL WHERE name = 'node-b'");
    const v = await verify(nodeA, copy);
    expect(v.out).toMatch(new RegExp(`^seq ${signedByB}: bad checkpoint signature`));
    expect(v.code).toBe(1);
  });

  it('finds an edit, a deletion, a swapped pair, a tail cut below a checkpoint and a forged checkpoint in the database', async () => {
    const cases: Array<[string, string, string]> = [
      [
        'edit',
        `UPDATE audit SET entry = replace(entry, '"actor":"', '"actor":"x') WHERE seq = 3`,
        'seq 3: edited',
      ],
      [
        'edit the hash too',
        "UPDATE audit SET hash = substr(hash, 1, 63) || (CASE WHEN substr(hash, 64, 1) = '0' THEN '1' ELSE '0' END) WHERE seq = 5",
        'seq 5: edited',
      ],
      ['delete', 'DELETE FROM audit WHERE seq = 6', 'seq 6: missing'],
      [
        'swap',
        `UPDATE audit SET entry = o.entry, hash = o.hash FROM audit o
           WHERE (audit.seq, o.seq) IN ((8, 9), (9, 8))`,
        'seq 8: reordered',
      ],
      ['cut the tail', `DELETE FROM audit WHERE seq > ${tail - 3}`, `seq ${tail - 2}: missing`],
      [
        'forge a checkpoint',
        `UPDATE audit_checkpoints SET at = '2030-01-01T00:00:00.000Z' WHERE seq = ${signedByB}`,
        `seq ${signedByB}: bad checkpoint signature`,
      ],
    ];
    for (const [name, sql, want] of cases) {
      const copy = await copyDatabase();
      await tamper(copy, sql);
      const v = await verify(nodeA, copy, '--key', join(nodeB, 'audit.pub'));
      expect(v.out.startsWith(want), `${name}: ${v.out}`).toBe(true);
      expect(v.code, name).toBe(1);
    }
  });

  it('exports the shared chain with each checkpoint’s own signer; the file verifies on its own and against both keys', async () => {
    const ex = await runCli(['audit', 'export', '--data-dir', nodeA], { OGF_BROKER_DATABASE_URL: url });
    expect(ex.code, ex.stderr).toBe(0);
    const lines = ex.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(tail + 2);
    const keys = lines.slice(tail).map((l) => (JSON.parse(l) as { public_key: string }).public_key);
    expect(new Set(keys).size).toBe(2);
    const file = join(mkdtempSync(join(tmpdir(), 'ogf-export-')), 'audit.jsonl');
    writeFileSync(file, ex.stdout);
    const own = await runCli(['audit', 'verify', '--file', file]);
    expect(own.stdout.trim()).toBe(`ok: ${tail} entries, 2 checkpoints, 0 passkey approvals verified`);
    const both = await runCli([
      'audit',
      'verify',
      '--file',
      file,
      '--pub',
      join(nodeA, 'audit.pub'),
      '--key',
      join(nodeB, 'audit.pub'),
    ]);
    expect(both.code, both.stdout).toBe(0);
    const onlyA = await runCli(['audit', 'verify', '--file', file, '--pub', join(nodeA, 'audit.pub')]);
    expect(onlyA.stdout).toMatch(new RegExp(`^seq ${signedByB}: bad checkpoint signature`));
  });

  it('says why when the database holds no chain or cannot be reached (exit 2, never the URL)', async () => {
    const empty = (await pg.createDatabase()).split('/').pop()!;
    const none = await verify(nodeA, empty);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/the shared database holds no audit chain/);
    const gone = await runCli(['audit', 'verify', '--data-dir', nodeA], {
      OGF_BROKER_DATABASE_URL: 'postgres://broker:s3cret@127.0.0.1:1/ogf',
    });
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/the shared database cannot be read/);
    expect(gone.stderr).not.toMatch(/s3cret/);
  });
});
