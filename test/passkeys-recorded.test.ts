/**
 * Issue 35 finding 2 (contract 13.3 (v4)): a passkey approves only when the audit chain added it. The
 * attacker is code running as the owner's user: it reads owner.token (a token login and its panel key) and
 * writes broker.db with better-sqlite3, as any process of that user can. It inserts its own key into the
 * passkeys table, asks a challenge, signs, approves a require_passkey command, and deletes the row — so the
 * panel's list shows the owner's key alone. Before this version the command ran and `audit verify` counted
 * the approval as verified (it trusted the key kept inside the approval's own entry). Now the daemon refuses
 * the key (the record never added it) and keeps serving the owner, whose own key (added through the panel,
 * its entry carrying the public key) approves. `audit verify` with and without `--pub` (the chain pinned by
 * the daemon's last checkpoint: the fast walk) still counts the owner's approval. And a data dir of an older
 * version, whose passkey was added before entries carried keys, has it taken into the chain at the first
 * start (docs/audit.md), after which it approves and verifies.
 *
 * No browser: a software authenticator (test/helpers/soft-authenticator.ts) registers and signs as a real
 * one does, against the real daemon, its real owner socket and the real CLI.
 */
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../daemon/store/sqlite/schema.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';
import { panelLogin, panelProtocols } from './helpers/panel.js';
import { SoftAuthenticator } from './helpers/soft-authenticator.js';

let d: RunningDaemon;
let ai: Client;
let markFile: string;
let local: string;
/** The owner's token session at http://localhost:PORT (passkeys need the localhost origin). */
let panel: OwnerSocket;
/** The owner's own authenticator, added in the panel. */
let mine: SoftAuthenticator;

function config(marks: string): Record<string, unknown> {
  const base = ownerCatalog(marks) as { commands: Record<string, Record<string, unknown>> };
  const mark = base.commands.mark!;
  return {
    commands: {
      mark,
      vault: { ...mark, description: 'Write to the vault (passkey)', require_passkey: true },
    },
  };
}

let nextReq = 1;
async function ask(s: OwnerSocket, frame: Frame): Promise<Frame> {
  const req_id = `k${nextReq++}`;
  s.ws.send(JSON.stringify({ ...frame, req_id }));
  return s.waitFor((f) => f.req_id === req_id, `answer to ${frame.type}`);
}

async function openPanel(daemon: RunningDaemon): Promise<OwnerSocket> {
  const login = await panelLogin(daemon);
  const at = daemon.url.replace('127.0.0.1', 'localhost');
  return OwnerSocket.open(daemon, { Cookie: login.cookie, Origin: at }, panelProtocols(login.key));
}

/** Approves `id` at version 1 with `key`'s signature over a challenge the daemon issued. */
async function approveWith(s: OwnerSocket, key: SoftAuthenticator, id: string): Promise<Frame> {
  const ch = await ask(s, { type: 'approve_challenge', id, version: 1 });
  expect(ch.type).toBe('approve_challenge');
  return ask(s, { type: 'approve', id, version: 1, assertion: key.assert(ch.challenge) });
}

/** The chain's entries of `event`, parsed, read from broker.db as `audit verify` does. */
function entriesOf(dataDir: string, event: string): Frame[] {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true });
  try {
    return (
      db.prepare('SELECT entry FROM audit WHERE hash IS NOT NULL ORDER BY seq').pluck().all() as string[]
    )
      .map((t) => JSON.parse(t) as Frame)
      .filter((e) => e.event === event);
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-passkeys-recorded-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: config(markFile) });
  local = d.url.replace('127.0.0.1', 'localhost');
  ai = await mcpClient(d);
  panel = await openPanel(d);
  // The owner adds a first passkey in the panel (a token session may, while the owner has none).
  mine = new SoftAuthenticator('localhost', local);
  const begun = await ask(panel, { type: 'passkey_begin' });
  expect(begun.type).toBe('passkey_begin');
  expect(
    await ask(panel, { type: 'passkey_finish', response: mine.register(begun.options.challenge) }),
  ).toMatchObject({ ok: true });
});

afterAll(async () => {
  await panel?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('a passkey approves only when the audit record added it (contract 13.3 (v4))', () => {
  it('[c13.3.recorded] adding a passkey is an entry carrying the credential id, the owner and the public key', () => {
    const added = entriesOf(d.dataDir, 'passkey_added');
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      actor: 'owner',
      data: { owner: 'owner', credential_id: mine.id, public_key: mine.publicKey, rp_id: 'localhost' },
    });
  });

  it('[c13.3.recorded] [attack] a key inserted into broker.db, used, then deleted: the daemon refuses it and keeps serving the owner', async () => {
    const id = await queue(ai, 'vault', { word: 'forged' });
    await panel.view(id, (v) => v.state === 'awaiting_review', 'waiting');
    // The attacker's own key, written straight into the passkeys table of the live broker.db.
    const theirs = new SoftAuthenticator('localhost', local);
    const db = new Database(join(d.dataDir, 'broker.db'));
    try {
      db.prepare(
        'INSERT INTO passkeys (credential_id, owner, public_key, rp_id, counter, created_at) VALUES (?, ?, ?, ?, 0, ?)',
      ).run(theirs.id, 'owner', theirs.publicKey, 'localhost', new Date().toISOString());
      const forged = await approveWith(panel, theirs, id);
      expect(forged).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
      expect(forged.error.message).toContain('not in the audit record');
      // The daemon's log says a key was planted (a warning, naming the owner and the credential).
      const planted = new RegExp(`"passkey_unrecorded".*${theirs.id}`);
      await waitFor(() => planted.test(d.stderr()), 'the planted key logged');
      // Nor does it sign in (a passkey session could enrol a key of its own).
      const o = await fetch(`${local}/login/passkey/options`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: local },
        body: '{}',
      });
      const { options } = (await o.json()) as Frame;
      const signIn = await fetch(`${local}/login/passkey`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: local },
        body: JSON.stringify({ response: theirs.assert(options.challenge) }),
      });
      expect(signIn.status).toBe(401);
      expect(signIn.headers.get('set-cookie')).toBeNull();
      // A row of the owner's credential with the attacker's public key swapped in signs nothing either.
      const swapped = new SoftAuthenticator('localhost', local);
      Object.defineProperty(swapped, 'id', { value: mine.id });
      db.prepare('UPDATE passkeys SET public_key = ? WHERE credential_id = ?').run(
        swapped.publicKey,
        mine.id,
      );
      expect(await approveWith(panel, swapped, id)).toMatchObject({
        ok: false,
        error: { code: 'PasskeyRequired' },
      });
      db.prepare('UPDATE passkeys SET public_key = ? WHERE credential_id = ?').run(mine.publicKey, mine.id);
    } finally {
      db.prepare('DELETE FROM passkeys WHERE credential_id = ?').run(theirs.id);
      db.close();
    }
    expect((await panel.view(id, () => true, 'still waiting')).state).toBe('awaiting_review');
    expect(readMarks(markFile)).not.toContain('forged');
    // The daemon keeps serving: the owner's own key approves it, and it runs.
    expect(await approveWith(panel, mine, id)).toMatchObject({ ok: true });
    await panel.view(id, (v) => v.state === 'succeeded', 'ran');
    expect(readMarks(markFile)).toContain('forged');
  });

  it('[c13.3.recorded] [c14.verify] audit verify, with and without --pub, after the last checkpoint pins the record: the owner’s approval verifies', async () => {
    await d.stop(); // a clean stop signs a last checkpoint: every entry is pinned, the fast walk's path
    const pub = join(d.dataDir, 'audit.pub.copy');
    copyFileSync(join(d.dataDir, 'audit.pub'), pub);
    for (const args of [[], ['--pub', pub]]) {
      const r = await runCli(['audit', 'verify', '--data-dir', d.dataDir, ...args]);
      expect(r.stdout).toMatch(/^ok: \d+ entries, [1-9]\d* checkpoints, 1 passkey approvals verified$/m);
      expect(r.code).toBe(0);
    }
  });
});

describe('passkeys of an older data dir (docs/audit.md)', () => {
  it('[c13.3.recorded] a passkey present at the upgrade is taken into the chain by the daemon, once; it then approves and verifies', async () => {
    const dataDir = makeDataDir('ogf-passkeys-upgrade-');
    const marks = join(dataDir, 'marks.txt');
    try {
      // A data dir as the previous version left it: a passkey row, added when entries carried no key.
      const first = await startDaemon({ dataDir, config: config(marks) });
      await first.stop();
      const key = new SoftAuthenticator('localhost');
      const step = MIGRATIONS.findIndex((m) => m.includes('audit_passkeys'));
      expect(step).toBeGreaterThan(0);
      const db = new Database(join(dataDir, 'broker.db'));
      try {
        db.prepare(
          'INSERT INTO passkeys (credential_id, owner, public_key, rp_id, counter, created_at) VALUES (?, ?, ?, ?, 0, ?)',
        ).run(key.id, 'owner', key.publicKey, 'localhost', new Date().toISOString());
        db.pragma(`user_version = ${step}`);
      } finally {
        db.close();
      }
      // The port changes at each start (--port 0): the key's origin follows it.
      const second = await startDaemon({ dataDir, config: config(marks) });
      try {
        const taken = entriesOf(dataDir, 'passkey_added');
        expect(taken).toEqual([
          expect.objectContaining({
            actor: 'daemon',
            data: {
              owner: 'owner',
              credential_id: key.id,
              public_key: key.publicKey,
              rp_id: 'localhost',
              taken_at_upgrade: true,
            },
          }),
        ]);
        const origin = second.url.replace('127.0.0.1', 'localhost');
        const owner = await openPanel(second);
        const client = await mcpClient(second);
        try {
          const id = await queue(client, 'vault', { word: 'upgraded' });
          await owner.view(id, (v) => v.state === 'awaiting_review', 'waiting');
          const ch = await ask(owner, { type: 'approve_challenge', id, version: 1 });
          const assertion = key.assert(ch.challenge, { origin });
          expect(await ask(owner, { type: 'approve', id, version: 1, assertion })).toMatchObject({
            ok: true,
          });
          await owner.view(id, (v) => v.state === 'succeeded', 'ran');
        } finally {
          await client.close();
          await owner.close();
        }
      } finally {
        await second.stop();
      }
      // A restart takes nothing in again.
      const third = await startDaemon({ dataDir, config: config(marks) });
      await third.stop();
      expect(entriesOf(dataDir, 'passkey_added')).toHaveLength(1);
      const r = await runCli(['audit', 'verify', '--data-dir', dataDir]);
      expect(r.stdout).toMatch(/^ok: \d+ entries, \d+ checkpoints, 1 passkey approvals verified$/m);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
