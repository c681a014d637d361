/**
 * Contract 13.3: the owners who have no passkey while the config requires one somewhere — until they add
 * one, a token session may add the first (docs/security.md), so `start` says so. Empty when no command
 * requires a passkey.
 */
import type { Config } from '../config/index.js';
import type { DaemonStore } from '../store/index.js';

export async function ownersWithoutPasskey(config: Config, store: DaemonStore): Promise<string[]> {
  const required =
    config.require_passkey ||
    Object.values(config.commands).some((e) => e.require_passkey === true) ||
    Object.values(config.upstreams).some((u) => u.require_passkey === true);
  if (!required) return [];
  const names = [...store.owners().keys()];
  const counts = await Promise.all(names.map((n) => store.passkeys.list(n)));
  return names.filter((_, i) => counts[i]!.length === 0);
}
