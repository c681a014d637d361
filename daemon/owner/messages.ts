/**
 * What the daemon sends an owner over `/owner/ws` (contracts.md 5), as types. Kept free of zod and of
 * Node APIs because the browser panel (`owner-ui/`) imports these types too.
 */

import type { Grant } from '../core/grants.js';
import type { View } from '../core/view.js';
import type { OwnerErrorCode } from '../errors.js';

export const PROTOCOL = 'ogf-broker-owner/1';

/**
 * WebSocket subprotocols of the panel (contract 5 v2): it offers `ogf-owner.<panel key>` to authenticate,
 * together with the bare `ogf-owner`, which the daemon then selects so the key is not echoed back.
 */
export const OWNER_SUBPROTOCOL = 'ogf-owner';
export const PANEL_KEY_PREFIX = `${OWNER_SUBPROTOCOL}.`;
export type OwnerSubprotocol = typeof OWNER_SUBPROTOCOL;

/** The codes a `reply` may carry. */
export type ReplyCode = OwnerErrorCode;

export interface HelloMessage {
  type: 'hello';
  protocol: typeof PROTOCOL;
  server_time: string;
  /** The signed-in owner's name (contract 5 v2). */
  owner: string;
}
export interface SnapshotMessage {
  type: 'snapshot';
  commands: View[];
  /** Every live grant (contract 5 v2). */
  grants: Grant[];
}
/** A grant was created, used, revoked, expired or spent (contract 5 v2), in commit order. */
export interface GrantUpsertMessage {
  type: 'grant_upsert';
  grant: Grant;
}
/** The answer to `grants` (not in contract 5: `grant list --all`): newest first. */
export interface GrantsMessage {
  type: 'grants';
  req_id: string;
  grants: Grant[];
}
export interface UpsertMessage {
  type: 'upsert';
  command: View;
}
export type ReplyMessage =
  | { type: 'reply'; req_id: string | null; ok: true; grant?: Grant }
  | { type: 'reply'; req_id: string | null; ok: false; error: { code: ReplyCode; message: string } };
export interface HistoryMessage {
  type: 'history';
  req_id: string;
  commands: View[];
}

/** Everything the server sends an owner. */
export type ServerMessage =
  | HelloMessage
  | SnapshotMessage
  | UpsertMessage
  | GrantUpsertMessage
  | ReplyMessage
  | HistoryMessage
  | GrantsMessage;
export type { Grant, View };
