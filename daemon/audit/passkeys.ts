/**
 * The passkey approvals kept in the chain (contracts 13.3, 14): `audit verify` checks each one offline,
 * without the daemon — the signature over the challenge derived from the approval's canonical JSON and its
 * nonce (@simplewebauthn/server, user verification required: passkeys/kept.ts), that the canonical names
 * this entry's command, id and version, and that the arguments signed are the ones the command's `submit`
 * entry recorded (its `args_sha256`). Someone holding the data dir can rewrite and re-hash the whole chain,
 * but cannot make an approval say what the owner's key did not sign.
 *
 * Contract 13.3 (v4): and that the key was one the chain vouches for when it signed — added for the
 * approving owner by an earlier entry, with this public key, and not removed since (core/model/passkey-ledger.ts).
 * A key written straight into the passkeys table can sign, but its approval then fails here; to pass it
 * needs an add entry of its own, which the next checkpoint pins. An export of some commands or of a range
 * holds no key's history: there the keys are not checked (`keys` false), only the signatures.
 */
import { canonicalJson, sha256Hex } from '../core/model/audit-chain.js';
import { PasskeyLedger } from '../core/model/passkey-ledger.js';
import type { Bad, ChainInput } from './verify.js';

interface EntryView {
  seq: number;
  actor?: unknown;
  event?: unknown;
  command_id?: unknown;
  data?: Record<string, unknown>;
}

/** The arguments an approval's canonical JSON names, or undefined when it cannot be read. */
function signedArgs(kept: unknown): unknown {
  const canonical = (kept as { challenge_input?: { canonical?: unknown } } | null)?.challenge_input
    ?.canonical;
  if (typeof canonical !== 'string') return undefined;
  try {
    return (JSON.parse(canonical) as { args?: unknown }).args;
  } catch {
    return undefined;
  }
}

/** The key a kept assertion names: its credential id and public key, when it has them. */
function keptKey(kept: unknown): { credential_id: string; public_key: string } | undefined {
  const k = kept as { credential_id?: unknown; public_key?: unknown } | null;
  return typeof k?.credential_id === 'string' && typeof k.public_key === 'string'
    ? { credential_id: k.credential_id, public_key: k.public_key }
    : undefined;
}

/**
 * Every kept assertion checked, in chain order: how many verified (and whether their keys were checked
 * against the chain's history: not in a partial or range export), or the first bad one.
 */
export async function verifyPasskeyApprovals(
  input: ChainInput,
): Promise<{ ok: true; count: number; keys: boolean } | { ok: false; bad: Bad }> {
  const submitted = new Map<string, string>();
  const keys = input.partial === undefined && input.range !== true;
  const ledger = new PasskeyLedger();
  let count = 0;
  for (const r of input.entries) {
    if (!('value' in r)) continue;
    const v = r.value as unknown as EntryView;
    const data = v.data ?? {};
    const id = typeof v.command_id === 'string' ? v.command_id : undefined;
    if (typeof v.event === 'string') ledger.apply(v.event, data);
    if (v.event === 'submit' && id !== undefined && typeof data.args_sha256 === 'string')
      submitted.set(id, data.args_sha256);
    if (data.passkey === undefined) continue;
    const bad = (detail: string) => ({
      ok: false as const,
      bad: { seq: v.seq, reason: 'bad passkey assertion' as const, detail },
    });
    const entry: { command_id?: string; version?: number; detail: Record<string, unknown> } = {
      detail: data,
    };
    if (id !== undefined) entry.command_id = id;
    if (typeof data.version === 'number') entry.version = data.version;
    // Loaded on the first kept approval: WebAuthn's libraries are most of `audit verify`'s start-up otherwise.
    const { verifyKeptInEntry } = await import('../passkeys/index.js');
    const verdict = await verifyKeptInEntry(entry);
    if (!verdict.ok) return bad(`seq ${v.seq}: ${verdict.why}`);
    if (keys) {
      const key = keptKey(data.passkey);
      const off =
        key === undefined || typeof v.actor !== 'string'
          ? 'the approval names no owner or no key'
          : ledger.refuse({ ...key, owner: v.actor }, false);
      if (off !== undefined) return bad(`seq ${v.seq}: ${off}`);
    }
    const recorded = id === undefined ? undefined : submitted.get(id);
    if (recorded !== undefined) {
      const args = signedArgs(data.passkey);
      if (args === undefined || sha256Hex(canonicalJson(args)) !== recorded)
        return bad(`seq ${v.seq}: the arguments signed are not the arguments ${id} was submitted with`);
    }
    count++;
  }
  return { ok: true, count, keys };
}
