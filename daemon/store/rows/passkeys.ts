/** A passkey row (contract 13.3): JSON `transports`, NULL for what is absent. */
import type { StoredPasskey } from '../../core/index.js';

export interface PasskeyRow {
  credential_id: string;
  owner: string;
  public_key: string;
  rp_id: string;
  counter: number;
  transports: string | null;
  created_at: string;
  last_used_at: string | null;
}

export function toPasskey(row: PasskeyRow): StoredPasskey {
  const p: StoredPasskey = {
    credential_id: row.credential_id,
    owner: row.owner,
    public_key: row.public_key,
    rp_id: row.rp_id,
    counter: row.counter,
    created_at: row.created_at,
  };
  if (row.transports !== null) p.transports = JSON.parse(row.transports) as string[];
  if (row.last_used_at !== null) p.last_used_at = row.last_used_at;
  return p;
}

/** The chained entries' events and data, in the order given. */
export function recordedOf(
  entries: readonly string[],
): Array<{ event: string; data: Record<string, unknown> }> {
  return entries.map((text) => {
    const e = JSON.parse(text) as { event: string; data: Record<string, unknown> };
    return { event: e.event, data: e.data };
  });
}
