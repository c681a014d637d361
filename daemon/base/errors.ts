/**
 * The daemon's local errors. The catalog of codes every client, owner or bridge peer can see is common/codes.ts
 * (the panel shows them too); it is re-exported here so the daemon keeps one place to import codes from.
 */

export type {
  BrokerErrorCode,
  DenyReason,
  FailReason,
  OwnerErrorCode,
  RejectionCode,
  ToolErrorCode,
  UnknownReason,
} from '../../common/codes.js';
export {
  BROKER_ERROR_CODES,
  DENY_REASONS,
  FAIL_REASONS,
  OWNER_ERROR_CODES,
  REJECTION_CODES,
  TOOL_ERROR_CODES,
  UNKNOWN_REASONS,
} from '../../common/codes.js';

/**
 * A local error with a stable code and an optional cause. Used inside the daemon (config, data dir, start-up);
 * what goes on the wire is built by each edge from `code` and `message`.
 */
export class BrokerError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BrokerError';
    this.code = code;
  }
}

/** A usage or configuration error: the CLI prints its one-line message and exits 2 (contract 1.1). */
export class UsageError extends BrokerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UsageError', message, options);
    this.name = 'UsageError';
  }
}
