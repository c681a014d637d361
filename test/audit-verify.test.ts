/**
 * `ogf-broker audit verify | export | key` against a real daemon's record (contract 14), and the attacks
 * it exists for, run as an attacker with the data dir would: open broker.db with SQLite, drop the
 * append-only triggers, then edit an entry, delete one, swap two, cut the tail below a checkpoint, forge a
 * checkpoint, or rewrite the whole chain and re-sign it with a key of their own. Each is found with the
 * right seq and reason — in the database and in an export file. Any single byte changed in any exported
 * line is found (a property test over random lines, positions and bytes).
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainFromExport, verifyChain } from '../daemon/audit/index.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let dataDir: string;
let ids: string[] = [];
let tail = 0;

async function history(n: number): Promise<string[]> {
  const owner = await OwnerSocket.open(d);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await queue(ai, 'mark', { word: `w${i}` });
    await owner.view(id, (v) => v.version === 1, `${id} waiting`);
    await owner.request({ type: 'approve', id, version: 1 });
    await owner.view(id, (v) => v.status === 'SUCCEEDED', `${id} ran`);
    out.push(id);
  }
  await owner.close();
  return out;
}

/** A copy of the data dir's record and keys, for one attack. */
function copyRecord(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ogf-attack-'));
  for (const f of ['broker.db', 'broker.db-wal', 'audit.key', 'audit.pub']) {
    if (existsSync(join(dataDir, f))) copyFileSync(join(dataDir, f), join(dir, f));
  }
  return dir;
}

/** Opens broker.db as the attacker does: SQLite, triggers dropped. */
function tamper(dir: string, fn: (db: Database.Database) => void): void {
  const db = new Database(join(dir, 'broker.db'));
  db.exec('DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;');
  db.exec('DROP TRIGGER audit_checkpoints_no_update; DROP TRIGGER audit_checkpoints_no_delete;');
  fn(db);
  db.close();
}

async function verifyDir(dir: string, ...more: string[]) {
  const r = await runCli(['audit', 'verify', '--data-dir', dir, ...more]);
  return { code: r.code, out: r.stdout.trim(), err: r.stderr };
}

async function verifyFile(text: string, ...more: string[]) {
  const file = join(mkdtempSync(join(tmpdir(), 'ogf-export-')), 'audit.jsonl');
  writeFileSync(file, text);
  const r = await runCli(['audit', 'verify', '--file', file, ...more]);
  return { code: r.code, out: r.stdout.trim() };
}

beforeAll(async () => {
  dataDir = makeDataDir('ogf-audit-verify-');
  d = await startDaemon({ dataDir, config: ownerCatalog(join(dataDir, 'marks.txt')) });
  ai = await mcpClient(d);
  ids = await history(4);
}, 60_000);

afterAll(async () => {
  await ai?.close();
  await d?.stop();
});

describe('[c14.verify] audit key, verify and export', () => {
  it('verifies while the daemon runs, and prints the key it made at the first start', async () => {
    expect(statSync(join(dataDir, 'audit.key')).mode & 0o777).toBe(0o600);
    const key = await runCli(['audit', 'key', '--data-dir', dataDir]);
    expect(key.code).toBe(0);
    expect(key.stdout).toBe(readFileSync(join(dataDir, 'audit.pub'), 'utf8'));
    expect(key.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const v = await verifyDir(dataDir);
    expect(v.out).toMatch(/^ok: \d+ entries, 0 checkpoints, 0 passkey approvals verified$/);
    expect(v.code).toBe(0);
  });

  it('a clean stop signs a checkpoint at the tail; the record verifies without the daemon', async () => {
    await ai.close();
    expect(await d.stop()).toBe(0);
    const v = await verifyDir(dataDir);
    expect(v.code, v.out).toBe(0);
    const m = /^ok: (\d+) entries, 1 checkpoints, 0 passkey approvals verified$/.exec(v.out);
    expect(m, v.out).not.toBeNull();
    tail = Number(m![1]);
    expect(tail).toBeGreaterThan(16);
  });

  it('refuses bad flags with exit 2 naming the field', async () => {
    for (const args of [
      ['audit'],
      ['audit', 'frobnicate'],
      ['audit', 'export', '--data-dir', dataDir, '--format', 'xml'],
      ['audit', 'export', '--data-dir', dataDir, '--since', 'yesterday'],
      ['audit', 'verify', '--data-dir', dataDir, '--file', '/nonexistent'],
      ['audit', 'verify', '--file', '/nonexistent/export.jsonl'],
      ['audit', 'verify', '--data-dir', dataDir, '--pub', '/etc/hostname'],
    ]) {
      const r = await runCli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/^ogf-broker: .*(audit|--format|--since|--file|--pub)/);
    }
  });

  it('finds an edit, a deletion, a swapped pair, a tail cut below a checkpoint and a forged checkpoint in broker.db', async () => {
    const cases: Array<[string, (db: Database.Database) => void, string]> = [
      [
        'edit',
        (db) => db.exec("UPDATE audit SET entry = replace(entry, 'mark', 'mork') WHERE seq = 7"),
        'seq 7: edited',
      ],
      [
        'edit the hash too',
        (db) =>
          db.exec(
            "UPDATE audit SET hash = substr(hash, 1, 63) || (CASE WHEN substr(hash, 64, 1) = '0' THEN '1' ELSE '0' END) WHERE seq = 5",
          ),
        'seq 5: edited',
      ],
      ['delete', (db) => db.exec('DELETE FROM audit WHERE seq = 6'), 'seq 6: missing'],
      [
        'swap',
        (db) => {
          const a = db.prepare('SELECT entry, hash FROM audit WHERE seq = 8').get() as {
            entry: string;
            hash: string;
          };
          const b = db.prepare('SELECT entry, hash FROM audit WHERE seq = 9').get() as {
            entry: string;
            hash: string;
          };
          db.prepare('UPDATE audit SET entry = ?, hash = ? WHERE seq = 8').run(b.entry, b.hash);
          db.prepare('UPDATE audit SET entry = ?, hash = ? WHERE seq = 9').run(a.entry, a.hash);
        },
        'seq 8: reordered',
      ],
      [
        'cut the tail',
        (db) => db.exec(`DELETE FROM audit WHERE seq > ${tail - 3}`),
        `seq ${tail - 2}: missing`,
      ],
      [
        'forge a checkpoint',
        (db) => db.exec(`UPDATE audit_checkpoints SET at = '2030-01-01T00:00:00.000Z' WHERE seq = ${tail}`),
        `seq ${tail}: bad checkpoint signature`,
      ],
    ];
    for (const [name, fn, want] of cases) {
      const dir = copyRecord();
      tamper(dir, fn);
      const v = await verifyDir(dir);
      expect(v.out.startsWith(want), `${name}: ${v.out}`).toBe(true);
      expect(v.code, name).toBe(1);
    }
  });

  it('finds a chain rewritten from seq 5 on and re-signed with the attacker’s key, against the owner’s copy of audit.pub', async () => {
    const ownersCopy = join(mkdtempSync(join(tmpdir(), 'ogf-pub-')), 'audit.pub');
    copyFileSync(join(dataDir, 'audit.pub'), ownersCopy);
    const dir = copyRecord();
    const attacker = generateKeyPairSync('ed25519');
    tamper(dir, (db) => {
      const rows = db.prepare('SELECT seq, entry, hash FROM audit ORDER BY seq').all() as Array<{
        seq: number;
        entry: string;
        hash: string;
      }>;
      let prev = rows[3]!.hash;
      for (const r of rows.slice(4)) {
        const e = JSON.parse(r.entry) as Record<string, unknown>;
        if (r.seq === 5) e.actor = 'someone-else';
        e.prev = prev;
        const text = canonicalize(e)!;
        prev = require('node:crypto').createHash('sha256').update(text).digest('hex') as string;
        db.prepare('UPDATE audit SET entry = ?, hash = ? WHERE seq = ?').run(text, prev, r.seq);
      }
      const at = '2026-12-01T00:00:00.000Z';
      const sig = sign(
        null,
        Buffer.from(canonicalize({ seq: tail, hash: prev, at })!),
        attacker.privateKey,
      ).toString('base64');
      db.prepare('UPDATE audit_checkpoints SET hash = ?, at = ?, signature = ? WHERE seq = ?').run(
        prev,
        at,
        sig,
        tail,
      );
    });
    writeFileSync(join(dir, 'audit.pub'), attacker.publicKey.export({ type: 'spki', format: 'pem' }));
    // With the data dir's own (replaced) audit.pub everything "verifies": the honest limit, docs/audit.md.
    expect((await verifyDir(dir)).code).toBe(0);
    const v = await verifyDir(dir, '--pub', ownersCopy);
    expect(v.out).toMatch(new RegExp(`^seq ${tail}: bad checkpoint signature`));
    expect(v.code).toBe(1);
  });

  it('exports JSONL that verifies on its own, and finds each attack on the file', async () => {
    const ex = await runCli(['audit', 'export', '--data-dir', dataDir]);
    expect(ex.code).toBe(0);
    const lines = ex.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(tail + 1);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: 'checkpoint', seq: tail });
    expect((await verifyFile(ex.stdout)).out).toBe(
      `ok: ${tail} entries, 1 checkpoints, 0 passkey approvals verified`,
    );
    const pub = join(dataDir, 'audit.pub');
    expect((await verifyFile(ex.stdout, '--pub', pub)).code).toBe(0);
    const join_ = (ls: string[]) => `${ls.join('\n')}\n`;
    const edited = [...lines];
    edited[6] = edited[6]!.replace('"mark"', '"mork"');
    const swapped = [...lines];
    [swapped[7], swapped[8]] = [swapped[8]!, swapped[7]!];
    const forged = [...lines];
    forged[tail] = forged[tail]!.replace(
      /"signature":"(.)/,
      (_m, c: string) => `"signature":"${c === 'A' ? 'B' : 'A'}`,
    );
    const cases: Array<[string, string, string]> = [
      ['edit', join_(edited), 'seq 7: edited'],
      ['delete', join_(lines.filter((_, i) => i !== 5)), 'seq 6: missing'],
      ['swap', join_(swapped), 'seq 8: reordered'],
      ['cut the tail', join_([...lines.slice(0, tail - 3), lines[tail]!]), `seq ${tail - 2}: missing`],
      ['forge a checkpoint', join_(forged), `seq ${tail}: bad checkpoint signature`],
    ];
    for (const [name, text, want] of cases) {
      const v = await verifyFile(text, '--pub', pub);
      expect(v.out.startsWith(want), `${name}: ${v.out}`).toBe(true);
      expect(v.code, name).toBe(1);
    }
  });

  it('[property] any single byte changed in any exported line is found', async () => {
    const ex = await runCli(['audit', 'export', '--data-dir', dataDir]);
    const lines = ex.stdout.trimEnd().split('\n');
    const pub = require('node:crypto').createPublicKey(readFileSync(join(dataDir, 'audit.pub'), 'utf8'));
    const check = (text: string) => {
      const read = chainFromExport(text);
      return read.bad === undefined && verifyChain({ ...read.input, publicKey: pub }).ok;
    };
    expect(check(ex.stdout)).toBe(true);
    let seed = 24;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let t = 0; t < 3000; t++) {
      const li = rand(lines.length);
      const line = Buffer.from(lines[li]!, 'utf8');
      const pos = rand(line.length);
      const old = line[pos]!;
      let b = 32 + rand(95);
      if (b === old) b = b === 126 ? 32 : b + 1;
      line[pos] = b;
      const text = `${[...lines.slice(0, li), line.toString('utf8'), ...lines.slice(li + 1)].join('\n')}\n`;
      expect(
        check(text),
        `line ${li + 1}, byte ${pos}: ${String.fromCharCode(old)} → ${String.fromCharCode(b)}`,
      ).toBe(false);
    }
  });

  it('exports one command, a time range and CSV; the partial exports verify on their own', async () => {
    const one = await runCli(['audit', 'export', '--data-dir', dataDir, '--command', ids[1]!]);
    const entries = one.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.filter((e) => e.type === undefined).map((e) => e.event)).toEqual([
      'submit',
      'approve',
      'launch',
      'outcome',
    ]);
    expect(entries.at(-1)).toEqual({ type: 'export', command_ids: [ids[1]] });
    expect((await verifyFile(one.stdout)).out).toBe(
      'ok: 4 entries, 0 checkpoints, 0 passkey approvals verified',
    );
    // Someone else's entry slipped in is found.
    const all = (await runCli(['audit', 'export', '--data-dir', dataDir])).stdout.split('\n');
    const foreign = `${all.find((l) => l.includes(ids[2]!))!}\n${one.stdout}`;
    expect((await verifyFile(foreign)).code).toBe(1);

    const first = JSON.parse(all[0]!) as { at: string };
    const range = await runCli([
      'audit',
      'export',
      '--data-dir',
      dataDir,
      '--since',
      first.at,
      '--until',
      '2100-01-01T00:00:00Z',
    ]);
    expect((await verifyFile(range.stdout)).code).toBe(0);

    const csv = await runCli([
      'audit',
      'export',
      '--data-dir',
      dataDir,
      '--format',
      'csv',
      '--command',
      ids[0]!,
    ]);
    const rows = csv.stdout.trimEnd().split('\r\n');
    expect(rows[0]).toBe('seq,at,actor,event,command_id,summary');
    expect(rows.slice(1).map((r) => r.split(',').slice(2, 5))).toEqual([
      ['client:local', 'submit', ids[0]],
      ['owner', 'approve', ids[0]],
      ['daemon', 'launch', ids[0]],
      ['daemon', 'outcome', ids[0]],
    ]);
    expect(rows[2]).toContain('state=approved');
  });
});
