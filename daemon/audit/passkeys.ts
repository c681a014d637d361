/**
 * The passkey approvals kept in the chain (contracts 13.3, 14): `audit verify` checks each one offline,
 * without the daemon — the signature over the challenge derived from the approval's canonical JSON and its
 * nonce (@simplewebauthn/server, user verification required: passkeys/kept.ts), that the canonical names
 * this entry's command, id and version, and that the arguments signed are the ones the command's `submit`
 * entry recorded (its `args_sha256`). Someone holding the data dir can rewrite and re-hash the whole chain,
 * but cannot make an approval say what the owner's key did not sign.
 */
import { canonicalJson, sha256Hex } from '../core/audit-chain.js';
import type { Bad, ChainInput } from './verify.js';

interface EntryView {
  seq: number;
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

/** Every kept assertion checked, in chain order: how many verified, or the first bad one. */
export async function verifyPasskeyApprovals(
  input: ChainInput,
): Promise<{ ok: true; count: number } | { ok: false; bad: Bad }> {
  const submitted = new Map<string, string>();
  let count = 0;
  for (const r of input.entries) {
    if (!('value' in r)) continue;
    const v = r.value as unknown as EntryView;
    const data = v.data ?? {};
    const id = typeof v.command_id === 'string' ? v.command_id : undefined;
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
    const recorded = id === undefined ? undefined : submitted.get(id);
    if (recorded !== undefined) {
      const args = signedArgs(data.passkey);
      if (args === undefined || sha256Hex(canonicalJson(args)) !== recorded)
        return bad(`seq ${v.seq}: the arguments signed are not the arguments ${id} was submitted with`);
    }
    count++;
  }
  return { ok: true, count };
}
