/**
 * The owner panel's first-run help (issue 19 finding 5): the MCP URL, the exact command that prints the
 * token, what the AI can do right now (catalog commands, each upstream connected or not with its exposed
 * tool count, the avatar bridge on or off) and where the docs are. The hub sends it in `hello.setup` and,
 * when it changes, as a `setup` frame (common/owner-messages.ts). It never holds a token.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SetupInfo } from '../../common/owner-messages.js';
import type { Config } from '../config/index.js';
import { currentInvocation, mcpTokenFixed, tokenMcpCommand } from '../config/index.js';
import type { Source } from '../tool-kind/index.js';

/** The current setup, and a way to hear that it may have changed. */
export interface SetupFeed {
  current(): SetupInfo;
  /** Calls `listener` after something in it may have changed; returns the function that stops it. */
  onChange(listener: () => void): () => void;
}

/** At most one `setup` frame per this long: an upstream flapping or listing in a loop costs owners little. */
const SETUP_COALESCE_MS = 250;

/** README.md and docs/clients.md of this package, absolute when found (from dist/ or from the sources). */
function docPaths(): string[] {
  const here = import.meta.dirname;
  for (const root of [resolve(here, '..', '..', '..'), resolve(here, '..', '..')]) {
    if (existsSync(join(root, 'docs', 'clients.md')))
      return [join(root, 'README.md'), join(root, 'docs', 'clients.md')];
  }
  return ['README.md', 'docs/clients.md'];
}

export interface SetupDeps {
  config: Config;
  sources: readonly Source[];
  /** The daemon's own base URL (`http://HOST:PORT`), known once it listens. */
  url: () => string;
  /** Upstream state changes (the registry's onChange). */
  onUpstreamChange: (listener: () => void) => () => void;
  env?: NodeJS.ProcessEnv;
}

/** The upstream source's part of list_commands: `[{name, connected, tools: [exposed names]}]`. */
function upstreamsOf(sources: readonly Source[]): SetupInfo['upstreams'] {
  for (const s of sources) {
    if (s.kind !== 'upstream') continue;
    const parts = (s.listing?.().fields.upstreams ?? []) as Array<{
      name: string;
      connected: boolean;
      tools: readonly string[];
    }>;
    return parts.map((u) => ({ name: u.name, connected: u.connected, tools: u.tools.length }));
  }
  return [];
}

export function createSetupFeed(deps: SetupDeps): SetupFeed {
  const docs = docPaths();
  const inv = currentInvocation(deps.env);
  const token = tokenMcpCommand(deps.config.dataDir, inv);
  const fixed = mcpTokenFixed(inv.env);
  return {
    current() {
      const info: SetupInfo = {
        mcp_url: `${deps.url()}/mcp`,
        token_command: token,
        commands: Object.keys(deps.config.commands),
        upstreams: upstreamsOf(deps.sources),
        ogf_bridge_configured: deps.config.ogf_bridge !== null,
        docs,
      };
      if (fixed) info.token_fixed_by_env = true;
      if (deps.config.public_url !== null)
        info.public_mcp_url = `${deps.config.public_url.replace(/\/$/, '')}/mcp`;
      return info;
    },
    onChange: deps.onUpstreamChange,
  };
}

/**
 * Sends `{"type":"setup"}` through `send` after the feed changed, coalesced (SETUP_COALESCE_MS) and only
 * when it differs from what was last sent. Returns the function that stops it.
 */
export function watchSetup(feed: SetupFeed, send: (text: string) => void): () => void {
  let last = JSON.stringify(feed.current());
  let timer: NodeJS.Timeout | undefined;
  const off = feed.onChange(() => {
    timer ??= setTimeout(() => {
      timer = undefined;
      const now = JSON.stringify(feed.current());
      if (now === last) return;
      last = now;
      send(`{"type":"setup","setup":${now}}`);
    }, SETUP_COALESCE_MS);
    timer.unref();
  });
  return () => {
    off();
    if (timer !== undefined) clearTimeout(timer);
  };
}
