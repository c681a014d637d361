/**
 * The configuration (contracts.md 1.1–1.3): one schema per section (catalog, upstreams, grants), the
 * file's schema that merges them, and the loader that applies flags and environment into one frozen Config.
 */

export { defaultDataDir, resolveDataDir } from '../datadir/index.js';
export type { CatalogEntry, ParamSpec } from './catalog.js';
export { describeZodError } from './fields.js';
export { type BridgeConfig, fileSchema, OUTPUT_LIMIT_MAX } from './file.js';
export { type ConfigGrantEntry, commandApprovals } from './grants.js';
export { type Config, type ConfigFlags, loadConfig } from './load.js';
export { NODE_NAME_RE, ownsCommand } from './node.js';
export {
  CHANNEL_ID_RE,
  type EmailChannelConfig,
  isHttpUrl,
  isSmtpUrl,
  NOTIFY_EVENTS,
  type NotifyChannelConfig,
  type NotifyEventName,
  type WebhookChannelConfig,
  type WebhookFormat,
} from './notify.js';
export type { OAuthConfig } from './oauth.js';
export { type PasskeyConfig, requiresPasskey } from './passkey.js';
export type { DryRunSpec, FileDiffSpec, PreviewPreset, PreviewSpec } from './previews.js';
export { type ConfigRecord, configRecord, readRecord, weakenings } from './record.js';
export type { RuleConfigEntry } from './rules.js';
export { type Confinement, describeConfinement } from './sandbox.js';
export {
  brokerProgram,
  currentInvocation,
  mcpTokenFixed,
  mcpTokenLine,
  shellQuote,
  tokenMcpCommand,
} from './self-command.js';
export type { UpstreamConfig } from './upstreams.js';
