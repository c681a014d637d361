/**
 * The check of an assertion sent with `approve` (contract 13.3), without a browser: challenges issued by the
 * book (a fake clock), passkeys in a small in-memory store, assertions signed by a software authenticator
 * as a real one signs. The browser suite (test/browser-passkeys.test.ts) runs the same path with Chromium.
 */
import { describe, expect, it } from 'vitest';
import { SoftAuthenticator } from '../../test/helpers/soft-authenticator.js';
import type { PasskeyStore, StoredPasskey } from '../core/index.js';
import { checkApproval } from './approval.js';
import { ApprovalChallenges } from './approval-book.js';
import { type ApprovalSubject, canonicalApproval } from './challenge.js';
import { verifyKeptAssertion } from './kept.js';

const PORT = 7719;
const subject: ApprovalSubject = {
  id: 'c_1',
  version: 1,
  command: 'vault',
  client: 'local',
  args: { w: 'a' },
};

/** Passkey rows and, apart, the chain's entries about them (what `recorded` reads: contract 13.3 (v4)). */
function memoryStore(): PasskeyStore & {
  rows: Map<string, StoredPasskey>;
  log: Array<{ event: string; data: Record<string, unknown> }>;
} {
  const rows = new Map<string, StoredPasskey>();
  const log: Array<{ event: string; data: Record<string, unknown> }> = [];
  return {
    rows,
    log,
    add: async (p, audit) => {
      rows.set(p.credential_id, p);
      log.push({ event: audit.action, data: audit.detail ?? {} });
    },
    recorded: async () => log,
    get: async (id) => rows.get(id),
    list: async (owner) => [...rows.values()].filter((p) => p.owner === owner),
    remove: async (owner, id) => rows.get(id)?.owner === owner && rows.delete(id),
    used: async (id, counter, at) => {
      const p = rows.get(id);
      if (p) rows.set(id, { ...p, counter, last_used_at: at });
    },
  };
}

function setup() {
  let now = 1_000_000;
  const book = new ApprovalChallenges(120_000, () => now);
  const store = memoryStore();
  const key = new SoftAuthenticator('localhost', `http://localhost:${PORT}`);
  store.rows.set(key.id, {
    credential_id: key.id,
    owner: 'owner',
    public_key: key.publicKey,
    rp_id: 'localhost',
    counter: 0,
    created_at: 'then',
  });
  store.log.push({
    event: 'passkey_added',
    data: { owner: 'owner', credential_id: key.id, public_key: key.publicKey, rp_id: 'localhost' },
  });
  const check = (owner: string, s: ApprovalSubject, assertion: unknown) =>
    checkApproval({ book, store, publicUrl: null, port: PORT }, owner, s, assertion, 'now');
  return { book, store, key, check, tick: (ms: number) => (now += ms) };
}

describe('[c13.3.challenge] an approval assertion (contract 13.3)', () => {
  it('verified: kept with the canonical JSON and nonce; the kept record verifies offline', async () => {
    const { book, key, check } = setup();
    const issued = book.issue('owner', subject);
    const r = await check('owner', subject, key.assert(issued.challenge));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.kept.challenge_input).toEqual({
      canonical: canonicalApproval(subject),
      nonce: Buffer.from(issued.nonce).toString('base64url'),
    });
    expect(await verifyKeptAssertion(r.kept, { ...subject })).toEqual({ ok: true });
  });

  it('once: the same assertion again is refused', async () => {
    const { book, key, check } = setup();
    const a = key.assert(book.issue('owner', subject).challenge);
    expect((await check('owner', subject, a)).ok).toBe(true);
    expect(await check('owner', subject, a)).toMatchObject({
      ok: false,
      why: expect.stringContaining('already used'),
    });
  });

  it('120 s: a challenge past its time is refused (and spent)', async () => {
    const { book, key, check, tick } = setup();
    const a = key.assert(book.issue('owner', subject).challenge);
    tick(120_000);
    expect(await check('owner', subject, a)).toMatchObject({
      ok: false,
      why: expect.stringContaining('older than'),
    });
  });

  it('for another command, version or arguments, or issued to another owner: refused', async () => {
    const { book, key, check } = setup();
    for (const other of [
      { ...subject, id: 'c_2' },
      { ...subject, version: 2 },
      { ...subject, args: { w: 'b' } },
    ]) {
      const a = key.assert(book.issue('owner', subject).challenge);
      expect((await check('owner', other, a)).ok).toBe(false);
    }
    const a = key.assert(book.issue('bob', subject).challenge);
    expect(await check('owner', subject, a)).toMatchObject({
      ok: false,
      why: expect.stringContaining('another owner'),
    });
  });

  it('a key the daemon does not know, or the owner credential id with another key’s signature: refused', async () => {
    const { book, key, check } = setup();
    const stranger = new SoftAuthenticator('localhost', `http://localhost:${PORT}`);
    const c1 = book.issue('owner', subject).challenge;
    expect(await check('owner', subject, stranger.assert(c1))).toMatchObject({
      ok: false,
      why: expect.stringContaining('not one of yours'),
    });
    const c2 = book.issue('owner', subject).challenge;
    const forged = { ...stranger.assert(c2), id: key.id, rawId: key.id };
    expect((await check('owner', subject, forged)).ok).toBe(false);
  });

  it('another origin, no user verification, a counter going backwards, not a WebAuthn answer: refused', async () => {
    const { book, key, check, store } = setup();
    const c1 = book.issue('owner', subject).challenge;
    expect((await check('owner', subject, key.assert(c1, { origin: 'http://127.0.0.1:7719' }))).ok).toBe(
      false,
    );
    const c2 = book.issue('owner', subject).challenge;
    expect((await check('owner', subject, key.assert(c2, { uv: false }))).ok).toBe(false);
    store.rows.set(key.id, { ...store.rows.get(key.id)!, counter: 1000 });
    const c3 = book.issue('owner', subject).challenge;
    expect((await check('owner', subject, key.assert(c3))).ok).toBe(false);
    expect((await check('owner', subject, { id: 'x' })).ok).toBe(false);
  });
});

describe('[c13.3.recorded] the key must be one the audit record added (contract 13.3 (v4))', () => {
  it('[attack] a row in the table that no entry added: refused, and the challenge is spent', async () => {
    const { book, store, check } = setup();
    const theirs = new SoftAuthenticator('localhost', `http://localhost:${PORT}`);
    store.rows.set(theirs.id, {
      credential_id: theirs.id,
      owner: 'owner',
      public_key: theirs.publicKey,
      rp_id: 'localhost',
      counter: 0,
      created_at: 'then',
    });
    const r = await check('owner', subject, theirs.assert(book.issue('owner', subject).challenge));
    expect(r).toMatchObject({ ok: false, why: expect.stringContaining('not in the audit record') });
  });

  it('[attack] the owner’s row with another public key swapped in: refused', async () => {
    const { book, store, key, check } = setup();
    const theirs = new SoftAuthenticator('localhost', `http://localhost:${PORT}`);
    Object.defineProperty(theirs, 'id', { value: key.id });
    store.rows.set(key.id, { ...store.rows.get(key.id)!, public_key: theirs.publicKey });
    const r = await check('owner', subject, theirs.assert(book.issue('owner', subject).challenge));
    expect(r).toMatchObject({ ok: false, why: expect.stringContaining('another public key') });
  });

  it('an older version’s add entry without the key does not do for the daemon', async () => {
    const { book, store, key, check } = setup();
    store.log[0] = { event: 'passkey_added', data: { owner: 'owner', credential_id: key.id } };
    const r = await check('owner', subject, key.assert(book.issue('owner', subject).challenge));
    expect(r).toMatchObject({ ok: false, why: expect.stringContaining('older version') });
  });
});
