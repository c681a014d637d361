/**
 * What a kind's source is built from (issue 20 item 1): the daemon's world, handed to every kind the same
 * way, so the composition root builds the sources from the registered kinds (kinds/index.ts) without
 * naming one. A kind takes what it needs and ignores the rest.
 */
import type { Logger } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { BrokerApi, Command } from '../core/index.js';
import type { DataDir } from '../datadir/index.js';
import type { Confiner } from '../sandbox/index.js';
import type { UpstreamRegistry } from '../upstreams/index.js';
import type { Kind } from './kind.js';
import type { Source } from './source.js';

export interface SourceWorld {
  config: Config;
  paths: DataDir;
  log: Logger;
  /** The connections to the MCP servers behind the gate (contract 7), opened by the daemon. */
  upstreams: UpstreamRegistry;
  /** Contract 21: starts a process under the confinement the config gives it (daemon/sandbox/). */
  confiner: Confiner;
  /** The config in force now (contract 17: a reload replaces it); `config` is the one the daemon started with. */
  current(): Config;
}

/** Work a kind does beside its commands while the daemon runs (contract 12: previews). */
export interface KindWork {
  close(): void;
}

/** A kind as registered: its policy for the core, how its source is built, and its background work. */
export interface KindModule {
  readonly kind: Kind;
  source(world: SourceWorld): Source;
  /** Started once the broker has recovered and the daemon listens; undefined when there is none. */
  work?(world: SourceWorld, broker: BrokerApi): KindWork | undefined;
  /** Whether its work will make a preview for `command` under `config` (contract 12); absent: never. */
  awaitsPreview?(config: Config, command: Command): boolean;
}
