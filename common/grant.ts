/**
 * A grant as owners see it (contracts.md section 8): the owner protocol's shape, which the daemon stores and
 * sends and the panel shows. Its rules (matching, use counts, expiry) are the daemon's (daemon/core/model/grant-rules.ts).
 */

export type GrantState = 'live' | 'revoked' | 'expired' | 'spent';

/** A grant as owners see it (contract 8). Fields that do not apply are absent, never null. */
export interface Grant {
  id: string;
  command: string;
  /** One client name, or `*` for every client. */
  client: string;
  /** Present: only requests with JSON-equal arguments match. Absent: any arguments. */
  args?: Record<string, unknown>;
  /** Contract 11: instead of `args`, a CEL expression: the requests for which it is true match. */
  when?: string;
  state: GrantState;
  source: 'owner' | 'config';
  /**
   * Contract 16 (v4): the node whose commands it approves — a node name, or `*` on purpose for every node —
   * since one command name may run different programs on different nodes. Owner grants name the node of
   * the card or terminal they were made from unless the owner names another; config grants their own
   * node (each node's config). Absent only on a grant stored before v4 and not yet adopted (the store
   * gives it a node at start: docs/fleet.md); on a shared database such a grant matches nothing.
   */
  node?: string;
  created_by: string;
  created_at: string;
  expires_at?: string;
  uses_left?: number;
  note?: string;
  ended_at?: string;
}
