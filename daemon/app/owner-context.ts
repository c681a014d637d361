/**
 * What the owner and MCP edges are handed (owner/context.ts `OwnerContext`): the broker, the sources, the
 * kinds, the tokens, OAuth, passkeys, push, the running daemon's doctor and reload, the first-run help.
 * `config` is the config in force (live-config.ts): a reload changes what the edges read from then on.
 */
import type { Logger } from '../base/index.js';
import { VERSION } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { Broker } from '../core/index.js';
import type { DataDir } from '../datadir/index.js';
import type { Origins } from '../http/index.js';
import { KINDS, planRevert } from '../kinds/index.js';
import type { OAuthServer } from '../oauth/index.js';
import { createSetupFeed, type OwnerContext, type ReloadOutcome, type RulesDesk } from '../owner/index.js';
import type { DaemonStore } from '../store/index.js';
import type { Tokens } from '../tokens/index.js';
import type { Source } from '../tool-kind/index.js';
import type { UpstreamRegistry } from '../upstreams/index.js';
import { diagnose } from './diagnose.js';
import type { LiveConfig } from './live-config.js';
import type { OwnerNotifications } from './owner-notifications.js';

export function ownerContext(o: {
  live: LiveConfig;
  paths: DataDir;
  store: DaemonStore;
  broker: Broker;
  sources: Source[];
  tokens: Tokens;
  origins: Origins;
  oauth: OAuthServer | undefined;
  notifications: OwnerNotifications;
  upstreams: UpstreamRegistry;
  /** Calls `l` when any source's tool set may have changed. */
  onToolsChange: (l: () => void) => () => void;
  reload: () => Promise<ReloadOutcome>;
  /** Contract 18: the rules, and the owners' changes of theirs. */
  desk: RulesDesk;
  env: NodeJS.ProcessEnv;
  log: Logger;
}): OwnerContext {
  const { live, oauth, upstreams } = o;
  const url = () => o.origins.url();
  return {
    ...(oauth !== undefined
      ? {
          oauth,
          oauthBearer: {
            clientFor: (t: string) => oauth.connections.clientFor(t),
            challenge: (given: boolean) => oauth.challenge(given),
          },
        }
      : {}),
    get config(): Config {
      return live.current;
    },
    paths: o.paths,
    broker: o.broker,
    // The owner edge asks the kinds through this, never through a global (issue 37 item 2).
    kinds: KINDS,
    sources: o.sources,
    tokens: o.tokens,
    origins: o.origins,
    log: o.log,
    version: VERSION,
    passkeys: o.store.passkeys,
    push: o.notifications.push,
    actions: o.notifications.actions,
    // Contract 17: the terminal's doctor and notify test judge this daemon's environment (diagnose.ts).
    diagnose: diagnose({ config: () => live.current, env: o.env, upstreams, base: url }),
    reload: o.reload,
    rules: o.desk,
    // Contract 20: a revert checks the file through the upstream's preview connection (kinds/index.ts).
    revert: (c) => planRevert(c, { registry: upstreams, now: () => Date.now() }),
    // Contract 19: the card's link for a URL-mode elicitation, and the kind's summary without argument values.
    ownerCard: (c) => ({
      url: `${(live.current.public_url ?? url()).replace(/\/$/, '')}/#${c.id}`,
      message: `The owner must approve: ${KINDS.of(c.tool).bareSummary(c)}`,
    }),
    setup: createSetupFeed({
      get config(): Config {
        return live.current;
      },
      sources: o.sources,
      url,
      // An upstream's state (the registry) and the tools it exposes (compiled in the background after it
      // lists them, kinds/upstream/schema-compiler.ts) change at different moments: the help follows both.
      onUpstreamChange: (l) => {
        const offState = upstreams.onChange(l);
        const offTools = o.onToolsChange(l);
        return () => {
          offState();
          offTools();
        };
      },
      env: o.env,
    }),
  };
}
