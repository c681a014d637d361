/**
 * Which passkeys the audit chain vouches for (contract 13.3 (v4)): a key may sign an approval only when an
 * earlier entry of the chain added it for that owner — naming its credential id and public key — and no
 * entry removed it since. One rule, read by the daemon before it accepts an assertion (the entries of the
 * store, passkeys/approval.ts and sign-in.ts) and by `audit verify` walking the chain (audit/passkeys.ts),
 * so a key written straight into the passkeys table signs nothing: the table is the daemon's working copy,
 * the chain is the record a checkpoint outside the machine pins.
 *
 * ```
 *  passkey_added    {owner, credential_id, public_key, rp_id}   ─▶ live[credential_id] = {owner, public_key}
 *  passkey_removed  {owner, credential_id}                      ─▶ delete live[credential_id] (that owner's)
 *  passkeys_removed {owner}            (token owner --rotate)   ─▶ delete every live key of owner
 *  config_loaded    (every start of this version)               ─▶ legacy adds stop counting (below)
 * ```
 *
 * Older versions wrote `passkey_added` without the public key. At the first start of this version the
 * migration appends an add entry with the key for every passkey the table holds (docs/audit.md), before
 * that start's first `config_loaded`. An add entry without a key therefore vouches (for any key, the one
 * the approval kept) only for approvals made before the chain's first `config_loaded`: the approvals older
 * versions made, which the chain has pinned since. The daemon itself never accepts one (`strict`). Pure.
 */

/** The events of the chain that change which keys are live. */
export const PASSKEY_KEY_EVENTS = ['passkey_added', 'passkey_removed', 'passkeys_removed'] as const;

/** The event every start of this version appends first (contract 14 (v4)). */
export const CONFIG_LOADED = 'config_loaded';

interface LiveKey {
  owner: string;
  /** base64url COSE key; null when an older version's entry did not name it. */
  publicKey: string | null;
}

/** A key as an approval or a sign-in presents it. */
export interface PresentedKey {
  owner: string;
  credential_id: string;
  public_key: string;
}

export class PasskeyLedger {
  readonly #live = new Map<string, LiveKey>();
  /** Whether this version has started on the chain (a `config_loaded` seen): keyless adds count no more. */
  #current = false;

  /** Takes in one chain entry (any event; those that change no key are ignored). */
  apply(event: string, data: Record<string, unknown>): void {
    const owner = typeof data.owner === 'string' ? data.owner : undefined;
    const id = typeof data.credential_id === 'string' ? data.credential_id : undefined;
    switch (event) {
      case CONFIG_LOADED:
        this.#current = true;
        return;
      case 'passkey_added':
        if (owner === undefined || id === undefined) return;
        this.#live.set(id, {
          owner,
          publicKey: typeof data.public_key === 'string' ? data.public_key : null,
        });
        return;
      case 'passkey_removed':
        if (id !== undefined && this.#live.get(id)?.owner === owner) this.#live.delete(id);
        return;
      case 'passkeys_removed':
        for (const [k, v] of this.#live) if (v.owner === owner) this.#live.delete(k);
        return;
    }
  }

  /**
   * Why the chain does not vouch for `key` now, or undefined when it does. `strict` (the daemon): only an add
   * entry that names this public key counts.
   */
  refuse(key: PresentedKey, strict: boolean): string | undefined {
    const live = this.#live.get(key.credential_id);
    if (live === undefined || live.owner !== key.owner) {
      return `passkey ${key.credential_id} was not added for ${key.owner} by any earlier entry of the audit record (or was removed since)`;
    }
    if (live.publicKey === null) {
      if (strict || this.#current)
        return `passkey ${key.credential_id} was added by an older version that did not record its public key, and not taken into the record since`;
      return undefined;
    }
    if (live.publicKey !== key.public_key)
      return `passkey ${key.credential_id} signed with another public key than the one the audit record added`;
    return undefined;
  }
}
