/**
 * The one catalog of codes (contracts.md sections 2, 3.2, 4 and 5). Every code a client, an owner or a
 * bridge peer can see is listed here once; `test/error-catalog.test.ts` checks that docs/errors.md and
 * the contract agree with it, so no code lives in one place only. It lives in common/ because the codes
 * are part of the wire: the daemon sends them, the panel shows a `reply`'s code (owner-messages.ts).
 */

/** `reason` codes of a `denied` command (status DENIED). */
export const DENY_REASONS = [
  'OwnerDenied',
  'ReviewExpired',
  'CancelledByCaller',
  'OgfBridgeNotConfigured',
  'SessionSecretNotRetained',
  // v3, contract 11: a `deny` rule of the owner's config decided at submit (daemon/rules/, core/decisions/intake.ts).
  'PolicyDenied',
] as const;
export type DenyReason = (typeof DENY_REASONS)[number];

/** `reason` codes of a `failed` command (status ERROR): the effect certainly did not happen. */
export const FAIL_REASONS = [
  'LaunchFailed',
  'NonZeroExit',
  'BridgeUnreachable',
  'BridgeRejected',
  'AvatarNotReady',
  'CueExpired',
  'SessionFileRejected',
  'SessionSecretNotRetained',
  // v2, contract 7: an upstream MCP server's answers (the upstream executor produces them).
  'UpstreamUnavailable',
  'UpstreamRejected',
  'UpstreamToolError',
] as const;
export type FailReason = (typeof FAIL_REASONS)[number];

/** `reason` codes of an `unknown` command (status UNKNOWN): the effect may have happened. */
export const UNKNOWN_REASONS = [
  'DeliveryUnconfirmed',
  'KilledAtDeadline',
  'DaemonRestarted',
  // v2, contract 7: an upstream answered a JSON-RPC error that does not prove the call was refused.
  'UpstreamError',
] as const;
export type UnknownReason = (typeof UNKNOWN_REASONS)[number];

/** Tool-level MCP error codes (contract 3.2): the text of an `isError` result starts with one of them. */
export const TOOL_ERROR_CODES = [
  'InvalidArguments',
  'UnknownCommand',
  'UnknownPendingId',
  'RequestIdReused',
  // v2, contract 1.3/3.2: the client's (or everyone's) PENDING commands are at their cap.
  'TooManyPending',
  // v3, contract 16: the shared database is out of reach, so nothing can be queued (PostgreSQL: issue 27).
  'Unavailable',
] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

/** Owner WebSocket reply codes (contract 5). */
export const OWNER_ERROR_CODES = [
  'AlreadyDecided',
  'VersionConflict',
  'NotFound',
  'NotReconcilable',
  'BadMessage',
  // v2, contract 5/8/9: quorum (a second approval by the same owner) and grants.
  'AlreadyApproved',
  'NotGrantable',
  'NotRevocable',
  // v3, contract 13.3: the command needs a valid passkey assertion from the approving owner.
  'PasskeyRequired',
  // v4, contract 20: the write cannot be taken back (the file changed since, a new file, nothing kept).
  'NotRevertible',
] as const;
export type OwnerErrorCode = (typeof OWNER_ERROR_CODES)[number];

/** Codes the broker itself returns from an action; a subset of what the owner and MCP edges show. */
export const BROKER_ERROR_CODES = [
  'AlreadyDecided',
  'VersionConflict',
  'NotFound',
  'NotReconcilable',
  'RequestIdReused',
  'AlreadyApproved',
  'NotGrantable',
  'NotRevocable',
  'PasskeyRequired',
] as const satisfies ReadonlyArray<OwnerErrorCode | ToolErrorCode>;
export type BrokerErrorCode = (typeof BROKER_ERROR_CODES)[number];

/**
 * Why the pure lifecycle refused an event (core/model/lifecycle.ts). The first three reach owners as they are;
 * the others are the broker's own mistakes (an event in a state that cannot take it), never shown.
 */
export const REJECTION_CODES = [
  'AlreadyDecided',
  'AlreadyApproved',
  'NotReconcilable',
  'NotStartable',
  'NotRunning',
  'NothingToRecover',
  'NothingToPrune',
  'UnknownEvent',
] as const;
export type RejectionCode = (typeof REJECTION_CODES)[number];
