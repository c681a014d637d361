/**
 * `audit verify` checks every passkey assertion kept with an approval (contracts 13.3, 14), offline. The
 * assertions come from a software authenticator (test/helpers/soft-authenticator.ts) that signs as a real
 * one signs. The attacker here holds the data dir but not the owner's passkey: they can rewrite and re-hash
 * the whole chain, but cannot make an approval say something the owner's key did not sign.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SoftAuthenticator } from '../../test/helpers/soft-authenticator.js';
import {
  type AuditEntry,
  canonicalJson,
  chainEntry,
  GENESIS_HASH,
  sealEntry,
  sha256Hex,
} from '../core/index.js';
import { approvalChallenge, canonicalApproval, type KeptAssertion } from '../passkeys/index.js';
import { verifyPasskeyApprovals } from './passkeys.js';
import type { ChainInput } from './verify.js';

const args = { target: 'prod' };
const owner = { kind: 'owner', name: 'owner' } as const;

function keptFor(a: SoftAuthenticator, signedArgs: Record<string, unknown>, version = 1): KeptAssertion {
  const canonical = canonicalApproval({
    id: 'c_1',
    version,
    command: 'deploy',
    client: 'local',
    args: signedArgs,
  });
  const nonce = randomBytes(16);
  return {
    credential_id: a.id,
    public_key: a.publicKey,
    rp_id: a.rpId,
    origins: [a.origin],
    challenge_input: { canonical, nonce: nonce.toString('base64url') },
    response: a.assert(approvalChallenge(canonical, nonce)) as KeptAssertion['response'],
  };
}

/** The entry adding `kept`'s key for `name` (contract 13.3 (v4): with its public key; null: as older versions wrote it). */
function added(kept: KeptAssertion, name = 'owner', publicKey: string | null = kept.public_key): AuditEntry {
  const detail: Record<string, unknown> = {
    owner: name,
    credential_id: kept.credential_id,
    rp_id: kept.rp_id,
  };
  if (publicKey !== null) detail.public_key = publicKey;
  return { at: '2026-12-02T07:59:00.000Z', actor: { kind: 'owner', name }, action: 'passkey_added', detail };
}

const loaded: AuditEntry = {
  at: '2026-12-02T07:59:30.000Z',
  actor: { kind: 'daemon', name: 'daemon' },
  action: 'config_loaded',
  detail: { config_sha256: '0'.repeat(64) },
};

/**
 * A whole chain, sealed as the store seals it: the key's history (by default the owner adding the kept key),
 * the submit, then the passkey approval.
 */
function chain(
  submitted: Record<string, unknown>,
  kept: KeptAssertion,
  keys: AuditEntry[] = [added(kept)],
): ChainInput {
  const raw: AuditEntry[] = [
    ...keys,
    {
      at: '2026-12-02T08:00:00.000Z',
      actor: { kind: 'client', name: 'local' },
      action: 'submit',
      command_id: 'c_1',
      version: 1,
      detail: { command: 'deploy', args_sha256: sha256Hex(canonicalJson(submitted)) },
    },
    {
      at: '2026-12-02T08:00:05.000Z',
      actor: owner,
      action: 'approve',
      command_id: 'c_1',
      version: 2,
      detail: { command: 'deploy', passkey: kept as unknown as Record<string, unknown> },
    },
  ];
  let prev = GENESIS_HASH;
  const entries = raw.map((e, i) => {
    const unsealed = chainEntry(e, i + 1, prev);
    const sealed = sealEntry(unsealed);
    prev = sealed.hash;
    return { value: { ...unsealed, hash: sealed.hash } as Record<string, unknown>, text: sealed.text };
  });
  return { entries, checkpoints: [] };
}

describe('[c13.3.kept] audit verify checks the kept passkey approvals offline', () => {
  it('an approval signed over exactly what was submitted verifies and is counted', async () => {
    const a = new SoftAuthenticator();
    expect(await verifyPasskeyApprovals(chain(args, keptFor(a, args)))).toEqual({
      ok: true,
      count: 1,
      keys: true,
    });
  });

  it('[attack] a re-chained record cannot change what the owner signed: one byte of the signature', async () => {
    const k = keptFor(new SoftAuthenticator(), args);
    const sig = Buffer.from(k.response.response.signature, 'base64url');
    sig[sig.length - 1]! ^= 1;
    k.response.response.signature = sig.toString('base64url');
    const r = await verifyPasskeyApprovals(chain(args, k));
    expect(r).toMatchObject({ ok: false, bad: { seq: 3, reason: 'bad passkey assertion' } });
  });

  it('[attack] a re-chained record that swaps the submitted arguments is found', async () => {
    const k = keptFor(new SoftAuthenticator(), args);
    const r = await verifyPasskeyApprovals(chain({ target: 'dev' }, k));
    expect(r).toMatchObject({ ok: false, bad: { seq: 3, reason: 'bad passkey assertion' } });
    if (!r.ok) expect(r.bad.detail).toContain('arguments');
  });

  it('[attack] an assertion signed for another version of the command is found', async () => {
    const k = keptFor(new SoftAuthenticator(), args, 7);
    const r = await verifyPasskeyApprovals(chain(args, k));
    expect(r).toMatchObject({ ok: false, bad: { seq: 3, reason: 'bad passkey assertion' } });
  });
});

describe('[c13.3.recorded] audit verify accepts a kept assertion only when the chain added its key (contract 13.3 (v4))', () => {
  const a = new SoftAuthenticator();
  const k = keptFor(a, args);
  const removed: AuditEntry = {
    at: '2026-12-02T07:59:10.000Z',
    actor: owner,
    action: 'passkey_removed',
    detail: { owner: 'owner', credential_id: a.id },
  };
  const rotated: AuditEntry = {
    at: '2026-12-02T07:59:10.000Z',
    actor: { kind: 'daemon', name: 'daemon' },
    action: 'passkeys_removed',
    detail: { owner: 'owner', why: 'token rotated', removed: 1 },
  };
  const bad = async (keys: AuditEntry[], why: string) => {
    const r = await verifyPasskeyApprovals(chain(args, k, keys));
    expect(r).toMatchObject({ ok: false, bad: { reason: 'bad passkey assertion' } });
    if (!r.ok) expect(r.bad.detail).toContain(why);
  };

  it('[attack] a key no entry added (written straight into the passkeys table): bad passkey assertion', async () => {
    await bad([], 'was not added for owner');
  });

  it('[attack] a key added for another owner, removed before, or removed with all of the owner’s: bad', async () => {
    await bad([added(k, 'alice')], 'was not added for owner');
    await bad([added(k), removed], 'removed since');
    await bad([added(k), rotated], 'removed since');
  });

  it('[attack] a key whose entry names another public key (the row’s key swapped): bad', async () => {
    await bad([added(k, 'owner', new SoftAuthenticator().publicKey)], 'another public key');
  });

  it('added again after a removal, it signs again', async () => {
    expect(await verifyPasskeyApprovals(chain(args, k, [added(k), removed, added(k)]))).toMatchObject({
      ok: true,
      count: 1,
    });
  });

  it('an older version’s add entry (no public key) vouches only for approvals made before this version’s first start', async () => {
    expect(await verifyPasskeyApprovals(chain(args, k, [added(k, 'owner', null)]))).toMatchObject({
      ok: true,
      count: 1,
    });
    await bad([added(k, 'owner', null), loaded], 'older version');
    // Taken into the chain at the upgrade (with its key): it signs after it too.
    expect(
      await verifyPasskeyApprovals(chain(args, k, [added(k, 'owner', null), added(k), loaded])),
    ).toMatchObject({ ok: true, count: 1 });
  });

  it('a partial or range export holds no key history: the signature is checked, the key is not (keys: false)', async () => {
    const input = chain(args, k, []);
    expect(await verifyPasskeyApprovals({ ...input, range: true })).toEqual({
      ok: true,
      count: 1,
      keys: false,
    });
    expect(await verifyPasskeyApprovals({ ...input, partial: { commandIds: ['c_1'] } })).toEqual({
      ok: true,
      count: 1,
      keys: false,
    });
  });
});
