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

/** A CEL string literal naming `text` exactly, in either quote style. */
function namesLiterally(when: string, text: string): boolean {
  return when.includes(`'${text}'`) || when.includes(`"${text}"`);
}

/**
 * Why an `allow` rule may not stand beside this config's `require_passkey` (contract 13.3: "an `allow`
 * rule for it, which it forbids"), or undefined. A rule's expression cannot be solved for the commands it
 * matches, so the load refuses what it can see: any `allow` rule under a top-level `true`, and an `allow`
 * rule whose expression names a passkey-required command (or its upstream) as a string literal. At submit
 * the intake never lets a rule approve a passkey-required command whatever the rule says (core/decisions/intake.ts).
 */
export function passkeyAllowRefusal(config: PasskeyConfig, when: string): string | undefined {
  if (config.require_passkey === true)
    return 'an allow rule cannot approve while require_passkey is true (every approval needs a passkey)';
  for (const [name, entry] of Object.entries(config.commands))
    if (entry.require_passkey === true && namesLiterally(when, name))
      return `${name} needs a passkey for each approval (require_passkey), so no allow rule may name it`;
  for (const [name, entry] of Object.entries(config.upstreams))
    if (entry.require_passkey === true && (namesLiterally(when, name) || when.includes(`${name}__`)))
      return `${name}__* needs a passkey for each approval (require_passkey), so no allow rule may name it`;
  return undefined;
}
