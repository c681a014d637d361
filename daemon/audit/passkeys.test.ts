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

/** A whole chain, sealed as the store seals it: submit, then the passkey approval. */
function chain(submitted: Record<string, unknown>, kept: KeptAssertion): ChainInput {
  const raw: AuditEntry[] = [
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

describe('[S.passkey-kept] audit verify checks the kept passkey approvals offline', () => {
  it('an approval signed over exactly what was submitted verifies and is counted', async () => {
    const a = new SoftAuthenticator();
    expect(await verifyPasskeyApprovals(chain(args, keptFor(a, args)))).toEqual({ ok: true, count: 1 });
  });

  it('[attack] a re-chained record cannot change what the owner signed: one byte of the signature', async () => {
    const k = keptFor(new SoftAuthenticator(), args);
    const sig = Buffer.from(k.response.response.signature, 'base64url');
    sig[sig.length - 1]! ^= 1;
    k.response.response.signature = sig.toString('base64url');
    const r = await verifyPasskeyApprovals(chain(args, k));
    expect(r).toMatchObject({ ok: false, bad: { seq: 2, reason: 'bad passkey assertion' } });
  });

  it('[attack] a re-chained record that swaps the submitted arguments is found', async () => {
    const k = keptFor(new SoftAuthenticator(), args);
    const r = await verifyPasskeyApprovals(chain({ target: 'dev' }, k));
    expect(r).toMatchObject({ ok: false, bad: { seq: 2, reason: 'bad passkey assertion' } });
    if (!r.ok) expect(r.bad.detail).toContain('arguments');
  });

  it('[attack] an assertion signed for another version of the command is found', async () => {
    const k = keptFor(new SoftAuthenticator(), args, 7);
    const r = await verifyPasskeyApprovals(chain(args, k));
    expect(r).toMatchObject({ ok: false, bad: { seq: 2, reason: 'bad passkey assertion' } });
  });
});
