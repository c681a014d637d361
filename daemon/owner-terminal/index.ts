/**
 * The terminal's owner client, its public face (contracts.md 1.1, 5, 9): the commands that act as owner
 * `owner` (list, approve, deny, reconcile, grant, doctor, notify test, reload) connect to the running
 * daemon over the owner WebSocket through here, and print what it answers. Kept apart from the owner edge
 * (daemon/owner/), whose hub, sessions and tokens load SQLite: a terminal `approve` loads the WebSocket
 * client, its formatting and the wire types (common/owner-messages.ts) alone.
 */

export { OWNER_CLIENT_MAX_PAYLOAD, OwnerClient, OwnerConnectError } from './client.js';
export { formatGrant, formatView, type KindLines, showsNodes } from './format.js';
export { askRunningDaemon, withOwnerClient } from './terminal.js';
