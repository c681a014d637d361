/**
 * `require_passkey` (contract 13.3): the config's own answer to "does approving this command need a passkey
 * assertion?". `true` at the top level covers every command (cues included); a catalog command or an
 * upstream may set `"require_passkey": true` for itself (an upstream's covers every one of its tools).
 *
 * Static, like `commandApprovals`, so what the config itself would let approve without the owner's hand —
 * its `grants` today, its `allow` rules (contract 11, issue 22) at merge — is refused at load.
 */
import type { CatalogEntry } from './catalog.js';
import type { UpstreamConfig } from './upstreams.js';

/** The parts of a config (parsed file or loaded Config) this reads. */
export interface PasskeyConfig {
  require_passkey?: boolean;
  commands: Record<string, Pick<CatalogEntry, 'require_passkey'>>;
  upstreams: Record<string, Pick<UpstreamConfig, 'require_passkey'>>;
}

/**
 * True when approving `commandName` (a catalog name, `ogf.cue`, or `<upstream>__<tool>`) needs a passkey
 * assertion from the approving owner. A name the config does not know needs one only under the top-level
 * `require_passkey: true`.
 */
export function requiresPasskey(config: PasskeyConfig, commandName: string): boolean {
  if (config.require_passkey === true) return true;
  if (Object.hasOwn(config.commands, commandName))
    return config.commands[commandName]?.require_passkey === true;
  const sep = commandName.indexOf('__');
  if (sep < 0) return false;
  const upstream = commandName.slice(0, sep);
  return Object.hasOwn(config.upstreams, upstream) && config.upstreams[upstream]?.require_passkey === true;
}
