/**
 * Every kind of tool the daemon knows, one line each (issue 20 item 1): a new kind is its folder
 * (kinds/<kind>/: source, executor, fields, kind, module) plus its line here and its renderer's line in the
 * panel (owner-ui/panel/kinds.ts: the panel imports no daemon code). The order is the order of their fields in
 * a stored command, of their tools in `tools/list` and of their parts of `list_commands`.
 */

import type { Config } from '../config/index.js';
import type { BrokerApi, Command } from '../core/index.js';
import type { Kind, KindModule, KindWork, Source, SourceWorld } from '../tool-kind/index.js';
import { catalog } from './catalog/index.js';
import { cue } from './cue/index.js';
import { type KindRegistry, kindRegistry } from './registry.js';
import { upstream } from './upstream/index.js';

/** Contract 20: the owner's revert of an upstream file write (the only kind that writes files it previews). */
export { planRevert } from './upstream/index.js';

export type { Kind, KindRegistry, KindWork, SourceWorld };

const MODULES: readonly KindModule[] = [catalog, cue, upstream];

export const KINDS: KindRegistry = kindRegistry(MODULES.map((m) => m.kind));

/** Every kind's source, built from the daemon's world, in registration order. */
export function createSources(world: SourceWorld): Source[] {
  return MODULES.map((m) => m.source(world));
}

/** Whether some kind's work will make a preview for `command` (its waiting notice waits for it: 13.1). */
export function awaitsPreview(config: Config, command: Command): boolean {
  return MODULES.some((m) => m.awaitsPreview?.(config, command) === true);
}

/** Every kind's background work (previews of upstream calls: contract 12), started in registration order. */
export function startKindWork(world: SourceWorld, broker: BrokerApi): KindWork[] {
  return MODULES.flatMap((m) => m.work?.(world, broker) ?? []);
}
