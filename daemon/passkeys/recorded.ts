/**
 * The daemon's side of contract 13.3 (v4): before a passkey signs an approval or a sign-in, the audit chain
 * must vouch for it — added for its owner with this public key by an entry of the chain, not removed since
 * (core/model/passkey-ledger.ts, strict: the rule `audit verify` applies, without its allowance for approvals
 * older versions made). A row written straight into the passkeys table, or a row whose public key was
 * swapped, is refused here, so it approves nothing — and cannot sign in to enrol a key of its own either.
 */
import { PasskeyLedger, type PasskeyStore, type StoredPasskey } from '../core/index.js';

/** Why the chain does not vouch for `p`, or undefined when it does. */
export async function unrecorded(store: PasskeyStore, p: StoredPasskey): Promise<string | undefined> {
  const ledger = new PasskeyLedger();
  for (const e of await store.recorded()) ledger.apply(e.event, e.data);
  return ledger.refuse(p, true);
}
