/**
 * Owners' passkeys in broker.db (contract 13.3): one row per WebAuthn credential, public data only (the
 * credential id, its COSE public key, the relying party, the counter). Adding and removing one is audited
 * in the same transaction (`passkey_added`, `passkey_removed`), naming the owner and the credential.
 */
import type { AuditEntry, StoredPasskey } from '../../core/index.js';
import { type PasskeyRow, recordedOf, toPasskey } from '../rows/index.js';
import { RECORDED_PASSKEYS_WHERE } from '../rules/index.js';
import type { SqliteAudit } from './audit.js';
import type { Db } from './schema.js';

/** Passkey rows, synchronously, on one connection. */
export class SqlitePasskeys {
  readonly #stmts;
  readonly #audit: SqliteAudit;
  readonly #atomic: (fn: () => void) => void;

  constructor(db: Db, audit: SqliteAudit, atomic: (fn: () => void) => void) {
    this.#audit = audit;
    this.#atomic = atomic;
    this.#stmts = {
      insert: db.prepare(
        'INSERT INTO passkeys (credential_id, owner, public_key, rp_id, counter, transports, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      get: db.prepare('SELECT * FROM passkeys WHERE credential_id = ?'),
      list: db.prepare('SELECT * FROM passkeys WHERE owner = ? ORDER BY seq'),
      remove: db.prepare('DELETE FROM passkeys WHERE owner = ? AND credential_id = ?'),
      removeAll: db.prepare('DELETE FROM passkeys WHERE owner = ?'),
      used: db.prepare('UPDATE passkeys SET counter = ?, last_used_at = ? WHERE credential_id = ?'),
      recorded: db.prepare(`SELECT entry FROM audit WHERE ${RECORDED_PASSKEYS_WHERE} ORDER BY seq`).pluck(),
    };
  }

  add(p: StoredPasskey, audit: AuditEntry): void {
    this.#atomic(() => {
      this.#stmts.insert.run(
        p.credential_id,
        p.owner,
        p.public_key,
        p.rp_id,
        p.counter,
        p.transports === undefined ? null : JSON.stringify(p.transports),
        p.created_at,
      );
      this.#audit.append(audit);
    });
  }

  get(credentialId: string): StoredPasskey | undefined {
    const row = this.#stmts.get.get(credentialId) as PasskeyRow | undefined;
    return row === undefined ? undefined : toPasskey(row);
  }

  list(owner: string): StoredPasskey[] {
    return (this.#stmts.list.all(owner) as PasskeyRow[]).map(toPasskey);
  }

  remove(owner: string, credentialId: string, audit: AuditEntry): boolean {
    let removed = false;
    this.#atomic(() => {
      removed = this.#stmts.remove.run(owner, credentialId).changes > 0;
      if (removed) this.#audit.append(audit);
    });
    return removed;
  }

  /** Removes every passkey of `owner` (`token owner --rotate`: recovery), audited; returns how many. */
  removeAll(owner: string, audit: AuditEntry): number {
    let removed = 0;
    this.#atomic(() => {
      removed = this.#stmts.removeAll.run(owner).changes;
      if (removed > 0) this.#audit.append({ ...audit, detail: { ...audit.detail, removed } });
    });
    return removed;
  }

  used(credentialId: string, counter: number, at: string): void {
    this.#stmts.used.run(counter, at, credentialId);
  }

  /** The chained entries adding or removing passkeys, oldest first (contract 13.3 (v4): PasskeyStore). */
  recorded(): Array<{ event: string; data: Record<string, unknown> }> {
    return recordedOf(this.#stmts.recorded.all() as string[]);
  }
}
