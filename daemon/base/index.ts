/**
 * What every folder may use and which uses nothing of the daemon (issue 20 item 4): the error catalog
 * (contracts.md 3.2), the logger, the clock, the character rules, owner patterns (RE2), strict JSON, flag
 * scanning and the package version.
 */
export { parseFlags, scanFlags, stringFlag, stringsFlag } from './args.js';
export { type Clock, iso, systemClock } from './clock.js';
export {
  BrokerError,
  type BrokerErrorCode,
  DENY_REASONS,
  type DenyReason,
  FAIL_REASONS,
  type FailReason,
  type OwnerErrorCode,
  type RejectionCode,
  type ToolErrorCode,
  UNKNOWN_REASONS,
  type UnknownReason,
  UsageError,
} from './errors.js';
export { duplicateKeyPath } from './json-duplicates.js';
export { createLogger, type Logger, silentLogger } from './log.js';
export {
  isProtocolError,
  isSdkError,
  isSdkHttpError,
  mcpClient,
  mcpClientIfLoaded,
  mcpClientLoaded,
} from './mcp-client.js';
export { onFirstUse } from './on-first-use.js';
export { anchorPattern, compilePattern, type OwnerPattern } from './patterns.js';
export { sayError } from './say.js';
export {
  characterCount,
  charactersAccepted,
  escapeForTerminal,
  hasForbiddenCharacter,
  quoteArg,
} from './text-rules.js';
export { usePrivateUmask, withOwnerUmask } from './umask.js';
export { VERSION } from './version.js';
