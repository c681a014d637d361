/** An OAuth connection row (contract 15): NULL `revoked_at` while it is live. */
import type { OAuthConnection } from '../../core/index.js';

export interface ConnectionRow {
  id: string;
  client_name: string;
  client_id: string;
  client_host: string;
  redirect_host: string;
  connected_at: string;
  last_used_at: string;
  revoked_at: string | null;
}

export function toConnection(r: ConnectionRow): OAuthConnection {
  const { revoked_at, ...rest } = r;
  const c: OAuthConnection = { ...rest };
  if (revoked_at !== null) c.revoked_at = revoked_at;
  return c;
}
