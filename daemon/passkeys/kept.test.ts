/**
 * The offline check of a kept passkey approval (contract 13.3, 14): `verifyKeptAssertion` recomputes the
 * challenge from the canonical JSON and the nonce, verifies the signature with @simplewebauthn/server
 * (user verification required) and checks the canonical names what the entry approved. Assertions come
 * from a software authenticator (test/helpers/soft-authenticator.ts), signed as a real one signs.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SoftAuthenticator } from '../../test/helpers/soft-authenticator.js';
import { approvalChallenge, canonicalApproval } from './challenge.js';
import { type KeptAssertion, verifyKeptAssertion, verifyKeptInEntry } from './kept.js';

const subject = {
  id: 'c_abc',
  version: 3,
  command: 'deploy',
  client: 'local',
  args: { target: 'prod', n: 2 },
};

function kept(a = new SoftAuthenticator(), opts: { uv?: boolean } = {}): KeptAssertion {
  const canonical = canonicalApproval(subject);
  const nonce = randomBytes(16);
  const response = a.assert(approvalChallenge(canonical, nonce), opts);
  return {
    credential_id: a.id,
    public_key: a.publicKey,
    rp_id: a.rpId,
    origins: [a.origin],
    challenge_input: { canonical, nonce: nonce.toString('base64url') },
    response: response as KeptAssertion['response'],
  };
}

describe('[c13.3.kept] verifyKeptAssertion (contract 13.3: checked offline from the audit record)', () => {
  it('the canonical JSON is RFC 8785 (sorted keys, no spaces) with action approve', () => {
    expect(canonicalApproval(subject)).toBe(
      '{"action":"approve","args":{"n":2,"target":"prod"},"client":"local","command":"deploy","id":"c_abc","version":3}',
    );
  });

  it('a kept approval verifies, alone and against its entry', async () => {
    const k = kept();
    expect(await verifyKeptAssertion(k)).toEqual({ ok: true });
    expect(await verifyKeptAssertion(k, { ...subject })).toEqual({ ok: true });
    const entry = { command_id: 'c_abc', version: 4, detail: { command: 'deploy', passkey: k } };
    expect(await verifyKeptInEntry(entry, subject.args)).toEqual({ ok: true });
  });

  it('tampered args in the canonical: the signature no longer covers it', async () => {
    const k = kept();
    k.challenge_input.canonical = canonicalApproval({ ...subject, args: { target: 'dev', n: 2 } });
    const v = await verifyKeptAssertion(k);
    expect(v.ok).toBe(false);
  });

  it('an entry whose args, version, id or command differ from what was signed', async () => {
    const k = kept();
    expect(await verifyKeptAssertion(k, { args: { target: 'dev', n: 2 } })).toMatchObject({
      ok: false,
      why: expect.stringContaining('args'),
    });
    expect(await verifyKeptAssertion(k, { version: 4 })).toMatchObject({
      ok: false,
      why: expect.stringContaining('version'),
    });
    expect(await verifyKeptAssertion(k, { id: 'c_other' })).toMatchObject({ ok: false });
    expect(await verifyKeptAssertion(k, { command: 'other' })).toMatchObject({ ok: false });
    const entry = { command_id: 'c_abc', version: 3, detail: { command: 'deploy', passkey: k } };
    expect((await verifyKeptInEntry(entry)).ok).toBe(false);
  });

  it('one altered byte anywhere that matters is found', async () => {
    const k = kept();
    const flip = (s: string, i: number) => {
      const b = Buffer.from(s, 'base64url');
      b[i % b.length] = b[i % b.length]! ^ 1;
      return b.toString('base64url');
    };
    const cases: Array<(c: KeptAssertion) => void> = [
      (c) => {
        c.response.response.signature = flip(c.response.response.signature, 10);
      },
      (c) => {
        c.response.response.authenticatorData = flip(c.response.response.authenticatorData, 33);
      },
      (c) => {
        c.challenge_input.nonce = flip(c.challenge_input.nonce, 0);
      },
      (c) => {
        c.public_key = new SoftAuthenticator().publicKey;
      },
      (c) => {
        c.rp_id = 'example.com';
      },
      (c) => {
        c.origins = ['http://localhost:1'];
      },
    ];
    for (const change of cases) {
      const c = structuredClone(k);
      change(c);
      expect((await verifyKeptAssertion(c)).ok).toBe(false);
    }
  });

  it('without user verification, or not a kept record at all: refused, never thrown', async () => {
    expect((await verifyKeptAssertion(kept(new SoftAuthenticator(), { uv: false }))).ok).toBe(false);
    expect((await verifyKeptAssertion(undefined)).ok).toBe(false);
    expect((await verifyKeptAssertion({ credential_id: 'x' })).ok).toBe(false);
  });

  it('the challenge is base64url(SHA-256(canonical || nonce))', async () => {
    const { createHash } = await import('node:crypto');
    const nonce = Buffer.alloc(16, 7);
    const c = canonicalApproval(subject);
    expect(approvalChallenge(c, nonce)).toBe(
      createHash('sha256')
        .update(Buffer.concat([Buffer.from(c, 'utf8'), nonce]))
        .digest('base64url'),
    );
  });
});
